// `epsim bounds`: the seeds' ledgers. Without a subcommand it prints all four
// at their defaults; `epsim bounds train-step|comm|step-budget|ep-comm
// [options] [--json]` prints one with the seed's options.
#include <algorithm>
#include <iostream>
#include <memory>

#include "core/json_output.hpp"
#include "core/error.hpp"
#include "ledgers/report.hpp"
#include "tools/command.hpp"
#include "tools/option_checks.hpp"

namespace epsim::tools {

namespace {
struct BoundsState {
  bool json = false;
  ledgers::TrainStepOptions train;
  ledgers::CommLedgerOptions comm;
  ledgers::StepBudgetOptions budget;
  ledgers::EpCommOptions ep;
  CLI::App* train_app = nullptr;
  CLI::App* comm_app = nullptr;
  CLI::App* budget_app = nullptr;
  CLI::App* ep_app = nullptr;
};

void add_train_step(CLI::App& bounds, BoundsState& s) {
  CLI::App* app = bounds.add_subcommand("train-step", "seed 000: one MoE layer's training-step ledger (five sections)");
  ledgers::TrainStepOptions& o = s.train;
  app->add_option("--tokens", o.tokens, "tokens per rank T")->check(integer_at_least(1))->capture_default_str();
  app->add_option("--hidden", o.hidden, "model width d")->check(integer_at_least(1))->capture_default_str();
  app->add_option("--topk", o.topk, "experts per token k")->check(integer_at_least(1))->capture_default_str();
  app->add_option("--experts", o.experts, "routed experts (divisible by 128)")
      ->check(integer_at_least(1))
      ->capture_default_str();
  app->add_option("--ffn", o.ffn, "expert intermediate size")->check(integer_at_least(1))->capture_default_str();
  app->add_option("--dispatch-bytes", o.dispatch_bytes, "bytes per dispatched element (1: FP8)")
      ->check(integer_at_least(1))
      ->capture_default_str();
  app->add_option("--combine-bytes", o.combine_bytes, "bytes per combined element (2: BF16)")
      ->check(integer_at_least(1))
      ->capture_default_str();
  app->add_option("--expert-align", o.expert_align, "rows per expert round up to this (text only)")
      ->check(integer_at_least(1))
      ->capture_default_str();
  app->add_flag("--json", s.json, "print JSON instead of text");
  s.train_app = app;
}

void add_comm(CLI::App& bounds, BoundsState& s) {
  CLI::App* app = bounds.add_subcommand("comm", "seed 001: dispatch/combine bytes per rank for EP 8..128");
  ledgers::CommLedgerOptions& o = s.comm;
  app->add_option("--hidden", o.hidden, "model width")->check(integer_at_least(1))->capture_default_str();
  app->add_option("--topk", o.topk, "experts per token")->check(integer_at_least(1))->capture_default_str();
  app->add_option("--experts", o.experts, "routed experts (divisible by 128)")
      ->check(integer_at_least(1))
      ->capture_default_str();
  app->add_option("--tokens", o.tokens, "tokens per rank T")->check(integer_at_least(1))->capture_default_str();
  app->add_option("--layers", o.layers, "layers the summary aggregates (61 for DeepSeek-V3)")
      ->check(integer_at_least(1))
      ->capture_default_str();
  app->add_flag("--bf16-dispatch", o.bf16_dispatch, "dispatch in BF16 too (no scale factors)");
  app->add_flag("--json", s.json, "print JSON instead of text");
  s.comm_app = app;
}

void add_step_budget(CLI::App& bounds, BoundsState& s) {
  CLI::App* app = bounds.add_subcommand("step-budget", "seed 002: training step and inference phase bounds of a dense decoder");
  ledgers::StepBudgetOptions& o = s.budget;
  app->add_option("--seq-len", o.seq_len, "sequence length (batch 1)")
      ->check(integer_at_least(1))
      ->capture_default_str();
  app->add_option("--layers", o.layers, "decoder layers")->check(integer_at_least(1))->capture_default_str();
  app->add_option("--hidden", o.hidden, "model width")->check(integer_at_least(1))->capture_default_str();
  app->add_option("--ffn", o.ffn, "MLP intermediate size")->check(integer_at_least(1))->capture_default_str();
  app->add_option("--params", o.params, "parameters (optimizer and all-reduce)")
      ->check(number_in(1, 1e15))
      ->capture_default_str();
  app->add_option("--world", o.world, "data-parallel ranks N")->check(integer_at_least(1))->capture_default_str();
  app->add_option("--peak-tflops", o.peak_tflops, "peak TFLOPS (calibrated default)")
      ->check(physical_number(Physical::kFlopRate, 1e12))
      ->capture_default_str();
  app->add_option("--bandwidth-gbps", o.bandwidth_gbps, "HBM bandwidth in GB/s (calibrated default)")
      ->check(physical_number(Physical::kBandwidth, 1e9))
      ->capture_default_str();
  app->add_option("--head-dim", o.head_dim, "attention head width")
      ->check(integer_at_least(1))
      ->capture_default_str();
  app->add_option("--kv-heads", o.kv_heads, "GQA key/value heads")->check(integer_at_least(1))->capture_default_str();
  app->add_flag("--json", s.json, "print JSON instead of text");
  s.budget_app = app;
}

void add_ep_comm(CLI::App& bounds, BoundsState& s) {
  CLI::App* app = bounds.add_subcommand("ep-comm", "seed 003 part B: EP all-to-all bytes and times");
  ledgers::EpCommOptions& o = s.ep;
  app->add_option("--tokens", o.tokens, "tokens in the batch")->check(integer_at_least(1))->capture_default_str();
  app->add_option("--top-k", o.top_k, "experts per token")->check(integer_at_least(1))->capture_default_str();
  app->add_option("--d-model", o.d_model, "model width")->check(integer_at_least(1))->capture_default_str();
  app->add_option("--bytes", o.bytes, "bytes per element")->check(integer_at_least(1))->capture_default_str();
  app->add_flag("--json", s.json, "print JSON instead of text");
  s.ep_app = app;
}

// One ledger, as text or JSON; its JSON form checks every figure is finite,
// for the text too.
template <class Ledger>
std::string print(const Ledger& ledger, bool json) {
  const std::string checked = dump_checked(ledgers::to_json(ledger), "bounds");
  return json ? checked : ledgers::render_text(ledger);
}

int run(const BoundsState& s) {
  if (s.train_app->parsed()) {
    std::cout << print(ledgers::train_step(s.train), s.json);
  } else if (s.comm_app->parsed()) {
    std::cout << print(ledgers::comm_ledger(s.comm), s.json);
  } else if (s.budget_app->parsed()) {
    std::cout << print(ledgers::step_budget(s.budget), s.json);
  } else if (s.ep_app->parsed()) {
    std::cout << print(ledgers::ep_comm(s.ep), s.json);
  } else {
    // All four at the seeds' defaults, in seed order.
    ledgers::TrainStep step = ledgers::train_step({});
    ledgers::CommLedger ledger = ledgers::comm_ledger({});
    ledgers::StepBudget budget = ledgers::step_budget({});
    ledgers::EpComm comm = ledgers::ep_comm({});
    ledgers::Json all;
    all["train_step"] = ledgers::to_json(step);
    all["comm_ledger"] = ledgers::to_json(ledger);
    all["step_budget"] = ledgers::to_json(budget);
    all["ep_comm"] = ledgers::to_json(comm);
    const std::string checked = dump_checked(all, "bounds");
    if (s.json) {
      std::cout << checked;
    } else {
      std::cout << ledgers::render_text(step) << "\n"
                << ledgers::render_text(ledger) << "\n"
                << ledgers::render_text(budget) << "\n"
                << ledgers::render_text(comm);
    }
  }
  return 0;
}

// The ledgers name a bad field by its key ("dispatch_bytes"); each key's
// option is the key with dashes ("--dispatch-bytes").
int run_naming_options(const BoundsState& s) {
  try {
    return run(s);
  } catch (const InputError& e) {
    if (!e.where().file.empty() || e.key().empty()) throw;
    std::string option = "--" + e.key();
    std::replace(option.begin(), option.end(), '_', '-');
    throw option_error(option, e.problem());
  }
}
}  // namespace

Command add_bounds_command(CLI::App& epsim) {
  auto state = std::make_shared<BoundsState>();
  CLI::App* bounds = epsim.add_subcommand(
      "bounds", "the seeds' closed-form ledgers, each figure next to its formula and source");
  bounds->require_subcommand(0, 1);
  bounds->add_flag("--json", state->json, "print JSON instead of text");
  add_train_step(*bounds, *state);
  add_comm(*bounds, *state);
  add_step_budget(*bounds, *state);
  add_ep_comm(*bounds, *state);
  return Command{bounds, [state] { return run_naming_options(*state); }};
}

}  // namespace epsim::tools
