// One scenario as `epsim run` takes it: the options shared by the run
// command and by sweep points, and the one function that simulates it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "sim/simulate.hpp"
#include "workloads/task_graph.hpp"

namespace epsim::tools {

struct RunRequest {
  std::string platform;                // cluster TOML, preset name or SimGrid XML
  std::string workload;                // workload TOML or preset name
  std::vector<std::string> overrides;  // --set key=value
  std::optional<int> ep;               // unset: the workload's own
  std::optional<long long> seed;       // unset: the workload's own
  std::string schedule = "overlap";
  std::string algorithm;  // dispatch/combine: direct, hierarchical or low-latency; "": from the platform
  std::string fidelity;   // per-flow or aggregated; "": per-flow up to 8 ranks
  std::string all_reduce = "hierarchical";
  bool allow_oversubscribed_memory = false;  // same as --set memory.allow_oversubscribed=true
  bool record_link_spans = false;  // needed for trace counters
  bool simgrid_log = false;
  std::vector<std::string> simgrid_config;
};

// Declares --platform ... --cfg on `cmd`, bound to `request`; --ep, --seed
// and --cfg are range-checked as their TOML keys (parallel.ep, routing.seed)
// and SimGrid's allow-list (sim::engine_setting_refusal) are.
void add_run_options(CLI::App& cmd, RunRequest& request);

// Declares --ep and --seed (run, workload show): unset unless given.
void add_ep_seed_options(CLI::App& cmd, std::optional<int>& ep, std::optional<long long>& seed);

// --set assignments as run splits them: keys starting with model.,
// parallel., precision., routing. or memory. (or prefixed workload.) to the
// workload, the others (or prefixed platform.) to the platform.
struct SplitOverrides {
  std::vector<std::string> workload;
  std::vector<std::string> platform;
};
SplitOverrides split_set_options(const std::vector<std::string>& overrides);

// "per-flow" | "aggregated" as a Fidelity, "" as unset (the replay's default);
// anything else throws InputError naming --fidelity.
std::optional<sim::Fidelity> parse_fidelity(const std::string& fidelity);

// Parses run options (as a sweep point lists them); bad ones throw InputError.
RunRequest parse_run_request(const std::vector<std::string>& args);

struct RunOutcome {
  workloads::TaskGraph graph;
  sim::Simulation simulation;
};

// Samples the workload and replays it on the platform (one SimGrid engine:
// once per process). Throws InputError for bad input.
RunOutcome run_request(const RunRequest& request);

// Loads and checks both inputs and that the ranks fit the platform, without
// sampling or simulating: the platform gets run_request's verdict
// (sim::check_platform; a SimGrid XML is checked in a child process).
// Returns the run's memory estimate in bytes (sim/run_memory.hpp).
double check_run_request(const RunRequest& request);

}  // namespace epsim::tools
