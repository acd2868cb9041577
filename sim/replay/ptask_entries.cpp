// Re-pairing a parallel task's transfers with the same per-link bytes.
#include "sim/replay/ptask_entries.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <utility>

namespace epsim::sim {

namespace {

constexpr double kRelativeTolerance = 1e-12;

// Bytes per link of `transfers`, as (link, bytes) in link order.
std::vector<std::pair<int, double>> link_loads(const std::vector<Transfer>& transfers, const PlatformFacts& platform,
                                               std::vector<double>& scratch) {
  std::vector<int> touched;
  for (const Transfer& t : transfers) {
    auto [first, last] = platform.routes.links(t.src_npu, t.dst_npu);
    for (const int* l = first; l != last; ++l) {
      if (scratch[*l] == 0) touched.push_back(*l);
      scratch[*l] += t.bytes;
    }
  }
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  std::vector<std::pair<int, double>> out;
  for (int l : touched) {
    out.emplace_back(l, scratch[l]);
    scratch[l] = 0;
  }
  return out;
}

bool same_loads(const std::vector<std::pair<int, double>>& a, const std::vector<std::pair<int, double>>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].first != b[i].first || !(std::abs(a[i].second - b[i].second) <= kRelativeTolerance * a[i].second))
      return false;
  return true;
}

// North-west-corner re-pairing of one group with the same bytes sent by
// each source and received by each destination; destinations are taken
// from half-way round their list, so that a balanced group never pairs an
// NPU with itself. Unset when it would (or when it saves nothing).
std::optional<std::vector<Transfer>> repair(const std::vector<Transfer>& group) {
  std::map<int, double> sent, received;
  double total = 0;
  for (const Transfer& t : group) {
    sent[t.src_npu] += t.bytes;
    received[t.dst_npu] += t.bytes;
    total += t.bytes;
  }
  if (sent.size() + received.size() - 1 >= group.size()) return std::nullopt;
  std::vector<std::pair<int, double>> src(sent.begin(), sent.end()), dst(received.begin(), received.end());
  std::rotate(dst.begin(), dst.begin() + static_cast<std::ptrdiff_t>(dst.size() / 2), dst.end());
  const double eps = kRelativeTolerance * total;
  std::vector<Transfer> out;
  std::size_t i = 0, j = 0;
  while (i < src.size() && j < dst.size()) {
    const double x = std::min(src[i].second, dst[j].second);
    if (x > eps) {
      if (src[i].first == dst[j].first) return std::nullopt;
      out.push_back({src[i].first, dst[j].first, x});
    }
    src[i].second -= x;
    dst[j].second -= x;
    if (src[i].second <= eps) ++i;
    if (j < dst.size() && dst[j].second <= eps) ++j;
  }
  return out;
}

// The group re-paired when that keeps every link's bytes, else as it is.
void append_group(const std::vector<Transfer>& group, const PlatformFacts& platform, std::vector<double>& scratch,
                  std::vector<Transfer>& out) {
  if (const auto repaired = repair(group)) {
    if (same_loads(link_loads(group, platform, scratch), link_loads(*repaired, platform, scratch))) {
      out.insert(out.end(), repaired->begin(), repaired->end());
      return;
    }
  }
  out.insert(out.end(), group.begin(), group.end());
}

}  // namespace

std::vector<Transfer> ptask_entries(const std::vector<Transfer>& transfers, const PlatformFacts& platform) {
  std::vector<double> scratch(platform.links.size(), 0.0);
  std::vector<Transfer> out;
  if (const auto repaired = repair(transfers)) {
    if (same_loads(link_loads(transfers, platform, scratch), link_loads(*repaired, platform, scratch)))
      return *repaired;
  }
  // Groups of transfers whose routes share their middle (all but the two
  // links at each end: HBM and port or NIC): one switch, one rail, one
  // (leaf, leaf) pair of a leaf/spine network.
  std::map<std::vector<int>, std::vector<Transfer>> groups;
  for (const Transfer& t : transfers) {
    auto [first, last] = platform.routes.links(t.src_npu, t.dst_npu);
    const std::ptrdiff_t n = last - first;
    std::vector<int> middle = n > 4 ? std::vector<int>(first + 2, last - 2) : std::vector<int>(first, last);
    groups[std::move(middle)].push_back(t);
  }
  for (const auto& [middle, group] : groups) append_group(group, platform, scratch, out);
  return out;
}

}  // namespace epsim::sim
