// Where each EP rank runs: rank r on node r / ranks_per_node, NPU index
// r % ranks_per_node of that node (block placement, as launchers number
// ranks). A smaller job uses the first nodes and the first NPUs of each.
#pragma once

#include <vector>

#include "sim/platform/platform_facts.hpp"
#include "workloads/task_graph.hpp"

namespace epsim::sim {

struct Placement {
  std::vector<int> npu_of_rank;  // index into PlatformFacts::npus
  int ranks_per_node = 0;
  // A folded graph's phantom ranks (workloads/replica_fold.hpp): id
  // npu_of_rank.size() + i runs on phantom_npus[i]. They take part only in
  // the collectives spanning EP groups, which plan over them through npu().
  std::vector<int> phantom_npus;
  // Phantom ids keep a node's ranks consecutive, so this holds for them too.
  int node_of_rank(int rank) const { return rank / ranks_per_node; }
  int ranks_and_phantoms() const { return static_cast<int>(npu_of_rank.size() + phantom_npus.size()); }
  int npu(int rank) const {
    const auto r = static_cast<std::size_t>(rank);
    return r < npu_of_rank.size() ? npu_of_rank[r] : phantom_npus[r - npu_of_rank.size()];
  }
};

// The placement of a subset of ranks, in the order given: what a
// collective whose traffic matrix covers `ranks` (one pipeline stage, or
// two for a point-to-point transfer) sees as its ranks 0, 1, ...
Placement sub_placement(const Placement& placement, const std::vector<int>& ranks);

// Throws InputError (key "placement") when the ranks do not fit: more ranks
// per node than NPUs per node, more nodes than the platform has, or ranks
// not a multiple of ranks_per_node.
Placement place_ranks(int ranks, int ranks_per_node, const PlatformFacts& platform);

// The placement of `graph`'s ranks: place_ranks, or for a folded graph each
// id (phantoms included) on the NPU its full-layout rank takes, the full
// layout checked to fit.
Placement place_graph(const workloads::TaskGraph& graph, const PlatformFacts& platform);

// The same checks on bare counts, for checking a scenario before any
// platform is built (sweeps check every point before running one).
void check_ranks_fit(int ranks, int ranks_per_node, int nodes, int npus_per_node);

}  // namespace epsim::sim
