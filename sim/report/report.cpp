// Building the report from a timeline and its bounds.
#include "sim/report/report.hpp"

#include <algorithm>
#include <map>
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

// Time of `spans` outside `merged` (a merged, sorted union).
double outside(const Spans& spans, const Spans& merged) {
  const Spans a = merge(spans);
  return length(a) - overlap(a, merged);
}

bool above(double sim_s, double bound_s) { return sim_s > bound_s * (1 + 1e-9) + 1e-15; }

}  // namespace

std::vector<int> links_by_utilisation(const std::vector<double>& link_bytes, const PlatformFacts& platform,
                                      const std::vector<bool>& keep, int count) {
  std::vector<int> out;
  for (std::size_t l = 0; l < platform.links.size(); ++l)
    if (keep[l] && link_bytes[l] > 0) out.push_back(static_cast<int>(l));
  // Utilisation over the same step: bytes / bandwidth orders links alike.
  auto busy_s = [&](int l) { return link_bytes[l] / platform.links[l].bandwidth_Bps; };
  std::sort(out.begin(), out.end(), [&](int a, int b) {
    return std::make_tuple(-busy_s(a), platform.links[a].name) < std::make_tuple(-busy_s(b), platform.links[b].name);
  });
  if (static_cast<int>(out.size()) > count) out.resize(count);
  return out;
}

namespace {

// The report row a collective's time goes to: (kind, phase) for dispatch
// and combine, (kind, -1) for the others.
std::pair<int, int> collective_row_key(const workloads::Task& t) {
  const bool by_phase = t.kind == TaskKind::kDispatch || t.kind == TaskKind::kCombine;
  return {static_cast<int>(t.kind), by_phase ? static_cast<int>(t.phase) : -1};
}

const char* phase_suffix(workloads::Phase p) {
  switch (p) {
    case workloads::Phase::kForward: return "fwd";
    case workloads::Phase::kRecompute: return "recomp";
    case workloads::Phase::kBackward: return "bwd";
    default: return "";
  }
}

}  // namespace

RankSent bytes_sent_by(const workloads::TaskGraph& graph, const workloads::Task& t, int rank) {
  RankSent out;
  if (t.uses_traffic()) {
    const workloads::TrafficMatrix& m = graph.traffic[static_cast<std::size_t>(t.traffic)];
    int src = rank;  // the matrix's index of `rank`: its position in groups[0] when there are groups
    if (!t.groups.empty()) {
      const std::vector<int>& g = t.groups.front();
      src = static_cast<int>(std::find(g.begin(), g.end(), rank) - g.begin());
      if (src >= static_cast<int>(g.size())) return out;
    }
    if (src >= m.ranks) return out;
    for (int dst = 0; dst < m.ranks; ++dst) {
      if (dst == src || m.at(src, dst) == 0) continue;
      out.bytes += static_cast<double>(m.at(src, dst)) * t.bytes_per_token;
      ++out.peers;
    }
    return out;
  }
  for (const std::vector<int>& g : t.groups) {
    if (g.size() < 2 || std::find(g.begin(), g.end(), rank) == g.end()) continue;
    const double n = static_cast<double>(g.size());
    const bool halves = t.kind == TaskKind::kGradAllReduce && t.group_op != workloads::GroupCollective::kAllReduce;
    out.bytes = t.bytes * (halves ? 1.0 : 2.0) * (n - 1) / n;
    out.peers = static_cast<int>(g.size()) - 1;
  }
  return out;
}

