// Redundant experts, EPLB-style: extra expert slots on every rank hold
// replicas of the hottest experts, so that a hot expert's tokens are split
// over several ranks. The plan is made per MoE layer from its expected
// loads (the pick weights), greedily: each extra slot goes to the expert
// with the most weight per replica that can still take one, on the rank
// with the least expected load that has a free slot and no copy of it.
#pragma once

#include <vector>

namespace epsim::workloads {

struct ExpertReplicas {
  int slots_per_rank = 0;  // (experts + redundant) / ep: a rank's own experts first, then replicas
  // replicas[e]: the global slots (rank x slots_per_rank + j) holding expert
  // e, its own slot first (rank expert_home_rank(e), slot e - first_expert_of_rank).
  std::vector<std::vector<int>> replicas;
  std::vector<int> expert_of_slot;  // per global slot (ep x slots_per_rank): its expert, -1 when unused
  int rank_of_slot(int slot) const { return slot / slots_per_rank; }
};

// The plan for `weights` (per expert, the layer's expected shares) over
// `ep` ranks with `redundant` extra slots (experts + redundant a multiple
// of ep; a rank owning fewer experts has more free slots). Deterministic:
// ties go to the lower expert id and the lower rank.
ExpertReplicas plan_replicas(const std::vector<double>& weights, int ep, int redundant);

}  // namespace epsim::workloads
