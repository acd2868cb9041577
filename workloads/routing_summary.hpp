// What `epsim workload show` prints about a sampled routing: per MoE layer,
// load balance across ranks, the hottest expert, and the sampled distinct
// ranks per token next to the closed forms.
#pragma once

#include <vector>

#include "workloads/routing_sampler.hpp"
#include "workloads/workload_spec.hpp"

namespace epsim::workloads {

// One MoE layer, summed over micro-batches (and DP replicas).
struct LayerSummary {
  int layer = 0;
  double received_max = 0;   // tokens received by the busiest rank (once per token and rank)
  double received_mean = 0;  // ... and by the average rank
  double imbalance() const { return received_mean > 0 ? received_max / received_mean : 0; }
  int hottest_expert = 0;
  double hottest_share = 0;        // its share of the layer's (token, expert) picks
  double distinct_ranks = 0;       // mean distinct destination ranks per token
  double distinct_nodes = 0;       // mean distinct destination nodes per token
  int max_nodes_per_token = 0;
};

struct RoutingSummary {
  std::vector<LayerSummary> layers;
  double closed_form = 0;  // R(1-(1-1/R)^k), seed 000/001
  double exact = 0;        // R(1 - C(E-m,k)/C(E,k)), uniform routing without node limit
};

RoutingSummary summarize_routing(const WorkloadSpec& w, const RoutingSample& s);

}  // namespace epsim::workloads
