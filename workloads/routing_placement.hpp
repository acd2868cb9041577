// Where a routing's hottest experts sit: the placement (routing.hot_placement),
// what it means, and the first MoE layer's hottest experts with their EP rank
// and node, so that a report says when every hot expert is on one rank (the
// default placement of zipf and hot routing, their worst case).
#pragma once

#include <string>
#include <vector>

#include "workloads/workload_spec.hpp"

namespace epsim::workloads {

struct HotExpert {
  int expert = 0;
  double weight = 0;  // its share of the layer's pick weight (expert_weights), in [0, 1]
  int ep_rank = 0;    // the rank holding it, within its EP group
  int node = 0;       // that rank's node within the EP group (ep_rank / ranks_per_node)
};

struct RoutingPlacement {
  std::string kind;       // "uniform", "zipf", "hot", "trace"
  std::string params;     // "s=1.2", "share 0.5 of 2 experts", the trace file; "" for uniform
  std::string placement;  // "first", "spread", "random"; "" for uniform and trace (no placement key)
  std::string meaning;    // what the placement does to the hot experts, in words
  bool moves_per_layer = false;  // the hot experts sit elsewhere in other layers
  std::vector<HotExpert> hottest;  // the first MoE layer's hottest, by weight (at most 4; none for uniform)
  int hottest_rank = 0;            // the EP rank with the most pick weight in that layer
  double hottest_rank_weight = 0;  // its share of the layer's pick weight
  double balanced_rank_weight = 0;  // 1 / ep
  // Mitigations (routing.redundant_experts, routing.capacity_factor; 0: none).
  int redundant_experts = 0;
  int redundant_per_rank = 0;  // extra slots on every rank, when ep divides the experts
  int slots_per_rank = 0;      // WorkloadSpec::expert_slots_per_rank
  bool uneven = false;         // ep does not divide the experts: some ranks own fewer, more replicas (expert_home_rank)
  int experts = 0, ep = 0;
  double capacity_factor = 0;
  std::int64_t capacity = 0;  // tokens per (source rank, expert): expert_capacity()
};

// The placement of `w`'s routing in its first MoE layer. Deterministic.
RoutingPlacement routing_placement(const WorkloadSpec& w);

}  // namespace epsim::workloads