namespace {

// What one collective task's participants send to other ranks in all, and how many send.
struct SentBytes {
  double bytes = 0;
  int senders = 0;
};
SentBytes sent_bytes(const workloads::TaskGraph& graph, const workloads::Task& t, const std::vector<bool>& joins) {
  SentBytes out;
  for (int r = 0; r < graph.ranks; ++r) {
    if (!joins[static_cast<std::size_t>(r)]) continue;
    const RankSent b = bytes_sent_by(graph, t, r);
    out.bytes += b.bytes;
    out.senders += b.bytes > 0;
  }
  return out;
}

// The rank to name for the largest of `per_rank` (`max_s`): the first
// within 1e-9 of it, so that ranks doing the same work, whose times differ
// only in their last bits, give the same name however the replay rounded.
int slowest_rank(const std::vector<double>& per_rank, double max_s) {
  for (std::size_t r = 0; r < per_rank.size(); ++r)
    if (per_rank[r] >= max_s * (1 - 1e-9)) return static_cast<int>(r);
  return per_rank.empty() ? -1 : 0;
}

// A collective row's per-rank sums: the spans and bounds of the row's
// collectives each rank takes part in (with pipeline stages, its own
// stage's); the bytes per rank are the mean over all ranks, the rate is per
// sending rank.
ReportRow collective_row(const std::string& name, const std::vector<int>& tasks, const std::vector<double>& span_of,
                         const StepBounds& bounds, const workloads::TaskGraph& graph, std::vector<double>& sim_s,
                         std::vector<double>& bound_s) {
  const auto ranks = static_cast<std::size_t>(graph.ranks);
  sim_s.assign(ranks, 0.0);
  bound_s.assign(ranks, 0.0);
  double sent = 0, sender_s = 0;
  for (int id : tasks) {
    const workloads::Task& t = graph.tasks[static_cast<std::size_t>(id)];
    const std::vector<bool> joins = graph.members(t);
    for (std::size_t r = 0; r < ranks; ++r) {
      if (!joins[r]) continue;
      sim_s[r] += span_of[static_cast<std::size_t>(id)];
      bound_s[r] += bounds.task_s[static_cast<std::size_t>(id)];
    }
    const SentBytes b = sent_bytes(graph, t, joins);
    sent += b.bytes;
    sender_s += b.senders * span_of[static_cast<std::size_t>(id)];
  }
  ReportRow row;
  row.collective = true;
  row.name = name;
  row.bytes_per_rank = sent / static_cast<double>(ranks);
  row.achieved_Bps = sender_s > 0 ? sent / sender_s : 0;
  reduce_row(row, sim_s, bound_s);
  return row;
}

}  // namespace

void reduce_row(ReportRow& row, const std::vector<double>& sim_s, const std::vector<double>& bound_s) {
  const std::size_t ranks = sim_s.size();
  row.sim_s = row.bound_s = row.sim_max_s = row.bound_max_s = 0;
  // A collective row's means are over every rank (one that takes no part
  // spent nothing in the row); a compute row's over the ranks that run the
  // kind (with pipeline stages, a dense FFN runs on the first stage only:
  // its skew is within that stage).
  std::size_t running = 0;
  for (std::size_t r = 0; r < ranks; ++r) running += bound_s[r] > 0 || sim_s[r] > 0;
  if (!row.collective) row.ranks_running = static_cast<int>(running);
  const double n = static_cast<double>(row.collective ? ranks : std::max<std::size_t>(running, 1));
  for (std::size_t r = 0; r < ranks; ++r) {
    row.sim_s += sim_s[r] / n;
    row.bound_s += bound_s[r] / n;
    row.bound_max_s = std::max(row.bound_max_s, bound_s[r]);
    row.sim_max_s = std::max(row.sim_max_s, sim_s[r]);
  }
  row.max_rank = slowest_rank(sim_s, row.sim_max_s);
  if (row.collective) {
    // Every rank alike (no stages): no rank to name.
    if (!(row.sim_max_s > row.sim_s * (1 + 1e-12))) {
      row.sim_max_s = row.sim_s;
      row.bound_max_s = row.bound_s;
      row.max_rank = -1;
    }
    row.cause = above(row.sim_s, row.bound_s) ? "contention: links/HBM shared with concurrent activities or uneven flows"
                                              : "on the bound";
    return;
  }
  const bool slowed = above(row.sim_s, row.bound_s) || above(row.sim_max_s, row.bound_max_s);
  row.cause = slowed ? "compute/HBM shared with communication kernels" : "on the bound";
  // The mean hides a hot rank: say so whenever the max stands out.
  if (row.sim_s > 0 && row.sim_max_s > row.sim_s * 1.001)
    row.cause += fmt::format("; skew: rank {} x{:.3f} the mean", row.max_rank, row.sim_max_s / row.sim_s);
}

