// The gap sim - bound of a replayed step, split along the replay's own
// critical path into parts that sum to it exactly. The path runs back from
// the interval that ends last: from each interval to whatever it started
// after (a dependency on the same rank, or the task before it on its
// stream; a collective to the rank that entered it last).
#pragma once

#include <cstddef>
#include <vector>

#include "sim/platform/placement.hpp"
#include "sim/platform/platform_facts.hpp"
#include "sim/replay/replay.hpp"
#include "sim/replay/step_bounds.hpp"
#include "sim/replay/timeline.hpp"
#include "workloads/task_graph.hpp"

namespace epsim::sim {

// sim - bound = serialisation_s() + compute_excess_s + comm_excess_s + idle_s.
struct GapParts {
  int end_rank = 0;                 // the rank whose interval ends the step
  int path_tasks = 0;               // intervals on the path
  int path_collectives = 0;         // of which collectives
  double step_bound_s = 0;          // the bound the gap is measured from
  double path_compute_bound_s = 0;  // compute on the path, each kernel at its roofline
  double path_comm_bound_s = 0;     // collectives on the path, each at its bound
  double compute_excess_s = 0;      // compute on the path above its rooflines (sharing with comm kernels)
  double comm_excess_s = 0;         // collectives on the path above their bounds (contention)
  double idle_s = 0;                // time on the path when nothing on it ran
  // The path itself: indices into Timeline::intervals, from the first
  // interval to the last (the trace draws it as flow arrows).
  std::vector<std::size_t> path_intervals;
  // The path's tasks at their bounds minus the step bound: what the replay
  // runs one after the other on this path that the bound overlaps or leaves
  // out. Can be negative when the path avoids the bound's own chain.
  double serialisation_s() const { return path_compute_bound_s + path_comm_bound_s - step_bound_s; }
  double total_s() const { return serialisation_s() + compute_excess_s + comm_excess_s + idle_s; }
  // Communication on the path (bound + excess): exposed by construction.
  double path_comm_s() const { return path_comm_bound_s + comm_excess_s; }
};

// `options` resolved. Empty timeline: all zero.
GapParts critical_path_gap(const Timeline& timeline, const StepBounds& bounds, const PlatformFacts& platform,
                           const Placement& placement, const workloads::TaskGraph& graph,
                           const ReplayOptions& options);

}  // namespace epsim::sim
