// Walking the replay's critical path back from the last interval.
#include "sim/report/critical_path.hpp"

#include <algorithm>
#include <limits>

#include "sim/replay/compute_precision.hpp"

namespace epsim::sim {

GapParts critical_path_gap(const Timeline& timeline, const StepBounds& bounds, const PlatformFacts& platform,
                           const Placement& placement, const workloads::TaskGraph& graph,
                           const ReplayOptions& options) {
  GapParts gap;
  gap.step_bound_s = bounds.step_s;
  const auto& ivs = timeline.intervals;
  if (ivs.empty()) {
    gap.idle_s = timeline.step_s - bounds.step_s - gap.serialisation_s();
    return gap;
  }
  const int ranks = graph.ranks;
  const std::size_t none = std::numeric_limits<std::size_t>::max();
  // (task, rank) -> interval index; a rank outside a collective has none.
  std::vector<std::size_t> at(graph.tasks.size() * static_cast<std::size_t>(ranks), none);
  for (std::size_t i = 0; i < ivs.size(); ++i) at[static_cast<std::size_t>(ivs[i].task) * ranks + ivs[i].rank] = i;
  // Per task, its latest-ending interval (the lowest rank on ties): where
  // the path continues through a dependency this rank did not run (another
  // stage's task before a pipeline transfer, a collective it did not join).
  std::vector<std::size_t> last(graph.tasks.size(), none);
  for (std::size_t i = 0; i < ivs.size(); ++i) {
    std::size_t& l = last[static_cast<std::size_t>(ivs[i].task)];
    if (l == none || ivs[i].end_s > ivs[l].end_s) l = i;
  }

  std::size_t cur = 0;
  for (std::size_t i = 1; i < ivs.size(); ++i)
    if (ivs[i].end_s > ivs[cur].end_s) cur = i;
  gap.end_rank = ivs[cur].rank;
  // The walk telescopes: step = (step - last end) + sum of (end - entry) + (entry - predecessor end) + first entry.
  gap.idle_s = timeline.step_s - ivs[cur].end_s;
  while (cur != none) {
    const workloads::Task& t = graph.tasks[ivs[cur].task];
    if (t.is_collective()) {
      // The collective began when its last participant entered: follow that rank.
      for (int r = 0; r < ranks; ++r) {
        const std::size_t j = at[static_cast<std::size_t>(t.id) * ranks + r];
        if (j != none && ivs[j].ready_s > ivs[cur].ready_s) cur = j;
      }
    }
    const Interval& iv = ivs[cur];
    gap.path_intervals.push_back(cur);
    const double entry_s = t.is_collective() ? iv.ready_s : iv.start_s;
    const double span_s = iv.end_s - entry_s;
    ++gap.path_tasks;
    if (t.is_collective()) {
      ++gap.path_collectives;
      gap.path_comm_bound_s += bounds.task_s[t.id];
      gap.comm_excess_s += span_s - bounds.task_s[t.id];
    } else {
      const NpuFacts& npu = platform.npus[placement.npu_of_rank[iv.rank]];
      const double roof_s = roofline_s(npu, effective_dtype(npu, t.dtype, options.compute_fallback),
                                       t.flops[iv.rank], t.hbm_bytes[iv.rank]);
      gap.path_compute_bound_s += roof_s;
      gap.compute_excess_s += span_s - roof_s;
    }
    // What it started after: the latest-ending dependency on this rank or
    // the interval before it on the same stream (dependencies win ties).
    std::size_t pred = none;
    double pred_end_s = 0;  // no predecessor: the path began at time 0
    for (workloads::TaskId d : t.deps) {
      std::size_t j = at[static_cast<std::size_t>(d) * ranks + iv.rank];
      if (j == none) j = last[static_cast<std::size_t>(d)];
      if (j == none) continue;
      const double end_s = ivs[j].end_s;
      if (pred != none && end_s <= pred_end_s) continue;
      pred = j;
      pred_end_s = end_s;
    }
    // (Pipeline transfers share the EP track but no stream: an interval
    // still running when this one began is no predecessor.)
    if (cur > 0 && ivs[cur - 1].rank == iv.rank && ivs[cur - 1].stream == iv.stream &&
        ivs[cur - 1].end_s <= entry_s && (pred == none || ivs[cur - 1].end_s > pred_end_s)) {
      pred = cur - 1;
      pred_end_s = ivs[cur - 1].end_s;
    }
    gap.idle_s += entry_s - pred_end_s;
    cur = pred;
  }
  std::reverse(gap.path_intervals.begin(), gap.path_intervals.end());
  return gap;
}

}  // namespace epsim::sim
