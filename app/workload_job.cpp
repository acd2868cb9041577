// A workload alone: checked, its routing sampled, its step's task graph built.
#include "app/workload_job.hpp"

#include "workloads/routing_stream.hpp"
#include "workloads/task_graph_builder.hpp"
#include "workloads/workload_edits.hpp"
#include "workloads/workload_loader.hpp"

namespace epsim::app {

WorkloadOutcome show_workload(const WorkloadRequest& r) {
  // --ep and --seed are typed edits, applied after --set.
  workloads::WorkloadEdits edits;
  if (r.ep) edits.ep = workloads::Edit<int>{*r.ep, ""};
  if (r.seed) edits.seed = workloads::Edit<std::int64_t>{*r.seed, ""};
  WorkloadOutcome out{workloads::load_workload(r.workload, r.overrides, edits), std::nullopt, {}};
  workloads::check_traffic_memory(out.workload);
  const workloads::RoutingSample routing = workloads::sample_routing(out.workload);
  out.graph = workloads::build_task_graph(out.workload, routing);
  if (r.summary) out.summary = workloads::summarize_routing(out.workload, routing);
  return out;
}

std::vector<std::string> workload_presets() { return workloads::workload_presets(); }

}  // namespace epsim::app