void reduce_ranks(Report& rep, const ReportSums& sums, const PlatformFacts& platform, double step_s) {
  const auto ranks = static_cast<int>(sums.compute_s.size());
  rep.exposed_comm_max_s = rep.idle_max_s = 0;
  rep.idle_max_rank = 0;
  for (int r = 0; r < ranks; ++r) {
    rep.exposed_comm_max_s = std::max(rep.exposed_comm_max_s, sums.exposed_s[r]);
    if (sums.idle_s[r] > rep.idle_max_s) {
      rep.idle_max_s = sums.idle_s[r];
      rep.idle_max_rank = r;
    }
  }
  rep.mean_compute_s = rep.straggler_compute_s = 0;
  rep.straggler_rank = 0;
  for (int r = 0; r < ranks; ++r) {
    rep.mean_compute_s += sums.compute_s[r] / ranks;
    if (sums.compute_s[r] > rep.straggler_compute_s) {
      rep.straggler_compute_s = sums.compute_s[r];
      rep.straggler_rank = r;
    }
  }
  rep.straggler_ratio = rep.mean_compute_s > 0 ? rep.straggler_compute_s / rep.mean_compute_s : 1;
  rep.layer_straggler_layer = -1;
  rep.layer_straggler_rank = 0;
  rep.layer_straggler_compute_s = rep.layer_mean_compute_s = 0;
  double worst_excess_s = 0;
  for (int l = 0; l < sums.layers; ++l) {
    const double* row = &sums.layer_rank_s[static_cast<std::size_t>(l) * ranks];
    // Over the ranks that run the layer (its pipeline stage's).
    double mean_s = 0, max_s = -1;
    int max_rank = 0, running = 0;
    for (int r = 0; r < ranks; ++r) {
      mean_s += row[r];
      running += row[r] > 0;
      if (row[r] > max_s) {
        max_s = row[r];
        max_rank = r;
      }
    }
    if (!(mean_s > 0)) continue;
    mean_s /= running;
    if (rep.layer_straggler_layer < 0 || max_s - mean_s > worst_excess_s) {
      worst_excess_s = max_s - mean_s;
      rep.layer_straggler_layer = l;
      rep.layer_straggler_rank = max_rank;
      rep.layer_straggler_compute_s = max_s;
      rep.layer_mean_compute_s = mean_s;
    }
  }
  rep.busiest_links.clear();
  const std::vector<bool> all(platform.links.size(), true);
  for (int l : links_by_utilisation(sums.link_bytes, platform, all, sums.top_links)) {
    const LinkFacts& f = platform.links[l];
    rep.busiest_links.push_back(
        {f.name, sums.link_bytes[l], f.bandwidth_Bps, step_s > 0 ? sums.link_bytes[l] / (f.bandwidth_Bps * step_s) : 0});
  }
}

