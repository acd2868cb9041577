// The text `epsim workload show` prints: the workload in one paragraph, the
// per-layer routing table with the closed forms beside the sampled figures,
// and the task graph's totals.
#pragma once

#include <ostream>

#include "workloads/routing_summary.hpp"
#include "workloads/task_graph.hpp"
#include "workloads/workload_spec.hpp"

namespace epsim::workloads {

void write_workload_report(std::ostream& out, const WorkloadSpec& w, const RoutingSummary& summary,
                           const TaskGraph& graph);

}  // namespace epsim::workloads
