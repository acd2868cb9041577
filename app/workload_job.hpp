// `epsim workload show` as a job: a typed request -> the checked workload
// (its --ep and --seed as typed edits) -> its sampled routing and the task
// graph of one step. tools/ prints what it returns.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "workloads/routing_summary.hpp"
#include "workloads/task_graph.hpp"
#include "workloads/workload_spec.hpp"

namespace epsim::app {

struct WorkloadRequest {
  std::string workload;                // workload TOML or preset name
  std::vector<std::string> overrides;  // the user's --set key=value, applied first
  std::optional<int> ep;               // unset: the workload's own (errors read as --set parallel.ep=N)
  std::optional<long long> seed;       // unset: the workload's own
  bool summary = true;                 // summarize the routing (the text report); false: the graph alone
};

struct WorkloadOutcome {
  workloads::WorkloadSpec workload;
  std::optional<workloads::RoutingSummary> summary;  // when asked for
  workloads::TaskGraph graph;
};

// Loads and checks the workload (and that its traffic matrices fit the
// memory limit), samples its routing and builds the step's task graph.
// Throws InputError for bad input.
WorkloadOutcome show_workload(const WorkloadRequest& request);

// The bundled workload presets, sorted.
std::vector<std::string> workload_presets();

}  // namespace epsim::app
