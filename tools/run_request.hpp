// The options of `epsim run` as the command line and sweep points give
// them (strings, as CLI11 binds them), and their typed request
// (app/run_job.hpp: the job itself).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "app/run_job.hpp"

namespace epsim::tools {

struct RunOptions {
  std::string platform;
  std::string workload;
  std::vector<std::string> overrides;  // --set key=value
  std::string stack;                   // --stack NAME; empty: the platform's own
  std::optional<int> ep;
  std::optional<long long> seed;
  std::string schedule = "overlap";
  std::string algorithm;  // "": the platform's
  std::string fidelity;   // "": per-flow up to 8 ranks
  std::string all_reduce = "hierarchical";
  std::string exact = "auto";
  bool allow_oversubscribed_memory = false;
  bool simgrid_log = false;
  std::vector<std::string> simgrid_config;
};

// Declares --platform ... --cfg on `cmd`, bound to `options`; --ep, --seed
// and --cfg are range-checked as their TOML keys (parallel.ep, routing.seed)
// and SimGrid's allow-list (sim::engine_setting_refusal) are.
void add_run_options(CLI::App& cmd, RunOptions& options);

// Declares --ep and --seed (run, workload show): unset unless given.
void add_ep_seed_options(CLI::App& cmd, std::optional<int>& ep, std::optional<long long>& seed);

// The typed request; a name no option takes throws InputError naming the option.
app::RunRequest to_request(const RunOptions& options);

// Parses run options (as a sweep point lists them) into a request; bad ones throw InputError.
app::RunRequest parse_run_request(const std::vector<std::string>& args);

}  // namespace epsim::tools
