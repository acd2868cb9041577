// Describing where the hot experts of a routing sit.
#include "workloads/routing_placement.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "workloads/expert_weights.hpp"

namespace epsim::workloads {

namespace {

constexpr std::size_t kHottestShown = 4;

const char* placement_name(HotPlacement p) {
  switch (p) {
    case HotPlacement::kFirst: return "first";
    case HotPlacement::kSpread: return "spread";
    case HotPlacement::kRandom: return "random";
  }
  return "?";
}

std::string meaning(const RoutingSpec& r) {
  switch (r.hot_placement) {
    case HotPlacement::kFirst:
      return "slot i on expert i: the hottest experts together on the first ranks, the worst case";
    case HotPlacement::kSpread:
      return "slot i on rank i mod ep: the ep hottest experts on distinct ranks";
    case HotPlacement::kRandom:
      return r.order == ExpertOrder::kPerLayer ? "a seeded shuffle, drawn again in every layer" : "a seeded shuffle";
  }
  return "";
}

}  // namespace

RoutingPlacement routing_placement(const WorkloadSpec& w) {
  const RoutingSpec& r = w.routing;
  RoutingPlacement p;
  p.kind = to_string(r.kind);
  p.balanced_rank_weight = 1.0 / w.parallel.ep;
  p.redundant_experts = r.redundant_experts;
  p.redundant_per_rank = r.redundant_experts / w.parallel.ep;
  p.slots_per_rank = w.expert_slots_per_rank();
  p.uneven = w.model.experts % w.parallel.ep != 0;
  p.experts = w.model.experts;
  p.ep = w.parallel.ep;
  p.capacity_factor = r.capacity_factor;
  p.capacity = expert_capacity(w);
  if (r.kind == RoutingKind::kZipf) p.params = fmt::format("s={:g}", r.zipf_s);
  if (r.kind == RoutingKind::kHot) p.params = fmt::format("share {:g} of {} experts", r.hot_share, r.hot_experts);
  if (r.kind == RoutingKind::kTrace) p.params = r.trace.path;
  if (r.kind == RoutingKind::kZipf || r.kind == RoutingKind::kHot) {
    p.placement = placement_name(r.hot_placement);
    p.meaning = meaning(r);
    p.moves_per_layer = r.order == ExpertOrder::kPerLayer;
  }
  const std::vector<double> weights = expert_weights(w, 0);
  const auto home = [&](int e) { return expert_home_rank(e, w.model.experts, w.parallel.ep); };
  std::vector<double> rank_weight(static_cast<std::size_t>(w.parallel.ep), 0.0);
  for (int e = 0; e < w.model.experts; ++e) rank_weight[static_cast<std::size_t>(home(e))] += weights[e];
  const auto hot_rank = std::max_element(rank_weight.begin(), rank_weight.end());
  p.hottest_rank = static_cast<int>(hot_rank - rank_weight.begin());
  p.hottest_rank_weight = *hot_rank;
  if (r.kind == RoutingKind::kUniform) return p;
  std::vector<int> order(static_cast<std::size_t>(w.model.experts));
  std::iota(order.begin(), order.end(), 0);
  // Heaviest first, lower id on ties: deterministic.
  const std::size_t shown = std::min(kHottestShown, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(shown), order.end(),
                    [&](int a, int b) { return weights[a] != weights[b] ? weights[a] > weights[b] : a < b; });
  for (std::size_t i = 0; i < shown; ++i) {
    const int e = order[i];
    const int rank = home(e);
    p.hottest.push_back({e, weights[static_cast<std::size_t>(e)], rank, rank / w.parallel.ranks_per_node});
  }
  return p;
}

}  // namespace epsim::workloads
