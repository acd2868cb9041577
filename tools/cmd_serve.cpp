// `epsim serve --platform P --workload W [--set k=v]... [--batches 8,16,...]
//   [--ep-list 72,144,...] [--tpot 50ms | --ttft 2s] [-j N] [--json]`: a
// serving workload's step at several batches per rank, throughput against
// TPOT (decode) or TTFT (prefill), and the batch with the most tokens/s per
// NPU within the limit; with --ep-list, the same per EP layout and the
// layout that serves most (docs/serving.md; tools/plot_serving.py plots the
// JSON).
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>

#include "app/serving_curve.hpp"
#include "app/serving_layouts.hpp"
#include "core/units.hpp"
#include "tools/command.hpp"
#include "tools/option_checks.hpp"
#include "tools/run_request.hpp"

namespace epsim::tools {

namespace {

struct ServeState {
  RunOptions options;
  std::vector<std::string> batches;
  std::vector<std::string> eps;
  std::vector<std::string> micro_batches;
  std::string tpot;
  std::string ttft;
  std::optional<double> traffic;
  int jobs = 1;
  bool json = false;
};

// A latency limit: a time such as "50ms", above 0 and at most an hour.
CLI::Validator latency() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        try {
          const double s = parse_quantity(text, Quantity::kTime);
          if (!(s > 0) || s > 3600) return "expected a time in (0, 1 h], got \"" + text + "\"";
        } catch (const std::invalid_argument& e) {
          return e.what();
        }
        return "";
      },
      "TIME");
}

int serve(const ServeState& s) {
  app::ServingCurveRequest request;
  request.base = to_request(s.options);
  for (const std::string& b : list_items(s.batches)) request.batches.push_back(std::stoll(b));
  if (!s.tpot.empty()) request.latency_limit_s = parse_quantity(s.tpot, Quantity::kTime);
  if (!s.ttft.empty()) request.latency_limit_s = parse_quantity(s.ttft, Quantity::kTime);
  request.jobs = s.jobs;
  for (const std::string& m : list_items(s.micro_batches)) request.micro_batches.push_back(std::stoi(m));
  request.traffic_tokens_per_s = s.traffic;
  if (s.traffic && s.tpot.empty() && s.ttft.empty())
    throw option_error("--traffic", "a pool is sized at the batch chosen within a latency limit: add --tpot (decode) "
                                    "or --ttft (prefill)");
  if (!s.eps.empty()) app::refuse_sets_a_layout_search_makes(request.base);
  const workloads::WorkloadSpec w = app::load_serving_workload(request.base);
  if (!s.tpot.empty() && !w.decoding())
    throw option_error("--tpot", "a prefill step has no TPOT; limit its TTFT with --ttft");
  if (!s.ttft.empty() && w.decoding())
    throw option_error("--ttft", "a decode step's latency is its TPOT; limit it with --tpot");
  if (!s.eps.empty()) {
    std::vector<int> eps;
    for (const std::string& e : list_items(s.eps)) eps.push_back(std::stoi(e));
    const app::ServingLayoutSearch search = app::serving_layout_search(request, eps);
    std::cout << (s.json ? app::format_serving_layouts_json(search, request.base)
                         : app::format_serving_layouts(search, request.base));
    return 0;
  }
  const app::ServingCurve curve = app::serving_curve(request);
  std::cout << (s.json ? app::format_serving_curve_json(curve, request.base)
                       : app::format_serving_curve(curve, request.base));
  return 0;
}

}  // namespace

Command add_serve_command(CLI::App& epsim) {
  auto state = std::make_shared<ServeState>();
  CLI::App* cmd = epsim.add_subcommand(
      "serve", "a serving workload's step at several batches: throughput against TPOT or TTFT, the best within a limit");
  add_run_options(*cmd, state->options);
  cmd->add_option("--batches", state->batches,
                  "sequences per rank to replay, a comma-separated list (default: micro_batches x 2^i up to the "
                  "largest that fits)")
      ->check(list_of(integer_in(1, 1 << 24)));
  cmd->add_option("--micro-batches", state->micro_batches,
                  "micro-batch counts to replay each batch at, a comma-separated list: the fastest is kept (two "
                  "overlap communication but read the weights twice; default: the workload's serving.micro_batches)")
      ->check(list_of(integer_in(1, 64)));
  cmd->add_option("--ep-list", state->eps,
                  "expert-parallel sizes to compare, a comma-separated list: each a unit of that many ranks, "
                  "attention data-parallel over them (dp = ep / tp), the workload's redundant experts where they "
                  "fill whole slots, else the fewest that do; the layout and batch that serve most within the limit")
      ->check(list_of(integer_in(1, 1 << 16)))
      ->excludes("--ep");
  auto* tpot = cmd->add_option("--tpot", state->tpot, "decode: the longest time per output token (\"50ms\")")
                   ->check(latency());
  cmd->add_option("--ttft", state->ttft, "prefill: the longest time to the first token (\"2s\")")
      ->check(latency())
      ->excludes(tpot);
  cmd->add_option("--traffic", state->traffic,
                  "tokens/s the pool serves, output (decode) or input with prefix hits (prefill): the pool sized in "
                  "whole units of the layout at the chosen batch, and a prefill pool's KV handoff")
      ->check(number_in(1e-3, 1e15));
  cmd->add_option("-j,--jobs", state->jobs, "steps replayed at once, each in a child process")
      ->check(integer_in(1, 1024))
      ->capture_default_str();
  cmd->add_flag("--json", state->json, "print the curve as JSON (tools/plot_serving.py reads it)");
  return Command{cmd, [state] { return serve(*state); }};
}

}  // namespace epsim::tools
