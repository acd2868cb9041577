// Per-layer statistics of a sampled routing.
#include "workloads/routing_summary.hpp"

#include <algorithm>
#include <optional>

#include "core/moe_formulas.hpp"
#include "workloads/expert_replicas.hpp"
#include "workloads/expert_weights.hpp"

namespace epsim::workloads {

RoutingSummary summarize_routing(const WorkloadSpec& w, const RoutingSample& s) {
  RoutingSummary out;
  out.closed_form = expected_distinct_ranks(w.parallel.ep, w.model.top_k);
  out.exact = distinct_ranks_exact(w.parallel.ep, w.model.experts, w.model.top_k);
  const auto ranks = static_cast<std::size_t>(s.ranks);
  const double tokens = static_cast<double>(s.tokens_per_rank) * s.micro_batches * s.ranks;
  for (int l = 0; l < w.model.moe_layers(); ++l) {
    LayerSummary sum;
    sum.layer = l + w.model.dense_layers;
    std::vector<double> received(ranks, 0.0);
    std::vector<double> picks(static_cast<std::size_t>(w.model.experts), 0.0);
    std::optional<ExpertReplicas> replicas;
    if (w.routing.redundant_experts > 0)
      replicas = plan_replicas(expert_weights(w, l), w.parallel.ep, w.routing.redundant_experts);
    double pairs = 0, node_pairs = 0, all_picks = 0;
    for (int mb = 0; mb < s.micro_batches; ++mb) {
      const LayerRouting& lr = s.at(l, mb);
      for (std::size_t src = 0; src < ranks; ++src) {
        for (std::size_t dst = 0; dst < ranks; ++dst) received[dst] += lr.traffic.tokens[src * ranks + dst];
      }
      for (std::int32_t n : lr.traffic.node_tokens) node_pairs += n;
      // DP replicas hold the same experts, and redundant slots replicas of
      // some: fold every slot onto its expert id.
      const std::size_t slots = static_cast<std::size_t>(w.parallel.ep) * w.expert_slots_per_rank();
      for (std::size_t i = 0; i < lr.expert_tokens.size(); ++i) {
        const int e = replicas ? replicas->expert_of_slot[i % slots] : static_cast<int>(i % picks.size());
        picks[static_cast<std::size_t>(e)] += lr.expert_tokens[i];
        all_picks += lr.expert_tokens[i];
      }
      sum.max_nodes_per_token = std::max(sum.max_nodes_per_token, lr.max_nodes_per_token);
    }
    for (double r : received) pairs += r;
    sum.received_max = *std::max_element(received.begin(), received.end());
    sum.received_mean = pairs / static_cast<double>(ranks);
    auto hottest = std::max_element(picks.begin(), picks.end());
    sum.hottest_expert = static_cast<int>(hottest - picks.begin());
    sum.hottest_share = all_picks > 0 ? *hottest / all_picks : 0;
    sum.distinct_ranks = pairs / tokens;
    sum.distinct_nodes = node_pairs / tokens;
    out.layers.push_back(sum);
  }
  return out;
}

}  // namespace epsim::workloads
