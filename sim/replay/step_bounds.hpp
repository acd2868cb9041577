// Analytic lower bounds for the replay's own inputs (platform, placement,
// task graph, resolved options): what no schedule can beat. Pure: no SimGrid.
#pragma once

#include <vector>

#include "sim/platform/placement.hpp"
#include "sim/platform/platform_facts.hpp"
#include "sim/replay/replay.hpp"
#include "workloads/task_graph.hpp"

namespace epsim::sim {

inline constexpr int kTaskKinds = 11;  // workloads::TaskKind values

struct StepBounds {
  // Per task: a collective's plan alone on an idle platform (its exact
  // duration there); a compute task's largest per-rank roofline.
  std::vector<double> task_s;
  // Per rank and TaskKind: the sum of that rank's task bounds ([rank * kTaskKinds + kind]).
  std::vector<double> rank_kind_s;
  std::vector<double> rank_compute_s;  // per rank: sum of compute rooflines
  std::vector<double> rank_ep_comm_s;  // per rank: sum of dispatch/combine bounds it joins
  std::vector<double> rank_dp_comm_s;  // per rank: sum of all-reduce bounds it joins
  double critical_path_s = 0;  // longest dependency chain, every task at its bound
  double rank_streams_s = 0;   // max over ranks of what its streams must run back to back
  double step_s = 0;           // max of the two: the step bound
};

// Roofline of one kernel: max(flops / peak(dtype), hbm_bytes / HBM bandwidth);
// `dtype` as effective_dtype() gives it (a kernel runs at its fallback's peak).
double roofline_s(const NpuFacts& npu, workloads::Dtype dtype, double flops, double hbm_bytes);

// `options` must be resolved (resolve()). Under kSerial rank_streams_s is
// compute + all communication of a rank; under kOverlap the largest of its
// compute, EP and DP stream sums.
// `plan_bounds`, when given: per task, a collective's plan_bound_s as the
// replay found it (replay()'s plan_bounds; < 0 where unknown), so that
// collectives are not planned twice; the same figures either way.
StepBounds step_bounds(const PlatformFacts& platform, const Placement& placement, const workloads::TaskGraph& graph,
                       const ReplayOptions& options, const std::vector<double>* plan_bounds = nullptr);

}  // namespace epsim::sim
