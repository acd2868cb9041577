// `epsim validate`: a measurement file's dispatch/combine rows against the
// simulator, DeepEP's published H800 table by default, or an end-to-end
// file's published training throughput (docs/validation.md).
//   epsim validate [FILE.toml] [--platform h800] [--set k=v]... [--seed N] [--chunks N]
//                  [--nvlink-row EP] [--rdma-row EP] [-o table.txt] [--json] [--write-platform OUT]
#include <iostream>

#include "app/end_to_end.hpp"
#include "core/error.hpp"
#include "sim/validation/deepep_validation.hpp"
#include "sim/validation/measurement_file.hpp"
#include "tools/command.hpp"
#include "tools/option_checks.hpp"
#include "tools/output_file.hpp"

namespace epsim::tools {

namespace {

struct ValidateState {
  std::string file;  // empty: the shipped DeepEP H800 file
  std::string platform;
  std::vector<std::string> overrides;
  std::uint64_t seed = 1;
  int tokens_per_rank = 0;  // 0: the file's
  int pipeline_chunks = sim::AlltoallvOptions{}.pipeline_chunks;
  int nvlink_row = 0;  // 0: the file's calibration rows
  int rdma_row = 0;
  std::string output;
  std::string write_platform;
  bool json = false;
  bool check = false;
};

// The file's validation with the flags given on top; flags the library
// would refuse are refused here by their names.
sim::DeepEpValidationOptions options(const ValidateState& s) {
  sim::DeepEpValidationOptions o =
      sim::validation_options(sim::load_measurement_file(s.file.empty() ? sim::default_measurement_file() : s.file));
  if (!s.platform.empty()) o.platform = s.platform;
  o.overrides.insert(o.overrides.end(), s.overrides.begin(), s.overrides.end());
  o.seed = s.seed;
  o.pipeline_chunks = s.pipeline_chunks;
  auto measured = [&](const char* flag, int ep) {
    if (!sim::find_measurement(o.measurements, ep))
      throw option_error(flag, "the measured rows are " + sim::measured_eps(o.measurements) + "; got " +
                                   std::to_string(ep));
  };
  if (o.kernel == sim::DeepEpKernel::kLowLatency)
    for (const auto& [flag, row] : {std::pair{"--nvlink-row", s.nvlink_row}, std::pair{"--rdma-row", s.rdma_row}})
      if (row != 0)
        throw option_error(flag, "the file's rows are low-latency kernels: they calibrate "
                                 "scaleout.low_latency_efficiency only (its row is the file's)");
  // A flat platform's file calibrates neither NVLink nor RDMA (its own efficiency, or kernels.* only).
  if (o.flat_calibration_ep != 0 || (o.nvlink_calibration_ep == 0 && o.rdma_calibration_ep == 0))
    for (const auto& [flag, row] : {std::pair{"--nvlink-row", s.nvlink_row}, std::pair{"--rdma-row", s.rdma_row}})
      if (row != 0)
        throw option_error(flag, "the file's platform is flat (a supernode or no [scaleout]): its rows calibrate "
                                 "one parameter, on the file's row");
  if (s.nvlink_row != 0) {
    measured("--nvlink-row", s.nvlink_row);
    if (s.nvlink_row > sim::kDeepEpGpusPerNode)
      throw option_error("--nvlink-row", "NVLink calibrates on an intranode row (EP <= 8)");
    o.nvlink_calibration_ep = s.nvlink_row;
  }
  if (s.rdma_row != 0) {
    measured("--rdma-row", s.rdma_row);
    if (s.rdma_row <= sim::kDeepEpGpusPerNode)
      throw option_error("--rdma-row", "RDMA calibrates on an internode row (EP > 8)");
    o.rdma_calibration_ep = s.rdma_row;
  }
  if (s.tokens_per_rank != 0 && s.tokens_per_rank != o.measured_tokens_per_rank)
    throw option_error("--tokens", "the rows were measured at " + std::to_string(o.measured_tokens_per_rank) +
                                       " tokens per rank; other shapes have no measurement to compare with");
  if (o.pipeline_chunks < 1) throw option_error("--chunks", "expected >= 1, got " + std::to_string(o.pipeline_chunks));
  return o;
}

void write_file(const std::string& option, const std::string& path, const std::string& text) {
  OutputFile out(option, path);
  out.stream() << text;
  out.close();
}

// An end-to-end file: the layout and its variants run as `epsim run` runs
// them; exit 1 with --check when the prediction leaves the band or a
// variant is not slower.
int run_end_to_end(const ValidateState& s) {
  for (const auto& [flag, given] : {std::pair{"--platform", !s.platform.empty()}, {"--set", !s.overrides.empty()},
                                    {"--tokens", s.tokens_per_rank != 0}, {"--nvlink-row", s.nvlink_row != 0},
                                    {"--rdma-row", s.rdma_row != 0}, {"--write-platform", !s.write_platform.empty()}})
    if (given) throw option_error(flag, "only for kernel tables; " + s.file + " is an end-to-end file");
  if (!s.output.empty()) check_output_path("--output", s.output);
  const app::EndToEndValidation v = app::validate_end_to_end(app::load_end_to_end_file(s.file));
  const std::string text = s.json ? app::format_end_to_end_json(v) : app::format_end_to_end(v);
  std::cout << text;
  if (!s.output.empty()) write_file("--output", s.output, text);
  return s.check && !v.passed() ? 1 : 0;
}

int run_validate(const ValidateState& s) {
  if (!s.file.empty() && app::is_end_to_end_file(s.file)) return run_end_to_end(s);
  if (s.check) throw option_error("--check", "only for end-to-end files (kind = \"end_to_end\")");
  if (!s.output.empty()) check_output_path("--output", s.output);
  if (!s.write_platform.empty()) check_output_path("--write-platform", s.write_platform);
  const sim::DeepEpValidation v = sim::run_deepep_validation(options(s));
  // The JSON form checks every figure is finite, for the table too.
  const std::string json = sim::format_deepep_validation_json(v);
  const std::string table = s.json ? json : sim::format_deepep_validation(v);
  std::cout << table;
  if (!s.output.empty()) write_file("--output", s.output, table);
  if (!s.write_platform.empty()) write_file("--write-platform", s.write_platform, sim::calibrated_platform_toml(v));
  return 0;
}

}  // namespace

Command add_validate_command(CLI::App& epsim) {
  auto state = std::make_shared<ValidateState>();
  CLI::App* app = epsim.add_subcommand(
      "validate", "simulate a measurement file's dispatch/combine rows (default: DeepEP's H800 normal-kernel table)");
  app->add_option("file", state->file, "measurement TOML (docs/validation.md); default validation/deepep-h800-normal.toml");
  app->add_option("--platform", state->platform, "cluster preset or TOML file instead of the file's (the same layout: 8 GPUs per node and a [scaleout], or flat)");
  app->add_option("--set", state->overrides, "override one platform key after the file's, e.g. --set scaleout.nic_latency=3us");
  app->add_option("--seed", state->seed, "routing seed")->check(integer_at_least(0))->capture_default_str();
  app->add_option("--tokens", state->tokens_per_rank, "tokens per rank (must be the file's)")->check(integer_at_least(1));
  app->add_option("--chunks", state->pipeline_chunks, "pipelined chunks per kernel stage (as `run`'s hierarchical)")
      ->check(integer_at_least(1))
      ->capture_default_str();
  // A row's EP, in the range the measurement file reads it (row[i].ep).
  app->add_option("--nvlink-row", state->nvlink_row, "EP of the row calibrating node.link_efficiency instead of the file's")
      ->check(integer_in(1, 1 << 16));
  app->add_option("--rdma-row", state->rdma_row, "EP of the row calibrating scaleout.nic_efficiency instead of the file's")
      ->check(integer_in(1, 1 << 16));
  app->add_option("-o,--output", state->output, "also write the table to this file");
  app->add_flag("--json", state->json, "print per row and kernel measured/simulated GB/s and us, error, as JSON");
  app->add_flag("--check", state->check,
                "end-to-end files: exit 1 unless the prediction is within the file's band and every variant is slower");
  app->add_option("--write-platform", state->write_platform,
                  "write the platform TOML with the calibrated parameters (node.link_efficiency and scaleout.nic_efficiency, supernode.port_efficiency, a low_latency_efficiency, kernels.*)");
  return Command{app, [state] { return run_validate(*state); }};
}

}  // namespace epsim::tools
