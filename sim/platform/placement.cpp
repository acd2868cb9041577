// Block placement of EP ranks on NPUs.
#include "sim/platform/placement.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace epsim::sim {

void check_ranks_fit(int ranks, int ranks_per_node, int nodes_available, int npus_per_node) {
  auto fail = [](const std::string& problem) { throw InputError({}, "placement", problem); };
  if (ranks < 1 || ranks_per_node < 1) fail(fmt::format("need ranks >= 1 and ranks_per_node >= 1, got {} and {}", ranks, ranks_per_node));
  if (ranks % ranks_per_node != 0)
    fail(fmt::format("{} ranks is not a multiple of {} ranks per node", ranks, ranks_per_node));
  // A workload written for 8-GPU nodes on 4-GPU trays (GB200) is the common
  // case: name the workload's key and the value that fits.
  if (ranks_per_node > npus_per_node)
    throw parameter_error("parallel.ranks_per_node",
                          fmt::format("{} ranks per node but the platform's nodes have {} NPUs (--set "
                                      "parallel.ranks_per_node={})",
                                      ranks_per_node, npus_per_node, npus_per_node));
  int nodes = ranks / ranks_per_node;
  if (nodes > nodes_available)
    fail(fmt::format("{} ranks at {} per node need {} nodes; the platform has {}", ranks, ranks_per_node, nodes,
                     nodes_available));
}

Placement sub_placement(const Placement& placement, const std::vector<int>& ranks) {
  Placement p;
  p.ranks_per_node = placement.ranks_per_node;
  for (int r : ranks) p.npu_of_rank.push_back(placement.npu_of_rank[static_cast<std::size_t>(r)]);
  return p;
}

Placement place_ranks(int ranks, int ranks_per_node, const PlatformFacts& platform) {
  check_ranks_fit(ranks, ranks_per_node, platform.nodes, platform.npus_per_node);
  Placement p;
  p.ranks_per_node = ranks_per_node;
  for (int r = 0; r < ranks; ++r) p.npu_of_rank.push_back(platform.npu_index(r / ranks_per_node, r % ranks_per_node));
  return p;
}

Placement place_graph(const workloads::TaskGraph& graph, const PlatformFacts& platform) {
  if (graph.full_rank_of.empty()) return place_ranks(graph.ranks, graph.ranks_per_node, platform);
  const int world = static_cast<int>(graph.full_rank_of.size());
  check_ranks_fit(world, graph.ranks_per_node, platform.nodes, platform.npus_per_node);
  Placement p;
  p.ranks_per_node = graph.ranks_per_node;
  for (int id = 0; id < world; ++id) {
    const int full = graph.full_rank_of[static_cast<std::size_t>(id)];
    const int npu = platform.npu_index(full / graph.ranks_per_node, full % graph.ranks_per_node);
    (id < graph.ranks ? p.npu_of_rank : p.phantom_npus).push_back(npu);
  }
  return p;
}

}  // namespace epsim::sim
