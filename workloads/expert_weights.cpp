// Per-layer expert pick weights from the routing spec.
#include "workloads/expert_weights.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "workloads/rng.hpp"

namespace epsim::workloads {

namespace {

// Stream tags, so that order and jitter draws never share a stream with the
// token sampler (which uses tag 0).
constexpr std::uint64_t kOrderStream = 1;
constexpr std::uint64_t kJitterStream = 2;

// Weights by popularity: entry i is the i-th hottest expert's weight.
std::vector<double> by_popularity(const RoutingSpec& r, int experts) {
  std::vector<double> w(static_cast<std::size_t>(experts), 1.0);
  if (r.kind == RoutingKind::kZipf) {
    for (int i = 0; i < experts; ++i) w[static_cast<std::size_t>(i)] = std::pow(i + 1.0, -r.zipf_s);
  } else if (r.kind == RoutingKind::kHot) {
    const int cold = experts - r.hot_experts;
    for (int i = 0; i < experts; ++i) {
      w[static_cast<std::size_t>(i)] = i < r.hot_experts ? r.hot_share / r.hot_experts
                                       : cold > 0        ? (1.0 - r.hot_share) / cold
                                                         : 0.0;
    }
  }
  return w;
}

// order[i] = the expert id holding the i-th popularity slot.
std::vector<int> expert_order(const WorkloadSpec& w, int moe_layer) {
  const RoutingSpec& r = w.routing;
  const int experts = w.model.experts;
  const int ep = w.parallel.ep;
  std::vector<int> order(static_cast<std::size_t>(experts));
  std::iota(order.begin(), order.end(), 0);
  if (r.hot_placement == HotPlacement::kRandom) {
    const int layer_tag = r.order == ExpertOrder::kPerLayer ? moe_layer : 0;
    Rng rng(stream_seed(r.seed, kOrderStream, static_cast<std::uint64_t>(layer_tag)));
    for (int i = experts - 1; i > 0; --i) {  // Fisher-Yates
      std::swap(order[static_cast<std::size_t>(i)], order[rng.below(static_cast<std::uint32_t>(i + 1))]);
    }
    return order;
  }
  if (r.hot_placement == HotPlacement::kSpread) {  // every rank's first expert, then every rank's second, ...
    std::size_t i = 0;
    for (int own = 0; i < order.size(); ++own)
      for (int rank = 0; rank < ep; ++rank)
        if (first_expert_of_rank(rank, experts, ep) + own < first_expert_of_rank(rank + 1, experts, ep))
          order[i++] = first_expert_of_rank(rank, experts, ep) + own;
  }
  // Per layer, the placement moves on by one rank, so the hot rank changes from layer to layer.
  if (r.order == ExpertOrder::kPerLayer) {
    const int shift = first_expert_of_rank(moe_layer % ep, experts, ep);
    for (int& e : order) e = (e + shift) % experts;
  }
  return order;
}

}  // namespace

bool node_limit_binds(const WorkloadSpec& w) {
  return w.model.node_limit > 0 && w.model.node_limit < w.parallel.nodes_per_replica();
}

std::vector<double> expert_weights(const WorkloadSpec& w, int moe_layer) {
  const RoutingSpec& r = w.routing;
  const int experts = w.model.experts;
  std::vector<double> weights(static_cast<std::size_t>(experts));
  if (r.kind == RoutingKind::kTrace) {
    weights = r.trace.tokens[static_cast<std::size_t>(moe_layer)];
  } else {
    std::vector<double> popular = by_popularity(r, experts);
    std::vector<int> order = expert_order(w, moe_layer);
    for (int i = 0; i < experts; ++i) {
      weights[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])] = popular[static_cast<std::size_t>(i)];
    }
  }
  if (r.layer_jitter > 0) {
    Rng rng(stream_seed(r.seed, kJitterStream, static_cast<std::uint64_t>(moe_layer)));
    for (double& x : weights) x *= 1.0 + r.layer_jitter * (2.0 * rng.uniform() - 1.0);
  }
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  for (double& x : weights) x /= total;
  return weights;
}

std::string routing_infeasibility(const WorkloadSpec& w, const std::vector<double>& weights) {
  const int k = w.model.top_k;
  const auto positive = std::count_if(weights.begin(), weights.end(), [](double x) { return x > 0; });
  if (positive < k) {
    return fmt::format("only {} experts have a nonzero pick weight, fewer than top_k = {}", positive, k);
  }
  if (!node_limit_binds(w)) return "";
  // A token's experts come from the first node_limit nodes its draws meet
  // (routing_sampler.cpp): the worst case is the node_limit nonzero nodes
  // with fewest usable experts.
  const int nodes = w.parallel.nodes_per_replica();
  const int per_node = w.model.experts / nodes;
  std::vector<int> usable;
  for (int n = 0; n < nodes; ++n) {
    int count = 0;
    for (int j = 0; j < per_node; ++j) count += weights[static_cast<std::size_t>(n * per_node + j)] > 0;
    if (count > 0) usable.push_back(count);
  }
  std::sort(usable.begin(), usable.end());
  const int picked = std::min<int>(w.model.node_limit, static_cast<int>(usable.size()));
  const int worst = std::accumulate(usable.begin(), usable.begin() + picked, 0);
  if (worst < k) {
    return fmt::format(
        "with node_limit = {}, a token can land on nodes holding only {} experts with a nonzero pick weight, "
        "fewer than top_k = {}",
        w.model.node_limit, worst, k);
  }
  return "";
}

}  // namespace epsim::workloads
