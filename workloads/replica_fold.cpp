// Rank ids of a folded graph, and the spec of one EP group per stage.
#include "workloads/replica_fold.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace epsim::workloads {

int ReplicaFold::id(int full_rank) const {
  if (replicas == 1) return full_rank;
  const int stage_ranks = full.stage_ranks();
  const int stage = full_rank / stage_ranks, local = full_rank % stage_ranks;
  if (local < replica_ranks) return stage * replica_ranks + local;
  return kept() + stage * (stage_ranks - replica_ranks) + (local - replica_ranks);
}

int ReplicaFold::full_rank(int id) const {
  if (replicas == 1) return id;
  const int stage_ranks = full.stage_ranks();
  if (id < kept()) return id / replica_ranks * stage_ranks + id % replica_ranks;
  const int phantom = id - kept(), others = stage_ranks - replica_ranks;
  return phantom / others * stage_ranks + replica_ranks + phantom % others;
}

std::string fold_refusal(const ParallelSpec& p) {
  const int group = p.etp * p.ep;
  if (p.edp() < 2) return "a pipeline stage holds one EP group";
  if (group % p.tp != 0)
    return fmt::format("a TP group of {} would straddle EP groups of {} ranks", p.tp, group);
  if (group % p.ranks_per_node != 0)
    return fmt::format("an EP group of {} ranks does not fill whole nodes of {}", group, p.ranks_per_node);
  return "";
}

WorkloadSpec fold_replicas(const WorkloadSpec& w) {
  const std::string refusal = fold_refusal(w.parallel);
  if (!refusal.empty()) throw InternalError("fold_replicas: " + refusal);
  WorkloadSpec out = w;
  ParallelSpec& p = out.parallel;
  p.folded_replicas = w.parallel.edp() * w.parallel.folded_replicas;
  p.dp = p.etp * p.ep / p.tp;
  p.global_batch = p.micro_batch * p.dp * p.micro_batches;
  return out;
}

ReplicaFold replica_fold(const ParallelSpec& p) {
  ReplicaFold f;
  f.full = p.layout();
  f.full.dp *= p.folded_replicas;
  f.replicas = p.folded_replicas;
  f.replica_ranks = p.stage_ranks();
  return f;
}

}  // namespace epsim::workloads
