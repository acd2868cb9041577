// Chrome trace writer: "X" events for stream intervals, "C" counters for
// utilisation, "M" metadata naming processes and tracks.
#include "sim/report/trace.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "core/error.hpp"
#include "sim/report/report.hpp"

namespace epsim::sim {

namespace {

const char* phase_label(workloads::Phase p) {
  switch (p) {
    case workloads::Phase::kForward: return "fwd";
    case workloads::Phase::kRecompute: return "recompute";
    case workloads::Phase::kBackward: return "bwd";
    case workloads::Phase::kGradSync: return "grad-sync";
    case workloads::Phase::kOptimizer: return "optimizer";
  }
  return "?";
}

std::string escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// Microseconds as the trace prints them, to the nanosecond (the trace's
// display unit; finer digits only made the file larger: 96 -> 82 MB for
// the quick start); a non-finite time would make the file invalid JSON
// (`"ts":inf`) and is a bug in epsim, not input.
std::string us(double s) {
  if (!std::isfinite(s)) throw InternalError("trace: non-finite time " + fmt::format("{}", s));
  return fmt::format("{:.3f}", s * 1e6);
}

// The `count` most utilised links among the HBMs (`hbm`) or the others.
std::vector<int> busiest(const Timeline& t, const PlatformFacts& platform, bool hbm, int count) {
  std::vector<bool> is_hbm(platform.links.size(), false);
  for (const NpuFacts& n : platform.npus) is_hbm[n.hbm_link] = true;
  std::vector<bool> keep(platform.links.size());
  for (std::size_t l = 0; l < keep.size(); ++l) keep[l] = is_hbm[l] == hbm;
  return links_by_utilisation(t.link_bytes, platform, keep, count);
}

}  // namespace

std::string task_label(const workloads::Task& t) {
  std::string name = workloads::task_kind_label(t.kind);
  if (t.layer >= 0) name = fmt::format("L{} {}", t.layer, name);
  if (t.phase == workloads::Phase::kForward || t.phase == workloads::Phase::kRecompute ||
      t.phase == workloads::Phase::kBackward)
    name += fmt::format(" {}", phase_label(t.phase));
  if (t.micro_batch >= 0) name += fmt::format(" mb{}", t.micro_batch);
  return name;
}

void write_trace(std::ostream& out, const Timeline& timeline, const PlatformFacts& platform,
                 const Placement& placement, const workloads::TaskGraph& graph, const TraceOptions& options) {
  const char* sep = "\n";
  auto event = [&](const std::string& body) {
    out << sep << "{" << body << "}";
    sep = ",\n";
  };
  out << "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"task_kinds\":[";
  for (int k = 0; k < kTaskKinds; ++k)
    out << (k ? "," : "") << '"' << workloads::task_kind_label(static_cast<workloads::TaskKind>(k)) << '"';
  out << "]},\"traceEvents\":[";
  // Tracks: pid = node + 1, tid = local NPU x streams + stream + 1; pid 0 holds the counters.
  event(R"("ph":"M","pid":0,"name":"process_name","args":{"name":"links and HBM"})");
  std::map<int, bool> nodes;
  for (int rank = 0; rank < static_cast<int>(placement.npu_of_rank.size()); ++rank) {
    const NpuFacts& n = platform.npus[placement.npu_of_rank[rank]];
    if (!nodes[n.node]) {
      nodes[n.node] = true;
      event(fmt::format(R"("ph":"M","pid":{},"name":"process_name","args":{{"name":"node{}"}})", n.node + 1, n.node));
    }
    for (int s = 0; s < kStreams; ++s)
      event(fmt::format(R"("ph":"M","pid":{},"tid":{},"name":"thread_name","args":{{"name":"npu{} {}","rank":{}}})",
                        n.node + 1, n.local * kStreams + s + 1, n.local, to_string(static_cast<Stream>(s)), rank));
  }
  auto track = [&](const Interval& iv) {
    const NpuFacts& n = platform.npus[placement.npu_of_rank[iv.rank]];
    return std::pair{n.node + 1, n.local * kStreams + static_cast<int>(iv.stream) + 1};
  };
  for (const Interval& iv : timeline.intervals) {
    const workloads::Task& t = graph.tasks[iv.task];
    const auto [pid, tid] = track(iv);
    const std::string name = escaped(task_label(t));
    if (iv.start_s > iv.ready_s)
      event(fmt::format(R"("ph":"X","pid":{},"tid":{},"ts":{},"dur":{},"name":"wait: {}","cat":"wait")", pid, tid,
                        us(iv.ready_s), us(iv.start_s - iv.ready_s), name));
    std::string args = fmt::format(R"("task":{})", t.id);
    if (t.is_collective()) {
      const RankSent sent = bytes_sent_by(graph, t, iv.rank);
      args += fmt::format(R"(,"bytes":{:.0f},"peers":{})", sent.bytes, sent.peers);
    }
    event(fmt::format(R"("ph":"X","pid":{},"tid":{},"ts":{},"dur":{},"name":"{}","cat":"{}","args":{{{}}})", pid,
                      tid, us(iv.start_s), us(iv.end_s - iv.start_s), name, t.is_collective() ? "comm" : "compute",
                      args));
  }
  // The critical path as flow arrows: from each interval's slice to the next
  // one's, each bound at its slice's middle (a slice's start is also the
  // end of its wait slice).
  for (std::size_t i = 1; i < options.critical_path.size(); ++i) {
    const Interval& from = timeline.intervals[options.critical_path[i - 1]];
    const Interval& to = timeline.intervals[options.critical_path[i]];
    const auto [from_pid, from_tid] = track(from);
    const auto [to_pid, to_tid] = track(to);
    event(fmt::format(R"("ph":"s","id":{},"pid":{},"tid":{},"ts":{},"name":"critical path","cat":"critical path")", i,
                      from_pid, from_tid, us((from.start_s + from.end_s) / 2)));
    event(fmt::format(R"("ph":"f","bp":"e","id":{},"pid":{},"tid":{},"ts":{},"name":"critical path","cat":"critical path")",
                      i, to_pid, to_tid, us((to.start_s + to.end_s) / 2)));
  }
  // Counters: piecewise-constant utilisation, the sum of the rates of the
  // spans open at each instant (each span has one constant rate).
  std::vector<int> links = busiest(timeline, platform, false, options.counter_links);
  std::vector<int> hbms = busiest(timeline, platform, true, options.counter_hbms);
  links.insert(links.end(), hbms.begin(), hbms.end());
  std::vector<std::map<double, double>> delta(platform.links.size());  // per counted link: time -> change in B/s
  std::vector<bool> counted(platform.links.size(), false);
  for (int l : links) counted[static_cast<std::size_t>(l)] = true;
  for (const LinkSpan& s : timeline.link_spans) {
    if (!counted[static_cast<std::size_t>(s.link)] || !(s.end_s > s.start_s)) continue;
    const double rate = s.bytes / (s.end_s - s.start_s);
    delta[static_cast<std::size_t>(s.link)][s.start_s] += rate;
    delta[static_cast<std::size_t>(s.link)][s.end_s] -= rate;
  }
  for (int l : links) {
    double rate = 0;
    const std::string name = escaped(platform.links[l].name);
    for (const auto& [time_s, d] : delta[static_cast<std::size_t>(l)]) {
      rate += d;
      const double util = std::max(0.0, rate / platform.links[l].bandwidth_Bps);
      event(fmt::format(R"("ph":"C","pid":0,"ts":{},"name":"{}","args":{{"utilisation":{:.6f}}})", us(time_s), name, util));
    }
  }
  out << "\n]}\n";
}

}  // namespace epsim::sim