Report build_report(const Timeline& timeline, const StepBounds& bounds, const PlatformFacts& platform,
                    const Placement& placement, const workloads::TaskGraph& graph, const ReplayOptions& resolved,
                    int top_links, ReportSums* sums_out) {
  Report rep;
  ReportSums sums;
  sums.top_links = top_links;
  rep.schedule = to_string(resolved.schedule);
  rep.algorithm = to_string(*resolved.algorithm);
  rep.dispatch_kernel =
      topology::kDispatchKernelNames[static_cast<int>(resolved.kernels.value_or(KernelCosts{}).dispatch)];
  rep.fidelity = to_string(*resolved.fidelity);
  rep.all_reduce = to_string(resolved.all_reduce);
  rep.ranks = graph.ranks;
  rep.tasks = static_cast<int>(graph.tasks.size());
  rep.routed_picks = graph.routed_picks;
  rep.dropped_picks = graph.dropped_picks;
  rep.activities = timeline.activities;
  rep.platform_nodes = platform.nodes;
  const int ranks = graph.ranks;
  {
    std::vector<bool> node_used(static_cast<std::size_t>(platform.nodes), false);
    for (int npu : placement.npu_of_rank) node_used[static_cast<std::size_t>(platform.npus[npu].node)] = true;
    for (int npu : placement.phantom_npus) node_used[static_cast<std::size_t>(platform.npus[npu].node)] = true;
    rep.nodes_used = static_cast<int>(std::count(node_used.begin(), node_used.end(), true));
  }

  std::vector<Spans> compute(ranks), comm(ranks);
  std::vector<double>& compute_busy = sums.compute_s;
  compute_busy.assign(ranks, 0.0);
  // [kind][rank]: compute busy time per rank.
  std::vector<std::vector<double>> kind_rank_s(kTaskKinds, std::vector<double>(ranks, 0.0));
  std::vector<bool> kind_present(kTaskKinds, false);
  int layers = 0;
  for (const workloads::Task& t : graph.tasks) layers = std::max(layers, t.layer + 1);
  sums.layers = layers;
  std::vector<double>& layer_rank_s = sums.layer_rank_s;
  layer_rank_s.assign(static_cast<std::size_t>(layers) * ranks, 0.0);
  // Waits of a rank's concurrent collectives (several streams) overlap: the
  // union of their spans, so the figure is wall time, at most the step.
  // The waits at dispatch/combine (a slower peer of the EP group: load
  // skew) and at pipeline p2p (the neighbouring stage) are also kept apart.
  std::vector<Spans> waits(ranks), ep_waits(ranks), p2p_waits(ranks);
  for (const Interval& iv : timeline.intervals) {
    const workloads::Task& t = graph.tasks[iv.task];
    kind_present[static_cast<int>(t.kind)] = true;
    if (t.is_collective()) {
      comm[iv.rank].emplace_back(iv.start_s, iv.end_s);
      if (iv.start_s > iv.ready_s) {
        waits[iv.rank].emplace_back(iv.ready_s, iv.start_s);
        if (t.kind == TaskKind::kDispatch || t.kind == TaskKind::kCombine)
          ep_waits[iv.rank].emplace_back(iv.ready_s, iv.start_s);
        else if (t.kind == TaskKind::kPipelineP2p)
          p2p_waits[iv.rank].emplace_back(iv.ready_s, iv.start_s);
      }
    } else {
      const double busy_s = iv.end_s - iv.start_s;
      compute[iv.rank].emplace_back(iv.start_s, iv.end_s);
      compute_busy[iv.rank] += busy_s;
      kind_rank_s[static_cast<int>(t.kind)][iv.rank] += busy_s;
      if (t.layer >= 0) layer_rank_s[static_cast<std::size_t>(t.layer) * ranks + iv.rank] += busy_s;
    }
  }
  // Dispatch and combine get a row per phase (forward, recompute, backward).
  std::map<std::pair<int, int>, std::vector<int>> collective_rows;
  std::vector<double> span_of(graph.tasks.size(), 0.0);  // each collective's span, last entry to end
  for (const CollectiveSpan& c : timeline.collectives) span_of[static_cast<std::size_t>(c.task)] += c.end_s - c.start_s;
  for (const workloads::Task& t : graph.tasks)
    if (t.is_collective()) collective_rows[collective_row_key(t)].push_back(t.id);

  for (int k = 0; k < kTaskKinds; ++k) {
    if (!kind_present[k]) continue;
    const auto kind = static_cast<TaskKind>(k);
    workloads::Task probe;
    probe.kind = kind;
    const bool collective = probe.is_collective();
    if (!collective) {
      std::vector<double> bound_s(ranks);
      for (int r = 0; r < ranks; ++r) bound_s[r] = bounds.rank_kind_s[static_cast<std::size_t>(r) * kTaskKinds + k];
      ReportRow row;
      row.name = workloads::task_kind_label(kind);
      reduce_row(row, kind_rank_s[k], bound_s);
      rep.phases.push_back(std::move(row));
      sums.row_sim_s.push_back(std::move(kind_rank_s[k]));
      sums.row_bound_s.push_back(std::move(bound_s));
      continue;
    }
    for (const auto& [key, tasks] : collective_rows) {
      if (key.first != k) continue;
      std::string name = workloads::task_kind_label(kind);
      if (key.second >= 0) name += std::string(" ") + phase_suffix(static_cast<workloads::Phase>(key.second));
      std::vector<double> sim_s, bound_s;
      rep.phases.push_back(collective_row(name, tasks, span_of, bounds, graph, sim_s, bound_s));
      sums.row_sim_s.push_back(std::move(sim_s));
      sums.row_bound_s.push_back(std::move(bound_s));
    }
  }

  double exposed_total = 0, comm_total = 0, hidden_total = 0;
  sums.exposed_s.assign(ranks, 0.0);
  sums.idle_s.assign(ranks, 0.0);
  for (int r = 0; r < ranks; ++r) {
    Spans c = merge(comm[r]), k = merge(compute[r]);
    const double comm_s = length(c), hidden_s = overlap(c, k);
    comm_total += comm_s;
    hidden_total += hidden_s;
    exposed_total += comm_s - hidden_s;
    sums.exposed_s[r] = comm_s - hidden_s;
    Spans both = c;
    both.insert(both.end(), k.begin(), k.end());
    both = merge(std::move(both));
    const double idle_s = std::max(0.0, timeline.step_s - length(both));
    rep.idle_mean_s += idle_s / ranks;
    sums.idle_s[r] = idle_s;
    // Idle time by cause: waiting at an EP all-to-all for a slower peer
    // (load skew), then, of the rest, waiting for the neighbouring pipeline
    // stage and, with stages, before the rank's first and after its last
    // task (the pipeline's fill and drain).
    const double skew_s = outside(ep_waits[r], both);
    Spans pipeline = p2p_waits[r];
    if (graph.stages > 1 && !both.empty()) {
      pipeline.emplace_back(0.0, both.front().first);
      pipeline.emplace_back(both.back().second, timeline.step_s);
    }
    Spans busy_or_skew = both;
    busy_or_skew.insert(busy_or_skew.end(), ep_waits[r].begin(), ep_waits[r].end());
    const double pipeline_s = outside(pipeline, merge(std::move(busy_or_skew)));
    rep.idle_skew_mean_s += skew_s / ranks;
    rep.idle_pipeline_mean_s += pipeline_s / ranks;
  }
  rep.exposed_comm_mean_s = exposed_total / ranks;
  rep.comm_mean_s = comm_total / ranks;
  rep.overlap_fraction = comm_total > 0 ? hidden_total / comm_total : 0;
  for (int r = 0; r < ranks; ++r) rep.peer_wait_mean_s += length(merge(std::move(waits[r]))) / ranks;

  rep.critical_path_bound_s = bounds.critical_path_s;
  rep.rank_streams_bound_s = bounds.rank_streams_s;
  rep.step.name = "step";
  rep.step.sim_s = rep.step.sim_max_s = timeline.step_s;
  rep.step.bound_s = rep.step.bound_max_s = bounds.step_s;
  rep.gap = critical_path_gap(timeline, bounds, platform, placement, graph, resolved);
  if (!above(rep.step.sim_s, rep.step.bound_s)) {
    rep.step.cause = "on the bound";
  } else {
    // The parts of the gap, largest first; parts under 0.1 % of the step are left out of this summary.
    std::vector<std::pair<double, std::string>> parts = {
        {rep.gap.serialisation_s(), "serialisation"},
        {rep.gap.comm_excess_s, "contention"},
        {rep.gap.compute_excess_s, "compute above rooflines"},
        {rep.gap.idle_s, "idle"}};
    std::stable_sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (const auto& [s, name] : parts)
      if (std::fabs(s) >= 1e-3 * rep.step.sim_s)
        rep.step.cause += (rep.step.cause.empty() ? "" : ", ") +
                          (std::fabs(s) >= 1 ? fmt::format("{} {:.3f} s", name, s) : fmt::format("{} {:.3f} ms", name, s * 1e3));
    rep.step.cause = "critical path: " + (rep.step.cause.empty() ? std::string("none above 0.1 %") : rep.step.cause);
  }

  sums.link_bytes = timeline.link_bytes;
  reduce_ranks(rep, sums, platform, timeline.step_s);
  if (sums_out != nullptr) *sums_out = std::move(sums);
  return rep;
}

