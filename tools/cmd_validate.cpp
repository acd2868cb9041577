// `epsim validate`: a measurement file's dispatch/combine rows against the
// simulator, DeepEP's published H800 table by default, an end-to-end file's
// published throughput, or a compute table's operators priced by a stack
// (docs/validation.md).
//   epsim validate [FILE.toml] [--platform h800] [--set k=v]... [--seed N] [--chunks N]
//                  [--nvlink-row EP] [--rdma-row EP] [-o table.txt] [--json] [--write-platform OUT]
//   epsim validate COMPUTE.toml [--stack NAME] [--set k=v]... [--json] [--check] [-o table.txt]
#include <iostream>

#include "app/compute_validation.hpp"
#include "app/end_to_end.hpp"
#include "app/measurement_file.hpp"
#include "app/kernel_validation.hpp"
#include "core/error.hpp"
#include "tools/command.hpp"
#include "tools/option_checks.hpp"
#include "tools/output_file.hpp"

namespace epsim::tools {

namespace {

struct ValidateState {
  app::KernelValidationRequest kernels;  // its file may be an end-to-end file instead (app::validate_end_to_end)
  std::string output;
  std::string write_platform;
  std::string stack;  // compute tables: another stack prices the rows
  bool json = false;
  bool check = false;
  bool seed_given = false;
  bool chunks_given = false;
};

// The measurement file and what it names are inputs no output may replace.
void check_output(const std::string& option, const std::string& path, const std::vector<NamedInput>& inputs) {
  if (path.empty()) return;
  check_output_path(option, path);
  refuse_input_as_output(option, path, inputs);
}

// An end-to-end file: the layout and its variants run as `epsim run` runs
// them; exit 1 with --check when the prediction leaves the band or a
// variant is not slower.
int run_end_to_end(const ValidateState& s) {
  const app::KernelValidationRequest& k = s.kernels;
  for (const auto& [flag, given] : {std::pair{"--platform", !k.platform.empty()}, {"--set", !k.overrides.empty()},
                                    {"--tokens", k.tokens_per_rank != 0}, {"--nvlink-row", k.nvlink_row != 0},
                                    {"--rdma-row", k.rdma_row != 0}, {"--write-platform", !s.write_platform.empty()}})
    if (given) throw option_error(flag, "only for kernel tables; " + k.file + " is an end-to-end file");
  if (!s.stack.empty())
    throw option_error("--stack", "only for compute tables; " + k.file +
                                      " is an end-to-end file (its platform file names the stack it validates)");
  // The runs take the file's seed and the platform's chunks, as `epsim run` does.
  for (const auto& [flag, given] : {std::pair{"--seed", s.seed_given}, {"--chunks", s.chunks_given}})
    if (given)
      throw option_error(flag, "only for kernel tables; " + k.file + " is an end-to-end file (its runs take the workload's)");
  const app::EndToEndFile file = app::load_end_to_end_file(k.file);
  check_output("--output", s.output,
               {{"file", k.file}, {k.file + "'s platform", file.platform}, {k.file + "'s workload", file.workload}});
  const app::EndToEndValidation v = app::validate_end_to_end(file);
  const std::string text = s.json ? app::format_end_to_end_json(v) : app::format_end_to_end(v);
  std::cout << text;
  if (!s.output.empty()) write_output_file("--output", s.output, text);
  return s.check && !v.passed() ? 1 : 0;
}

// A compute table: each row's operators priced alone by the platform's
// stack (or --stack's, after the file's and --set's keys); exit 1 with
// --check when a predicted row leaves the band.
int run_compute(const ValidateState& s) {
  const app::KernelValidationRequest& k = s.kernels;
  for (const auto& [flag, given] :
       {std::pair{"--tokens", k.tokens_per_rank != 0}, {"--nvlink-row", k.nvlink_row != 0},
        {"--rdma-row", k.rdma_row != 0}, {"--seed", s.seed_given}, {"--chunks", s.chunks_given},
        {"--write-platform", !s.write_platform.empty()}})
    if (given) throw option_error(flag, "not for compute tables; " + k.file + " is one (kind = \"compute\")");
  if (!k.platform.empty())
    throw option_error("--platform", "not for compute tables: their rows were measured on the file's NPU; price "
                                     "them with another stack (--stack) or set the NPU's figures (--set npu.KEY=V)");
  const app::ComputeFile file = app::load_compute_file(k.file);
  check_output("--output", s.output, {{"file", k.file}, {k.file + "'s platform", file.platform}});
  const app::ComputeValidation v = app::validate_compute(file, k.overrides, s.stack);
  std::string text = s.json ? app::format_compute_validation_json(v) : app::format_compute_validation(v);
  if (s.check && !s.json) text += app::format_compute_check(v);
  std::cout << text;
  if (!s.output.empty()) write_output_file("--output", s.output, text);
  return s.check && !v.passed() ? 1 : 0;
}

int run_validate(const ValidateState& s) {
  if (!s.kernels.file.empty() && app::is_end_to_end_file(s.kernels.file)) return run_end_to_end(s);
  if (!s.kernels.file.empty() && app::measurement_kind(s.kernels.file) == "compute") return run_compute(s);
  if (s.check) throw option_error("--check", "only for end-to-end files and compute tables");
  if (!s.stack.empty()) throw option_error("--stack", "only for compute tables (kind = \"compute\")");
  const std::vector<NamedInput> inputs = {{"file", s.kernels.file}, {"--platform", s.kernels.platform}};
  check_output("--output", s.output, inputs);
  check_output("--write-platform", s.write_platform, inputs);
  const sim::DeepEpValidation v = app::validate_kernels(s.kernels);
  // The JSON form checks every figure is finite, for the table too.
  const std::string json = sim::format_deepep_validation_json(v);
  const std::string table = s.json ? json : sim::format_deepep_validation(v);
  std::cout << table;
  if (!s.output.empty()) write_output_file("--output", s.output, table);
  if (!s.write_platform.empty())
    write_output_file("--write-platform", s.write_platform, sim::calibrated_platform_toml(v));
  return 0;
}

}  // namespace

Command add_validate_command(CLI::App& epsim) {
  auto state = std::make_shared<ValidateState>();
  CLI::App* app = epsim.add_subcommand(
      "validate",
      "compare a measurement file with the simulator: a kernel table's dispatch/combine rows (default: DeepEP's "
      "H800 normal-kernel table), an end-to-end file's published throughput, a compute table's operators");
  app->add_option("file", state->kernels.file, "measurement TOML (docs/validation.md); default validation/deepep-h800-normal.toml");
  app->add_option("--platform", state->kernels.platform, "cluster preset or TOML file instead of the file's (the same layout: 8 GPUs per node and a [scaleout], or flat)");
  app->add_option("--set", state->kernels.overrides, "override one platform key after the file's, e.g. --set scaleout.nic_latency=3us");
  app->add_option("--seed", state->kernels.seed, "routing seed (kernel tables)")
      ->check(integer_at_least(0))
      ->capture_default_str()
      ->each([s = state.get()](const std::string&) { s->seed_given = true; });
  app->add_option("--tokens", state->kernels.tokens_per_rank, "tokens per rank (must be the file's)")->check(integer_at_least(1));
  app->add_option("--chunks", state->kernels.pipeline_chunks,
                  "pipelined chunks per kernel stage (as `run`'s hierarchical; kernel tables)")
      ->check(integer_at_least(1))
      ->each([s = state.get()](const std::string&) { s->chunks_given = true; })
      ->capture_default_str();
  // A row's EP, in the range the measurement file reads it (row[i].ep).
  app->add_option("--nvlink-row", state->kernels.nvlink_row, "EP of the row calibrating node.link_efficiency instead of the file's")
      ->check(integer_in(1, 1 << 16));
  app->add_option("--rdma-row", state->kernels.rdma_row, "EP of the row calibrating scaleout.nic_efficiency instead of the file's")
      ->check(integer_in(1, 1 << 16));
  app->add_option("-o,--output", state->output, "also write the table to this file")->check(file_name());
  app->add_flag("--json", state->json,
                "print the comparison as JSON (kernel tables: per row and kernel measured/simulated GB/s and us, "
                "error; compute tables: per row measured/predicted s, error; end-to-end files: the runs)");
  app->add_flag("--check", state->check,
                "end-to-end files: exit 1 unless the prediction is within the file's band and every variant is "
                "slower; compute tables: unless every predicted row is within +-15 %");
  app->add_option("--stack", state->stack,
                  "compute tables: price the rows with this software stack (a preset in stacks/ or a stack TOML) "
                  "instead of the file's");
  app->add_option("--write-platform", state->write_platform,
                  "write the platform TOML with the calibrated parameters (node.link_efficiency and scaleout.nic_efficiency, supernode.port_efficiency, a low_latency_efficiency, kernels.*)")
      ->check(file_name());
  return Command{app, [state] { return run_validate(*state); }};
}

}  // namespace epsim::tools
