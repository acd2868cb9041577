// The steady state's period inside a replay, and a report carried from two
// replays to the step's micro-batch count.
#include "sim/report/steady_state.hpp"

#include <algorithm>
#include <limits>

#include "core/error.hpp"

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

std::vector<double> carry(const std::vector<double>& a, const std::vector<double>& b, double k) {
  if (!a.empty() && a.size() != b.size())
    throw InternalError("steady state: the two replays' per-rank sums differ in size");
  std::vector<double> out(b.size());
  for (std::size_t i = 0; i < b.size(); ++i) out[i] = carry(a.empty() ? 0.0 : a[i], b[i], k);
  return out;
}

}  // namespace

Carried extrapolate_report(const Report& a, const ReportSums& sums_a, const Report& b, const ReportSums& sums_b,
                           double k, const PlatformFacts& platform) {
  Carried out{b, {}};
  Report& r = out.report;
  carry_row(a.step, r.step, k);
  r.critical_path_bound_s = carry(a.critical_path_bound_s, b.critical_path_bound_s, k);
  r.rank_streams_bound_s = carry(a.rank_streams_bound_s, b.rank_streams_bound_s, k);
  GapParts& g = r.gap;
  g.path_tasks = carry_count(a.gap.path_tasks, b.gap.path_tasks, k);
  g.path_collectives = carry_count(a.gap.path_collectives, b.gap.path_collectives, k);
  g.step_bound_s = carry(a.gap.step_bound_s, b.gap.step_bound_s, k);
  g.path_compute_bound_s = carry(a.gap.path_compute_bound_s, b.gap.path_compute_bound_s, k);
  g.path_comm_bound_s = carry(a.gap.path_comm_bound_s, b.gap.path_comm_bound_s, k);
  g.compute_excess_s = carry(a.gap.compute_excess_s, b.gap.compute_excess_s, k);
  g.comm_excess_s = carry(a.gap.comm_excess_s, b.gap.comm_excess_s, k);
  g.idle_s = carry(a.gap.idle_s, b.gap.idle_s, k);

  // Rank by rank: a row's mean, max and slowest rank are those of the carried per-rank sums.
  ReportSums& sums = out.sums;
  sums.top_links = sums_b.top_links;
  sums.layers = sums_b.layers;
  for (std::size_t i = 0; i < r.phases.size(); ++i) {
    ReportRow& row = r.phases[i];
    const auto it = std::find_if(a.phases.begin(), a.phases.end(), [&](const ReportRow& x) { return x.name == row.name; });
    const ReportRow row_a = it == a.phases.end() ? ReportRow{} : *it;
    const std::vector<double> none;
    const auto j = static_cast<std::size_t>(it - a.phases.begin());
    sums.row_sim_s.push_back(carry(it == a.phases.end() ? none : sums_a.row_sim_s[j], sums_b.row_sim_s[i], k));
    sums.row_bound_s.push_back(carry(it == a.phases.end() ? none : sums_a.row_bound_s[j], sums_b.row_bound_s[i], k));
    carry_row(row_a, row, k);
    reduce_row(row, sums.row_sim_s.back(), sums.row_bound_s.back());
  }
  sums.compute_s = carry(sums_a.compute_s, sums_b.compute_s, k);
  sums.exposed_s = carry(sums_a.exposed_s, sums_b.exposed_s, k);
  sums.idle_s = carry(sums_a.idle_s, sums_b.idle_s, k);
  sums.layer_rank_s = carry(sums_a.layer_rank_s, sums_b.layer_rank_s, k);
  sums.link_bytes = carry(sums_a.link_bytes, sums_b.link_bytes, k);

  const double hidden = carry(a.overlap_fraction * a.comm_mean_s, b.overlap_fraction * b.comm_mean_s, k);
  r.comm_mean_s = carry(a.comm_mean_s, b.comm_mean_s, k);
  r.overlap_fraction = r.comm_mean_s > 0 ? hidden / r.comm_mean_s : 0;
  r.exposed_comm_mean_s = carry(a.exposed_comm_mean_s, b.exposed_comm_mean_s, k);
  r.peer_wait_mean_s = carry(a.peer_wait_mean_s, b.peer_wait_mean_s, k);
  r.idle_mean_s = carry(a.idle_mean_s, b.idle_mean_s, k);
  r.idle_skew_mean_s = carry(a.idle_skew_mean_s, b.idle_skew_mean_s, k);
  r.idle_pipeline_mean_s = carry(a.idle_pipeline_mean_s, b.idle_pipeline_mean_s, k);
  reduce_ranks(r, sums, platform, r.step.sim_s);
  return out;
}

}  // namespace epsim::sim
