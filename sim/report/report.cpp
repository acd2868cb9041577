// Building the report from a timeline and its bounds.
#include "sim/report/report.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include <fmt/format.h>

namespace epsim::sim {

using workloads::TaskKind;

namespace {

using Spans = std::vector<std::pair<double, double>>;

// Sorted, disjoint union of intervals.
Spans merge(Spans spans) {
  std::sort(spans.begin(), spans.end());
  Spans out;
  for (const auto& s : spans) {
    if (s.second <= s.first) continue;
    if (!out.empty() && s.first <= out.back().second)
      out.back().second = std::max(out.back().second, s.second);
    else
      out.push_back(s);
  }
  return out;
}

double length(const Spans& spans) {
  double total = 0;
  for (const auto& s : spans) total += s.second - s.first;
  return total;
}

// Length of the intersection of two merged span lists.
double overlap(const Spans& a, const Spans& b) {
  double total = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    total += std::max(0.0, std::min(a[i].second, b[j].second) - std::max(a[i].first, b[j].first));
    if (a[i].second < b[j].second)
      ++i;
    else
      ++j;
  }
  return total;
}

bool above(double sim_s, double bound_s) { return sim_s > bound_s * (1 + 1e-9) + 1e-15; }

}  // namespace

Report build_report(const Timeline& timeline, const StepBounds& bounds, const PlatformFacts& platform,
                    const workloads::TaskGraph& graph, const ReplayOptions& resolved, int top_links) {
  Report rep;
  rep.schedule = to_string(resolved.schedule);
  rep.algorithm = to_string(*resolved.algorithm);
  rep.fidelity = to_string(*resolved.fidelity);
  rep.all_reduce = to_string(resolved.all_reduce);
  rep.ranks = graph.ranks;
  rep.tasks = static_cast<int>(graph.tasks.size());
  rep.activities = timeline.activities;
  const int ranks = graph.ranks;

  std::vector<Spans> compute(ranks), comm(ranks);
  std::vector<double> compute_busy(ranks, 0.0);
  std::vector<double> kind_sim(kTaskKinds, 0.0);
  std::vector<bool> kind_present(kTaskKinds, false);
  double peer_wait_s = 0;
  for (const Interval& iv : timeline.intervals) {
    const workloads::Task& t = graph.tasks[iv.task];
    kind_present[static_cast<int>(t.kind)] = true;
    if (t.is_collective()) {
      comm[iv.rank].emplace_back(iv.start_s, iv.end_s);
      peer_wait_s += iv.start_s - iv.ready_s;
    } else {
      compute[iv.rank].emplace_back(iv.start_s, iv.end_s);
      compute_busy[iv.rank] += iv.end_s - iv.start_s;
      kind_sim[static_cast<int>(t.kind)] += (iv.end_s - iv.start_s) / ranks;
    }
  }
  double contention_s = 0;
  for (const CollectiveSpan& c : timeline.collectives) {
    const double span_s = c.end_s - c.start_s;
    kind_sim[static_cast<int>(graph.tasks[c.task].kind)] += span_s;
    contention_s += std::max(0.0, span_s - bounds.task_s[c.task]);
  }

  for (int k = 0; k < kTaskKinds; ++k) {
    if (!kind_present[k]) continue;
    const auto kind = static_cast<TaskKind>(k);
    ReportRow row;
    row.name = workloads::task_kind_label(kind);
    row.sim_s = kind_sim[k];
    const bool collective = kind == TaskKind::kDispatch || kind == TaskKind::kCombine || kind == TaskKind::kGradAllReduce;
    if (collective) {
      for (const workloads::Task& t : graph.tasks)
        if (t.kind == kind) row.bound_s += bounds.task_s[t.id];
    } else {
      for (int r = 0; r < ranks; ++r) row.bound_s += bounds.rank_kind_s[static_cast<std::size_t>(r) * kTaskKinds + k] / ranks;
    }
    if (!above(row.sim_s, row.bound_s))
      row.cause = "on the bound";
    else if (collective)
      row.cause = "contention: links/HBM shared with concurrent activities or uneven flows";
    else
      row.cause = "compute/HBM shared with communication kernels";
    rep.phases.push_back(row);
  }

  double exposed_total = 0, comm_total = 0, hidden_total = 0;
  for (int r = 0; r < ranks; ++r) {
    Spans c = merge(comm[r]), k = merge(compute[r]);
    const double comm_s = length(c), hidden_s = overlap(c, k);
    comm_total += comm_s;
    hidden_total += hidden_s;
    exposed_total += comm_s - hidden_s;
    rep.exposed_comm_max_s = std::max(rep.exposed_comm_max_s, comm_s - hidden_s);
  }
  rep.exposed_comm_mean_s = exposed_total / ranks;
  rep.comm_mean_s = comm_total / ranks;
  rep.overlap_fraction = comm_total > 0 ? hidden_total / comm_total : 0;
  rep.peer_wait_mean_s = peer_wait_s / ranks;

  for (int r = 0; r < ranks; ++r) {
    rep.mean_compute_s += compute_busy[r] / ranks;
    if (compute_busy[r] > rep.straggler_compute_s) {
      rep.straggler_compute_s = compute_busy[r];
      rep.straggler_rank = r;
    }
  }
  rep.straggler_ratio = rep.mean_compute_s > 0 ? rep.straggler_compute_s / rep.mean_compute_s : 1;

  rep.critical_path_bound_s = bounds.critical_path_s;
  rep.rank_streams_bound_s = bounds.rank_streams_s;
  rep.step = {"step", timeline.step_s, bounds.step_s, ""};
  if (!above(rep.step.sim_s, rep.step.bound_s)) {
    rep.step.cause = "on the bound";
  } else {
    std::vector<std::pair<double, std::string>> causes;
    auto ms = [](double s) { return fmt::format("{:.3f} ms", s * 1e3); };
    if (rep.peer_wait_mean_s > 0) causes.emplace_back(rep.peer_wait_mean_s, "dependency stalls " + ms(rep.peer_wait_mean_s) + " per rank");
    if (contention_s > 0) causes.emplace_back(contention_s, "contention " + ms(contention_s) + " over collective bounds");
    if (rep.exposed_comm_mean_s > 0 && resolved.schedule == Schedule::kOverlap)
      causes.emplace_back(rep.exposed_comm_mean_s, "exposed communication " + ms(rep.exposed_comm_mean_s) + " per rank");
    if (rep.straggler_ratio > 1 + 1e-9)
      causes.emplace_back((rep.straggler_compute_s - rep.mean_compute_s),
                          fmt::format("skew: rank {} computes x{:.3f} the mean", rep.straggler_rank, rep.straggler_ratio));
    std::stable_sort(causes.begin(), causes.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    // Causes under 0.1 % of the step are noise (e.g. sampling jitter in a uniform routing).
    for (const auto& c : causes)
      if (c.first >= 1e-3 * rep.step.sim_s) rep.step.cause += (rep.step.cause.empty() ? "" : "; ") + c.second;
    if (rep.step.cause.empty()) rep.step.cause = "schedule: streams idle between dependent tasks";
  }

  for (std::size_t l = 0; l < platform.links.size(); ++l) {
    if (timeline.link_bytes[l] <= 0) continue;
    const LinkFacts& f = platform.links[l];
    rep.busiest_links.push_back(
        {f.name, timeline.link_bytes[l], f.bandwidth_Bps,
         timeline.step_s > 0 ? timeline.link_bytes[l] / (f.bandwidth_Bps * timeline.step_s) : 0});
  }
  std::sort(rep.busiest_links.begin(), rep.busiest_links.end(), [](const LinkRow& a, const LinkRow& b) {
    return std::make_tuple(-a.utilisation, a.link) < std::make_tuple(-b.utilisation, b.link);
  });
  if (static_cast<int>(rep.busiest_links.size()) > top_links) rep.busiest_links.resize(top_links);
  return rep;
}

}  // namespace epsim::sim