void add_throughput(Report& report, const PlatformFacts& platform, const Placement& placement,
                    const std::optional<workloads::Dtype>& compute_fallback) {
  const Scenario& sc = report.scenario;
  report.has_throughput = sc.global_batch > 0 && sc.sequence_length > 0 && report.step.sim_s > 0;
  if (!report.has_throughput) return;
  Throughput& t = report.throughput;
  // A folded replay's kept ranks stand for all: the throughput is per NPU of the whole job.
  const double ranks = static_cast<double>(placement.ranks_and_phantoms());
  const double per_sequence =
      sc.serving_phase.empty() ? static_cast<double>(sc.sequence_length) : sc.serving_tokens_per_sequence;
  t.tokens_per_step = static_cast<double>(sc.global_batch) * per_sequence;
  t.tokens_per_s = t.tokens_per_step / report.step.sim_s;
  t.tokens_per_s_per_npu = t.tokens_per_s / ranks;
  // Model FLOPs count the tokens the step computes: a serving step's cache
  // hits and rejected drafts are served or computed, not both.
  const double computed = sc.serving_phase.empty() ? 1.0 : sc.sequence_length / per_sequence;
  t.model_flops_per_s_per_npu = sc.model_flops_per_token * t.tokens_per_s_per_npu * computed;
  for (int id = 0; id < placement.ranks_and_phantoms(); ++id) {
    const NpuFacts& facts = platform.npus[static_cast<std::size_t>(placement.npu(id))];
    t.peak_dtype = effective_dtype(facts, sc.mfu_dtype, compute_fallback);
    t.peak_flops_per_s_per_npu += peak_flops_per_s(facts, t.peak_dtype) / ranks;
    t.hbm_Bps_per_npu += facts.hbm_bandwidth_Bps / ranks;
  }
  t.mfu = t.peak_flops_per_s_per_npu > 0 ? t.model_flops_per_s_per_npu / t.peak_flops_per_s_per_npu : 0;
  if (t.hbm_Bps_per_npu > 0) t.serving_memory_s = (sc.serving_weight_bytes + sc.serving_cache_bytes) / t.hbm_Bps_per_npu;
  if (t.peak_flops_per_s_per_npu > 0) t.serving_compute_s = sc.serving_flops / t.peak_flops_per_s_per_npu;
}

}  // namespace epsim::sim
