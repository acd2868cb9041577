// The steady state's period inside a replay, and a report carried from two
// replays to the step's micro-batch count.
#include "sim/report/steady_state.hpp"

#include <algorithm>
#include <limits>

namespace epsim::sim {

using workloads::Phase;

std::vector<double> last_forward_starts_s(const Timeline& timeline, const workloads::TaskGraph& graph) {
  std::vector<double> out(static_cast<std::size_t>(std::max(graph.stages, 1)), 0.0);
  for (const Interval& iv : timeline.intervals) {
    const workloads::Task& t = graph.tasks[static_cast<std::size_t>(iv.task)];
    if (t.is_collective() || t.phase != Phase::kForward) continue;
    double& last = out[static_cast<std::size_t>(std::max(t.stage, 0))];
    last = std::max(last, iv.start_s);
  }
  return out;
}

namespace {

double carry(double a, double b, double k) { return b + k * (b - a); }

void carry_row(const ReportRow& a, ReportRow& b, double k) {
  // The time senders spent, which the rate divides the bytes by.
  const double sender_a = a.achieved_Bps > 0 ? a.bytes_per_rank / a.achieved_Bps : 0;
  const double sender_b = b.achieved_Bps > 0 ? b.bytes_per_rank / b.achieved_Bps : 0;
  b.sim_s = carry(a.sim_s, b.sim_s, k);
  b.sim_max_s = carry(a.sim_max_s, b.sim_max_s, k);
  b.bound_s = carry(a.bound_s, b.bound_s, k);
  b.bound_max_s = carry(a.bound_max_s, b.bound_max_s, k);
  b.bytes_per_rank = carry(a.bytes_per_rank, b.bytes_per_rank, k);
  const double sender = carry(sender_a, sender_b, k);
  b.achieved_Bps = sender > 0 ? b.bytes_per_rank / sender : 0;
}

int carry_count(long long a, long long b, double k) { return static_cast<int>(carry(a, b, k) + 0.5); }

}  // namespace

Report extrapolate_report(const Report& a, const Report& b, double k) {
  Report out = b;
  carry_row(a.step, out.step, k);
  out.critical_path_bound_s = carry(a.critical_path_bound_s, b.critical_path_bound_s, k);
  out.rank_streams_bound_s = carry(a.rank_streams_bound_s, b.rank_streams_bound_s, k);
  GapParts& g = out.gap;
  g.path_tasks = carry_count(a.gap.path_tasks, b.gap.path_tasks, k);
  g.path_collectives = carry_count(a.gap.path_collectives, b.gap.path_collectives, k);
  g.step_bound_s = carry(a.gap.step_bound_s, b.gap.step_bound_s, k);
  g.path_compute_bound_s = carry(a.gap.path_compute_bound_s, b.gap.path_compute_bound_s, k);
  g.path_comm_bound_s = carry(a.gap.path_comm_bound_s, b.gap.path_comm_bound_s, k);
  g.compute_excess_s = carry(a.gap.compute_excess_s, b.gap.compute_excess_s, k);
  g.comm_excess_s = carry(a.gap.comm_excess_s, b.gap.comm_excess_s, k);
  g.idle_s = carry(a.gap.idle_s, b.gap.idle_s, k);
  for (ReportRow& row : out.phases) {
    const auto it = std::find_if(a.phases.begin(), a.phases.end(), [&](const ReportRow& r) { return r.name == row.name; });
    carry_row(it == a.phases.end() ? ReportRow{} : *it, row, k);
  }
  const double hidden = carry(a.overlap_fraction * a.comm_mean_s, b.overlap_fraction * b.comm_mean_s, k);
  out.comm_mean_s = carry(a.comm_mean_s, b.comm_mean_s, k);
  out.overlap_fraction = out.comm_mean_s > 0 ? hidden / out.comm_mean_s : 0;
  out.exposed_comm_mean_s = carry(a.exposed_comm_mean_s, b.exposed_comm_mean_s, k);
  out.exposed_comm_max_s = carry(a.exposed_comm_max_s, b.exposed_comm_max_s, k);
  out.peer_wait_mean_s = carry(a.peer_wait_mean_s, b.peer_wait_mean_s, k);
  out.idle_mean_s = carry(a.idle_mean_s, b.idle_mean_s, k);
  out.idle_max_s = carry(a.idle_max_s, b.idle_max_s, k);
  out.straggler_compute_s = carry(a.straggler_compute_s, b.straggler_compute_s, k);
  out.mean_compute_s = carry(a.mean_compute_s, b.mean_compute_s, k);
  out.straggler_ratio = out.mean_compute_s > 0 ? out.straggler_compute_s / out.mean_compute_s : 1;
  out.layer_straggler_compute_s = carry(a.layer_straggler_compute_s, b.layer_straggler_compute_s, k);
  out.layer_mean_compute_s = carry(a.layer_mean_compute_s, b.layer_mean_compute_s, k);
  for (LinkRow& link : out.busiest_links) {
    const auto it = std::find_if(a.busiest_links.begin(), a.busiest_links.end(),
                                 [&](const LinkRow& l) { return l.link == link.link; });
    // A link among b's busiest but not a's: a's bytes scaled by the step, as the other links' share.
    const double bytes_a = it != a.busiest_links.end() ? it->bytes : link.bytes * a.step.sim_s / b.step.sim_s;
    link.bytes = carry(bytes_a, link.bytes, k);
    link.utilisation = link.bandwidth_Bps > 0 ? link.bytes / (link.bandwidth_Bps * out.step.sim_s) : 0;
  }
  return out;
}

}  // namespace epsim::sim
