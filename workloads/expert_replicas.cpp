// The greedy EPLB-style replica plan (expert_replicas.hpp).
#include "workloads/expert_replicas.hpp"

#include <algorithm>

#include "workloads/workload_spec.hpp"

namespace epsim::workloads {

ExpertReplicas plan_replicas(const std::vector<double>& weights, int ep, int redundant) {
  const int experts = static_cast<int>(weights.size());
  ExpertReplicas plan;
  plan.slots_per_rank = (experts + redundant) / ep;
  plan.replicas.resize(static_cast<std::size_t>(experts));
  std::vector<double> rank_load(static_cast<std::size_t>(ep), 0.0);  // expected share per rank
  std::vector<int> free_slots(static_cast<std::size_t>(ep), plan.slots_per_rank);
  for (int e = 0; e < experts; ++e) {
    const int rank = expert_home_rank(e, experts, ep);
    const int own = e - first_expert_of_rank(rank, experts, ep);
    plan.replicas[static_cast<std::size_t>(e)].push_back(rank * plan.slots_per_rank + own);
    rank_load[static_cast<std::size_t>(rank)] += weights[static_cast<std::size_t>(e)];
    --free_slots[static_cast<std::size_t>(rank)];
  }
  auto holds = [&](int e, int rank) {
    for (int slot : plan.replicas[static_cast<std::size_t>(e)])
      if (plan.rank_of_slot(slot) == rank) return true;
    return false;
  };
  for (int placed = 0; placed < redundant; ++placed) {
    // The expert with the most weight per replica that some rank can still take.
    int best = -1, best_rank = -1;
    double best_share = -1;
    for (int e = 0; e < experts; ++e) {
      const auto& reps = plan.replicas[static_cast<std::size_t>(e)];
      const double share = weights[static_cast<std::size_t>(e)] / static_cast<double>(reps.size());
      if (share <= best_share) continue;
      int rank = -1;  // the least loaded rank with a free slot and no copy of e
      for (int r = 0; r < ep; ++r)
        if (free_slots[static_cast<std::size_t>(r)] > 0 && !holds(e, r) &&
            (rank < 0 || rank_load[static_cast<std::size_t>(r)] < rank_load[static_cast<std::size_t>(rank)]))
          rank = r;
      if (rank < 0) continue;
      best = e, best_rank = rank, best_share = share;
    }
    if (best < 0) break;  // every rank holds every expert it could
    auto& reps = plan.replicas[static_cast<std::size_t>(best)];
    const double before = weights[static_cast<std::size_t>(best)] / static_cast<double>(reps.size());
    const double after = weights[static_cast<std::size_t>(best)] / static_cast<double>(reps.size() + 1);
    // The replicas already placed each give up before - after; the new one takes `after`.
    for (int slot : reps) rank_load[static_cast<std::size_t>(plan.rank_of_slot(slot))] -= before - after;
    rank_load[static_cast<std::size_t>(best_rank)] += after;
    const int j = plan.slots_per_rank - free_slots[static_cast<std::size_t>(best_rank)]--;
    reps.push_back(best_rank * plan.slots_per_rank + j);
  }
  plan.expert_of_slot.assign(static_cast<std::size_t>(ep) * plan.slots_per_rank, -1);
  for (int e = 0; e < experts; ++e)
    for (int slot : plan.replicas[static_cast<std::size_t>(e)]) plan.expert_of_slot[static_cast<std::size_t>(slot)] = e;
  return plan;
}

}  // namespace epsim::workloads
