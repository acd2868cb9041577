// Step bounds: per-task rooflines and collective plans, per-rank stream sums,
// and the critical path through the SPMD graph.
#include "sim/replay/step_bounds.hpp"

#include <algorithm>

#include "sim/replay/collectives.hpp"
#include "sim/replay/compute_precision.hpp"

namespace epsim::sim {

using workloads::Task;
using workloads::TaskKind;

double roofline_s(const NpuFacts& npu, workloads::Dtype dtype, double flops, double hbm_bytes) {
  return std::max(flops / peak_flops_per_s(npu, dtype), hbm_bytes / npu.hbm_bandwidth_Bps);
}

StepBounds step_bounds(const PlatformFacts& platform, const Placement& placement, const workloads::TaskGraph& graph,
                       const ReplayOptions& options, const std::vector<double>* plan_bounds) {
  const int ranks = graph.ranks;
  const std::size_t tasks = graph.tasks.size();
  StepBounds b;
  b.task_s.assign(tasks, 0.0);
  b.rank_kind_s.assign(static_cast<std::size_t>(ranks) * kTaskKinds, 0.0);
  b.rank_compute_s.assign(ranks, 0.0);
  b.rank_ep_comm_s.assign(ranks, 0.0);
  b.rank_dp_comm_s.assign(ranks, 0.0);
  // Earliest finish of (task, rank) with every task at its bound.
  std::vector<double> finish(tasks * static_cast<std::size_t>(ranks), 0.0);
  auto at = [ranks](std::size_t t, int r) { return t * static_cast<std::size_t>(ranks) + r; };

  for (const Task& t : graph.tasks) {
    const int kind = static_cast<int>(t.kind);
    if (!t.is_collective()) {
      for (int r = 0; r < ranks; ++r) {
        if (!graph.runs(t, r)) continue;  // an empty part, done from the start
        const NpuFacts& npu = platform.npus[placement.npu_of_rank[r]];
        const double s =
            roofline_s(npu, effective_dtype(npu, t.dtype, options.compute_fallback), t.flops[r], t.hbm_bytes[r]);
        b.task_s[t.id] = std::max(b.task_s[t.id], s);
        b.rank_kind_s[static_cast<std::size_t>(r) * kTaskKinds + kind] += s;
        b.rank_compute_s[r] += s;
        double start = 0;
        for (auto d : t.deps) start = std::max(start, finish[at(d, r)]);
        finish[at(t.id, r)] = start + s;
      }
      continue;
    }
    const bool known = plan_bounds != nullptr && static_cast<std::size_t>(t.id) < plan_bounds->size() &&
                       (*plan_bounds)[static_cast<std::size_t>(t.id)] >= 0;
    const double s = known ? (*plan_bounds)[static_cast<std::size_t>(t.id)]
                           : plan_bound_s(plan_collective(t, graph, placement, options.all_reduce,
                                                          *options.exact_ring_steps, alltoallv_options(options)),
                                          platform);
    b.task_s[t.id] = s;
    const std::vector<bool> joins = graph.members(t);
    double start = 0;
    for (int r = 0; r < ranks; ++r) {
      if (!joins[r]) continue;
      b.rank_kind_s[static_cast<std::size_t>(r) * kTaskKinds + kind] += s;
      // Pipeline transfers hold no stream (docs/simulator.md): they may
      // overlap each other and the rank's EP collectives, so they enter
      // only the critical path.
      if (t.kind == TaskKind::kGradAllReduce)
        b.rank_dp_comm_s[r] += s;
      else if (t.kind != TaskKind::kPipelineP2p)
        b.rank_ep_comm_s[r] += s;
      for (auto d : t.deps) start = std::max(start, finish[at(d, r)]);
    }
    for (int r = 0; r < ranks; ++r) finish[at(t.id, r)] = start + s;
  }
  for (double f : finish) b.critical_path_s = std::max(b.critical_path_s, f);
  for (int r = 0; r < ranks; ++r) {
    const double streams = options.schedule == Schedule::kSerial
                               ? b.rank_compute_s[r] + b.rank_ep_comm_s[r] + b.rank_dp_comm_s[r]
                               : std::max({b.rank_compute_s[r], b.rank_ep_comm_s[r], b.rank_dp_comm_s[r]});
    b.rank_streams_s = std::max(b.rank_streams_s, streams);
  }
  b.step_s = std::max(b.critical_path_s, b.rank_streams_s);
  return b;
}

}  // namespace epsim::sim
