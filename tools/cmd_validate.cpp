// `epsim validate`: DeepEP's published H800 dispatch/combine bandwidths
// against the simulator (docs/validation.md).
//   epsim validate [--platform h800] [--set k=v]... [--seed N] [--tokens N] [-o table.txt]
#include <fstream>
#include <iostream>

#include "core/error.hpp"
#include "sim/validation/deepep_validation.hpp"
#include "tools/command.hpp"

namespace epsim::tools {

namespace {

struct ValidateState {
  sim::DeepEpValidationOptions options;
  std::string output;
};

int run_validate(const ValidateState& s) {
  const sim::DeepEpValidation v = sim::run_deepep_validation(s.options);
  const std::string table = sim::format_deepep_validation(v);
  std::cout << table;
  if (!s.output.empty()) {
    std::ofstream out(s.output);
    if (!out) throw InputError(SourceLocation{s.output}, "", "cannot write file");
    out << table;
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
  app->add_option("--seed", o.seed, "routing seed")->capture_default_str();
  app->add_option("--tokens", o.tokens_per_rank, "tokens per rank (DeepEP: 4096)")->capture_default_str();
  app->add_option("--chunks", o.pipeline.chunks, "chunks per kernel stage")->capture_default_str();
  app->add_option("--nvlink-row", o.nvlink_calibration_ep, "EP of the row calibrating NVLink efficiency")
      ->capture_default_str();
  app->add_option("--rdma-row", o.rdma_calibration_ep, "EP of the row calibrating RDMA efficiency")
      ->capture_default_str();
  app->add_option("--nvlink-line-rate", o.nvlink_line_rate_Bps, "NVLink B/s per direction per GPU")
      ->capture_default_str();
  app->add_option("--nic-line-rate", o.nic_line_rate_Bps, "NIC B/s per direction")->capture_default_str();
  app->add_option("-o,--output", state->output, "also write the table to this file");
  return Command{app, [state] { return run_validate(*state); }};
}

}  // namespace epsim::tools
