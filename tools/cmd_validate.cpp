// `epsim validate`: DeepEP's published H800 dispatch/combine bandwidths
// against the simulator (docs/validation.md).
//   epsim validate [--platform h800] [--set k=v]... [--seed N] [--chunks N] [-o table.txt]
#include <iostream>

#include "core/error.hpp"
#include "sim/validation/deepep_validation.hpp"
#include "tools/command.hpp"
#include "tools/option_checks.hpp"
#include "tools/output_file.hpp"

namespace epsim::tools {

namespace {

struct ValidateState {
  sim::DeepEpValidationOptions options;
  std::string output;
};

// The options the library would refuse, refused here by their flags.
void check_options(const sim::DeepEpValidationOptions& o) {
  auto published = [](const char* flag, int ep) {
    if (!sim::find_deepep_measurement(ep))
      throw option_error(flag, "DeepEP published EP8, 16, 32 and 64; got " + std::to_string(ep));
  };
  published("--nvlink-row", o.nvlink_calibration_ep);
  published("--rdma-row", o.rdma_calibration_ep);
  if (o.nvlink_calibration_ep > sim::kDeepEpGpusPerNode)
    throw option_error("--nvlink-row", "NVLink calibrates on an intranode row (EP <= 8)");
  if (o.rdma_calibration_ep <= sim::kDeepEpGpusPerNode)
    throw option_error("--rdma-row", "RDMA calibrates on an internode row (EP > 8)");
  if (o.tokens_per_rank != sim::kDeepEpTokensPerRank)
    throw option_error("--tokens", "DeepEP measured its rows at " + std::to_string(sim::kDeepEpTokensPerRank) +
                                       " tokens per rank; other shapes have no measurement to compare with");
  if (o.pipeline_chunks < 1) throw option_error("--chunks", "expected >= 1, got " + std::to_string(o.pipeline_chunks));
}

int run_validate(const ValidateState& s) {
  check_options(s.options);
  if (!s.output.empty()) check_output_path("--output", s.output);
  const sim::DeepEpValidation v = sim::run_deepep_validation(s.options);
  const std::string table = sim::format_deepep_validation(v);
  std::cout << table;
  if (!s.output.empty()) {
    OutputFile out("--output", s.output);
    out.stream() << table;
    out.close();
  }
  return 0;
}

}  // namespace

Command add_validate_command(CLI::App& epsim) {
  auto state = std::make_shared<ValidateState>();
  sim::DeepEpValidationOptions& o = state->options;
  CLI::App* app = epsim.add_subcommand(
      "validate", "simulate DeepEP's published H800 dispatch/combine rows (EP8 intranode, EP16/32/64 internode)");
  app->add_option("--platform", o.platform, "cluster preset or TOML file (8 GPUs per node, >= 8 nodes)")
      ->capture_default_str();
  app->add_option("--set", o.overrides, "override one platform key, e.g. --set scaleout.nic_latency=3us");
  app->add_option("--seed", o.seed, "routing seed")->check(integer_at_least(0))->capture_default_str();
  app->add_option("--tokens", o.tokens_per_rank, "tokens per rank (DeepEP measured 4096 only)")
      ->check(integer_at_least(1))
      ->capture_default_str();
  app->add_option("--chunks", o.pipeline_chunks, "pipelined chunks per kernel stage (as `run`'s hierarchical)")
      ->check(integer_at_least(1))
      ->capture_default_str();
  app->add_option("--nvlink-row", o.nvlink_calibration_ep, "EP of the row calibrating NVLink efficiency")
      ->capture_default_str();
  app->add_option("--rdma-row", o.rdma_calibration_ep, "EP of the row calibrating RDMA efficiency")
      ->capture_default_str();
  app->add_option("--nvlink-line-rate", o.nvlink_line_rate_Bps, "NVLink B/s per direction per GPU")
      ->check(positive_number())
      ->capture_default_str();
  app->add_option("--nic-line-rate", o.nic_line_rate_Bps, "NIC B/s per direction")
      ->check(positive_number())
      ->capture_default_str();
  app->add_option("-o,--output", state->output, "also write the table to this file");
  return Command{app, [state] { return run_validate(*state); }};
}

}  // namespace epsim::tools
