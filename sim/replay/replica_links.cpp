// Links shared between a folded graph's EP groups, from their routes.
#include "sim/replay/replica_links.hpp"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <utility>

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Link.hpp>

namespace epsim::sim {

namespace {

using workloads::Task;
using workloads::TaskKind;

// The rank pairs of `graph` whose routes a group's own traffic may take:
// every pair of each traffic group (the stage of a dispatch or combine, a
// TP group) and, for a pipeline transfer, sender i to receiver i.
std::set<std::pair<int, int>> own_traffic_pairs(const workloads::TaskGraph& graph) {
  std::set<std::vector<int>> all_pairs_groups, p2p_groups;
  for (const Task& t : graph.tasks) {
    if (!t.is_collective() || t.kind == TaskKind::kGradAllReduce) continue;
    if (t.kind == TaskKind::kPipelineP2p) {
      p2p_groups.insert(t.groups.front());
      continue;
    }
    if (t.groups.empty()) {
      std::vector<int> all(static_cast<std::size_t>(graph.ranks));
      for (int r = 0; r < graph.ranks; ++r) all[static_cast<std::size_t>(r)] = r;
      all_pairs_groups.insert(std::move(all));
    }
    for (const auto& g : t.groups) all_pairs_groups.insert(g);
  }
  std::set<std::pair<int, int>> pairs;
  for (const auto& g : all_pairs_groups)
    for (int a : g)
      for (int b : g)
        if (a != b) pairs.emplace(a, b);
  for (const auto& g : p2p_groups) {
    const std::size_t half = g.size() / 2;
    for (std::size_t i = 0; i < half; ++i) pairs.emplace(g[i], g[half + i]);
  }
  return pairs;
}

}  // namespace

std::vector<int> replica_link_users(const PlatformFacts& platform, const Placement& placement,
                                    const workloads::TaskGraph& graph) {
  std::vector<int> users(platform.links.size(), 0);
  if (graph.folded_replicas < 2) return users;
  const int group_ranks = graph.stage_ranks;
  const int rpn = placement.ranks_per_node;
  // The NPU of kept id r's counterpart in group j of its stage: its full
  // rank shifted by j groups (groups start on node boundaries).
  const auto npu = [&](int r, int j) {
    const int full = graph.full_rank_of[static_cast<std::size_t>(r)] + j * group_ranks;
    return platform.npu_index(full / rpn, full % rpn);
  };
  const std::set<std::pair<int, int>> pairs = own_traffic_pairs(graph);
  std::vector<int> stamp(platform.links.size(), -1);
  for (int j = 0; j < graph.folded_replicas; ++j) {
    for (const auto& [a, b] : pairs) {
      auto [first, last] = platform.routes.links(npu(a, j), npu(b, j));
      for (const int* l = first; l != last; ++l) {
        if (stamp[static_cast<std::size_t>(*l)] == j) continue;
        stamp[static_cast<std::size_t>(*l)] = j;
        ++users[static_cast<std::size_t>(*l)];
      }
    }
  }
  return users;
}

namespace {

// Links the graph's gradient syncs cross: each distinct set of groups planned once.
std::vector<char> sync_links(const PlatformFacts& platform, const Placement& placement,
                             const workloads::TaskGraph& graph, const ReplayOptions& resolved) {
  std::vector<char> crossed(platform.links.size(), 0);
  std::set<std::vector<std::vector<int>>> planned;
  for (const Task& t : graph.tasks) {
    if (t.kind != TaskKind::kGradAllReduce || !planned.insert(t.groups).second) continue;
    const CollectivePlan plan = plan_group_collective(t, placement, resolved.all_reduce, false);
    for (const CollectivePhase& phase : plan.phases)
      for (const Transfer& x : phase.transfers) {
        auto [first, last] = platform.routes.links(x.src_npu, x.dst_npu);
        for (const int* l = first; l != last; ++l) crossed[static_cast<std::size_t>(*l)] = 1;
      }
  }
  return crossed;
}

// The NPUs a placement's kept ranks run on.
std::vector<char> kept_npus(const PlatformFacts& platform, const Placement& placement) {
  std::vector<char> kept(platform.npus.size(), 0);
  for (int npu : placement.npu_of_rank) kept[static_cast<std::size_t>(npu)] = 1;
  return kept;
}

void mark_route(const PlatformFacts& platform, int src, int dst, std::vector<char>& marks) {
  auto [first, last] = platform.routes.links(src, dst);
  for (const int* l = first; l != last; ++l) marks[static_cast<std::size_t>(*l)] = 1;
}

}  // namespace

std::vector<char> kept_links(const PlatformFacts& platform, const Placement& placement,
                             const workloads::TaskGraph& graph, AllReduceAlgorithm all_reduce) {
  std::vector<char> kept(platform.links.size(), graph.folded_replicas > 1 ? 0 : 1);
  if (graph.folded_replicas < 2) return kept;
  for (const auto& [a, b] : own_traffic_pairs(graph))
    mark_route(platform, placement.npu_of_rank[static_cast<std::size_t>(a)],
               placement.npu_of_rank[static_cast<std::size_t>(b)], kept);
  for (int npu : placement.npu_of_rank) mark_route(platform, npu, npu, kept);  // its HBM
  const std::vector<char> kept_npu = kept_npus(platform, placement);
  std::set<std::vector<std::vector<int>>> planned;
  for (const Task& t : graph.tasks) {
    if (t.kind != TaskKind::kGradAllReduce || !planned.insert(t.groups).second) continue;
    for (const CollectivePhase& phase : plan_group_collective(t, placement, all_reduce, false).phases)
      for (const Transfer& x : phase.transfers)
        if (kept_npu[static_cast<std::size_t>(x.src_npu)] || kept_npu[static_cast<std::size_t>(x.dst_npu)])
          mark_route(platform, x.src_npu, x.dst_npu, kept);
  }
  return kept;
}

void drop_phantom_transfers(CollectivePlan& plan, const Placement& placement, const PlatformFacts& platform,
                            const std::vector<char>& kept) {
  if (placement.phantom_npus.empty()) return;
  const std::vector<char> kept_npu = kept_npus(platform, placement);
  const auto alone = [&](const Transfer& x) {
    if (kept_npu[static_cast<std::size_t>(x.src_npu)] || kept_npu[static_cast<std::size_t>(x.dst_npu)]) return false;
    auto [first, last] = platform.routes.links(x.src_npu, x.dst_npu);
    return std::none_of(first, last, [&](int l) { return kept[static_cast<std::size_t>(l)] != 0; });
  };
  for (CollectivePhase& phase : plan.phases)
    phase.transfers.erase(std::remove_if(phase.transfers.begin(), phase.transfers.end(), alone),
                          phase.transfers.end());
}

SharedLinks share_replica_links(LoadedPlatform& platform, const Placement& placement,
                                const workloads::TaskGraph& graph, const ReplayOptions& resolved) {
  SharedLinks out;
  const std::vector<int> users = replica_link_users(platform.facts, placement, graph);
  std::vector<char> crossed;
  std::unordered_map<std::string, int> scaled;  // link name -> users
  for (std::size_t l = 0; l < users.size(); ++l) {
    if (users[l] < 2 || !platform.facts.links[l].shared) continue;
    if (crossed.empty()) crossed = sync_links(platform.facts, placement, graph, resolved);
    if (crossed[l])
      out.unscaled.push_back(static_cast<int>(l));
    else
      scaled.emplace(platform.facts.links[l].name, users[l]);
  }
  out.scaled = static_cast<int>(scaled.size());
  if (scaled.empty()) return out;
  for (simgrid::s4u::Link* link : simgrid::s4u::Engine::get_instance()->get_all_links()) {
    const auto it = scaled.find(link->get_name());
    if (it != scaled.end()) link->set_bandwidth(link->get_bandwidth() / it->second);
  }
  for (LinkFacts& link : platform.facts.links) {
    const auto it = scaled.find(link.name);
    if (it != scaled.end()) link.bandwidth_Bps /= it->second;
  }
  return out;
}

}  // namespace epsim::sim
