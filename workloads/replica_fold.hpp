// The exact symmetric reduction of a layout's EP groups: when a pipeline
// stage holds several identical EP groups (expert data parallelism, edp >
// 1), the task graph keeps one per stage and the others become "phantom"
// ranks that appear only in the groups of the collectives spanning them
// (the gradient sync over DP and EDP). Which layouts fold and why the
// replay of the kept group is exact: docs/simulator.md, "Exact reductions".
// Plain arithmetic over ParallelLayout; no TOML, no platform.
#pragma once

#include <optional>
#include <string>

#include "workloads/parallel_layout.hpp"
#include "workloads/workload_spec.hpp"

namespace epsim::workloads {

// Rank ids of a folded graph and the full layout's ranks they stand for.
// Ids [0, kept()) are each stage's first EP group: id s x Q + i is full rank
// s x S + i (S: a full stage's ranks, Q: one EP group's). Ids [kept(),
// full.world()) are the other groups' ranks ("phantoms") in full-rank
// order, so that a node's ranks stay consecutive ids as the placement needs.
// Without folding (replicas = 1) ids are full ranks.
struct ReplicaFold {
  ParallelLayout full;
  int replicas = 1;       // EP groups per stage the graph stands for
  int replica_ranks = 0;  // Q: the ranks of one EP group (etp x ep)

  int kept() const { return full.pp * replica_ranks; }
  int phantoms() const { return full.world() - kept(); }
  int id(int full_rank) const;
  int full_rank(int id) const;
};

// Why `p`'s stages cannot be folded to one EP group each ("" when they can):
// a stage holds one group already, TP groups would straddle groups, or a
// group does not start on a node boundary (its NPUs would share a node's
// links with another group's).
std::string fold_refusal(const ParallelSpec& p);

// `w` with one EP group per stage (dp = etp x ep / tp, the same micro-batches
// per DP rank) and parallel.folded_replicas = the groups per stage it stands
// for. Requires fold_refusal(w.parallel) to be "".
WorkloadSpec fold_replicas(const WorkloadSpec& w);

// The fold a (folded or not) spec's graph uses: identity unless
// p.folded_replicas > 1.
ReplicaFold replica_fold(const ParallelSpec& p);

}  // namespace epsim::workloads
