// One scenario as `epsim run` and every sweep point take it: a typed
// request, checked before anything is sampled, then the step replayed with
// its reductions (step_replay.hpp) and reported.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "app/option_names.hpp"
#include "sim/platform/platform_loader.hpp"
#include "sim/simulate.hpp"
#include "workloads/task_graph.hpp"
#include "workloads/workload_edits.hpp"
#include "workloads/workload_spec.hpp"

namespace epsim::app {

struct RunRequest {
  std::string platform;                // cluster TOML, preset name or SimGrid XML
  std::string workload;                // workload TOML or preset name
  std::vector<std::string> overrides;  // the user's --set: workload keys (model., parallel., ...) or platform keys
  std::string stack;                   // --stack: the software stack in place of the platform's; empty: its own
  workloads::WorkloadEdits edits;      // typed edits after the --set (a plan's layout); ep, seed and
                                       // allow_oversubscribed_memory are set after these
  std::optional<int> ep;               // unset: the workload's own
  std::optional<long long> seed;       // unset: the workload's own
  sim::Schedule schedule = sim::Schedule::kOverlap;
  std::optional<sim::AlltoallAlgorithm> algorithm;  // unset: the platform's (sim::default_algorithm)
  std::optional<sim::Fidelity> fidelity;            // unset: per-flow up to 8 ranks
  sim::AllReduceAlgorithm all_reduce = sim::AllReduceAlgorithm::kHierarchical;
  Exactness exact = Exactness::kAuto;
  bool allow_oversubscribed_memory = false;  // same as memory.allow_oversubscribed=true
  bool record_link_spans = false;            // needed for trace counters
  bool simgrid_log = false;
  std::vector<std::string> simgrid_config;
};

// Overrides as a run splits them: keys starting with model., parallel.,
// precision., routing. or memory. (or prefixed workload.) to the workload,
// the others (or prefixed platform.) to the platform.
struct SplitOverrides {
  std::vector<std::string> workload;
  std::vector<std::string> platform;
};
SplitOverrides split_set_options(const std::vector<std::string>& overrides);

struct RunOutcome {
  workloads::TaskGraph graph;  // the last replay's (a reduced step's kept EP group and micro-batches)
  sim::Simulation simulation;  // its timeline; the report is the whole step's
};

// What a run says while it works (tools/ prints it): the phase ("loading",
// "replay 1 of 2: 32 micro-batches"), and within a replay its simulated
// time and the share of its (task, rank) parts done.
struct ProgressEvent {
  std::string phase;
  double sim_s = 0;
  double done = 0;  // in [0, 1]
};
using RunProgress = std::function<void(const ProgressEvent& event)>;

// Loads and checks the inputs (the ranks fit the platform, the run's memory
// estimate the limit, a rank's HBM its NPU), then replays the step on one
// SimGrid engine: once per process. Throws InputError for bad input.
RunOutcome run_job(const RunRequest& request, const RunProgress& progress = {});

// The request's workload: its file or preset, the --set workload keys, then
// its edits (`edits`, --ep, --seed, --allow-oversubscribed-memory), checked
// by the workload loader. Throws InputError.
workloads::WorkloadSpec load_job_workload(const RunRequest& request);

// The same checks without sampling or simulating (a SimGrid XML is checked
// in a child process); returns the run's memory estimate in bytes
// (sim/run_memory.hpp), of what it will replay.
double check_job(const RunRequest& request);

// The same on a platform already checked: `platform` is sim::check_platform's
// verdict on the request's platform and its overrides (a command checking
// many layouts on one cluster checks the cluster once).
double check_job(const RunRequest& request, const sim::PlatformShape& platform);

// The same on the request's workload already loaded (load_job_workload):
// a command that reads the workload for itself does not read it again.
double check_job(const RunRequest& request, const sim::PlatformShape& platform,
                 const workloads::WorkloadSpec& workload);

}  // namespace epsim::app
