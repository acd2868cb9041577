// Plans of alltoallv (direct and DeepEP-style hierarchical), all-reduce,
// reduce-scatter and all-gather (ring and hierarchical), and their cost on
// an idle platform.
#include "sim/replay/collectives.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"

namespace epsim::sim {

using workloads::Task;
using workloads::TrafficMatrix;

const char* to_string(AlltoallAlgorithm a) {
  switch (a) {
    case AlltoallAlgorithm::kDirect: return "direct";
    case AlltoallAlgorithm::kHierarchical: return "hierarchical";
    case AlltoallAlgorithm::kLowLatency: return "low-latency";
  }
  return "?";
}

const char* to_string(Fidelity f) {
  switch (f) {
    case Fidelity::kPerFlow: return "per-flow";
    case Fidelity::kAggregated: return "aggregated";
  }
  return "?";
}

const char* to_string(AllReduceAlgorithm a) {
  switch (a) {
    case AllReduceAlgorithm::kRing: return "ring";
    case AllReduceAlgorithm::kHierarchical: return "hierarchical";
    case AllReduceAlgorithm::kMesh: return "mesh";
  }
  return "?";
}

namespace {

std::vector<int> all_npus(const Placement& placement) {
  std::vector<int> out = placement.npu_of_rank;
  std::sort(out.begin(), out.end());
  return out;
}

void add(CollectivePhase& phase, int src, int dst, double bytes) {
  if (bytes > 0 && src != dst) phase.transfers.push_back({src, dst, bytes});
}

void push_nonempty(CollectivePlan& plan, CollectivePhase phase) {
  if (!phase.transfers.empty()) plan.phases.push_back(std::move(phase));
}

// The most peers one NPU sends to or receives from in the phase.
int max_peers(const CollectivePhase& phase) {
  std::map<int, std::set<int>> peers;
  for (const Transfer& t : phase.transfers) {
    peers[t.src_npu].insert(t.dst_npu);
    peers[t.dst_npu].insert(t.src_npu);
  }
  std::size_t most = 0;
  for (const auto& [npu, set] : peers) most = std::max(most, set.size());
  return static_cast<int>(most);
}

// The bytes the busiest NPU's kernel copies in the phase: the larger of
// what it sends and what it receives, without its own tokens and those of
// NPUs on its package (their copies take the package's own link).
double busiest_copy_bytes(const CollectivePhase& phase, int package_npus) {
  std::map<int, double> sent, received;
  for (const Transfer& t : phase.transfers) {
    if (t.src_npu / package_npus == t.dst_npu / package_npus) continue;
    sent[t.src_npu] += t.bytes;
    received[t.dst_npu] += t.bytes;
  }
  double most = 0;
  for (const auto& [npu, bytes] : sent) most = std::max(most, bytes);
  for (const auto& [npu, bytes] : received) most = std::max(most, bytes);
  return most;
}

// What a dispatch/combine kernel costs beyond its bytes (docs/simulator.md,
// "Kernel mechanisms"). A normal kernel pays its launch and its per-peer
// cost before its copies (setup_s, with its latency), and each round lasts
// at least its busiest NPU's copies at the copy rate (floor_s). The
// low-latency kernel's control path (launch + per-peer flags) runs beside
// its copies: a control phase, added after combine's reduction.
CollectivePlan with_kernel_costs(CollectivePlan plan, const Task& task, const AlltoallvOptions& options) {
  const KernelCosts& k = options.kernels;
  const bool dispatch = task.kind == workloads::TaskKind::kDispatch;
  if ((!dispatch && task.kind != workloads::TaskKind::kCombine) || plan.phases.empty()) return plan;
  if (options.algorithm == AlltoallAlgorithm::kLowLatency) {
    const double control_s = k.low_latency_launch_s + k.low_latency_peer_s * max_peers(plan.phases.front());
    if (control_s > 0) {
      CollectivePhase control;
      control.name = "kernel control";
      control.control = true;
      control.floor_s = control_s;
      plan.phases.push_back(std::move(control));
    }
    return plan;
  }
  const double peer_s = dispatch ? k.dispatch_peer_s : k.combine_peer_s;
  const double copy_Bps = dispatch ? k.dispatch_copy_Bps : k.combine_copy_Bps;
  for (CollectivePhase& phase : plan.phases) {
    if (peer_s > 0) phase.setup_s = peer_s * max_peers(phase);
    if (copy_Bps > 0) phase.floor_s = busiest_copy_bytes(phase, std::max(1, k.package_npus)) / copy_Bps;
  }
  plan.phases.front().setup_s += k.launch_s;
  return plan;
}

// A normal direct exchange or a low-latency kernel sending one message per
// (token, selected expert) rather than one per (token, destination rank).
// The framework's all-to-all (DispatchKernel::kAlltoall) does so where the
// traffic has selections; a plain all-to-all (nccl-tests' buffers, no
// routing) has none, and sends its bytes per destination as they are.
bool sends_selections(const Task& task, const TrafficMatrix& traffic, const AlltoallvOptions& options) {
  if (options.algorithm == AlltoallAlgorithm::kLowLatency) return true;
  const bool ep = task.kind == workloads::TaskKind::kDispatch || task.kind == workloads::TaskKind::kCombine;
  const bool collective =
      options.kernels.dispatch == topology::DispatchKernel::kAlltoall && traffic.selections_per_rank > 0;
  return ep && options.algorithm == AlltoallAlgorithm::kDirect && (options.kernels.per_selection || collective);
}

}  // namespace

namespace {

CollectivePlan plan_alltoallv_transfers(const Task& task, const TrafficMatrix& traffic, const Placement& placement,
                                        const AlltoallvOptions& options);

}  // namespace

namespace {

// Combine's reduction at each token's owner (the dispatch's source rank):
// it reads the inputs it received, one per (token, destination rank) with
// its own rank's included (low-latency: one per selection), from HBM and
// writes one output per token. A phase of HBM loopback transfers after the
// exchange: a token is reduced once all its inputs are in, and the last
// ones arrive with the exchange's end (docs/simulator.md, "Combine's
// reduction"). No peers, no latency.
CollectivePlan with_combine_reduction(CollectivePlan plan, const Task& task, const TrafficMatrix& traffic,
                                      const Placement& placement, const AlltoallvOptions& options) {
  if (task.kind != workloads::TaskKind::kCombine || plan.phases.empty()) return plan;
  CollectivePhase reduction;
  reduction.name = "combine reduction";
  reduction.per_transfer = options.fidelity == Fidelity::kPerFlow;
  const int ranks = static_cast<int>(placement.npu_of_rank.size());
  for (int s = 0; s < ranks; ++s) {
    double inputs = 0;
    if (sends_selections(task, traffic, options)) {
      inputs = static_cast<double>(traffic.selections_per_rank);
    } else {
      for (int d = 0; d < ranks; ++d) inputs += static_cast<double>(traffic.at(s, d));
    }
    const double bytes = (inputs + static_cast<double>(traffic.tokens_per_rank)) * task.bytes_per_token;
    const int npu = placement.npu_of_rank[s];
    if (bytes > 0) reduction.transfers.push_back({npu, npu, bytes});
  }
  push_nonempty(plan, std::move(reduction));
  return plan;
}

}  // namespace

CollectivePlan plan_alltoallv(const Task& task, const TrafficMatrix& traffic, const Placement& placement,
                              const AlltoallvOptions& options) {
  const KernelCosts& k = options.kernels;
  for (double v : {k.launch_s, k.dispatch_peer_s, k.combine_peer_s, k.dispatch_copy_Bps, k.combine_copy_Bps,
                   k.low_latency_launch_s, k.low_latency_peer_s})
    if (!(v >= 0)) throw InternalError(fmt::format("task {}: kernel costs must be >= 0, got {:g}", task.id, v));
  CollectivePlan plan = with_kernel_costs(plan_alltoallv_transfers(task, traffic, placement, options), task, options);
  // The control phase, when there is one, stays last: beside the reduction too.
  std::optional<CollectivePhase> control;
  if (!plan.phases.empty() && plan.phases.back().control) {
    control = std::move(plan.phases.back());
    plan.phases.pop_back();
  }
  plan = with_combine_reduction(std::move(plan), task, traffic, placement, options);
  if (control) plan.phases.push_back(std::move(*control));
  return plan;
}

namespace {

CollectivePlan plan_alltoallv_transfers(const Task& task, const TrafficMatrix& traffic, const Placement& placement,
                                        const AlltoallvOptions& options) {
  const int ranks = static_cast<int>(placement.npu_of_rank.size());
  const std::string subject = fmt::format("task {} traffic {}", task.id, task.traffic);
  if (options.pipeline_chunks < 1)
    throw InputError({}, "pipeline_chunks", fmt::format("expected >= 1, got {}", options.pipeline_chunks));
  if (traffic.ranks != ranks || traffic.ranks_per_node != placement.ranks_per_node ||
      traffic.tokens.size() != static_cast<std::size_t>(ranks) * ranks)
    throw InternalError(fmt::format("{}: traffic matrix is for {} ranks at {} per node; the placement has {} at {}",
                                    subject, traffic.ranks, traffic.ranks_per_node, ranks, placement.ranks_per_node));
  const auto& npu = placement.npu_of_rank;
  const double bpt = task.bytes_per_token;
  // Bytes from rank s to rank d of this collective.
  auto bytes = [&](int s, int d) {
    return task.transpose ? static_cast<double>(traffic.at(d, s)) * bpt : static_cast<double>(traffic.at(s, d)) * bpt;
  };
  CollectivePlan plan;
  plan.participants = all_npus(placement);
  const bool per_transfer = options.fidelity == Fidelity::kPerFlow;

  if (sends_selections(task, traffic, options)) {
    const bool ll = options.algorithm == AlltoallAlgorithm::kLowLatency;
    if (traffic.selections_per_rank <= 0)
      throw InputError({}, "algorithm",
                       fmt::format("{}: {} sends one message per (token, expert); this traffic has no "
                                   "selection count",
                                   subject, ll ? "low-latency" : "the kernel (kernels.messages = \"selection\")"));
    if (!(options.low_latency_nic_share > 0 && options.low_latency_node_share > 0))
      throw InternalError(fmt::format("{}: the low-latency shares must be > 0", subject));
    CollectivePhase phase;
    phase.name = ll ? "low-latency" : "alltoallv per selection";
    phase.per_transfer = per_transfer;
    const double selections = static_cast<double>(traffic.selections_per_rank);
    for (int s = 0; s < ranks; ++s) {
      double copies = 0;  // token copies s sends, one per (token, destination rank)
      for (int d = 0; d < ranks; ++d) copies += static_cast<double>(traffic.at(s, d));
      if (copies == 0) continue;
      for (int d = 0; d < ranks; ++d) {
        const bool same_node = placement.node_of_rank(s) == placement.node_of_rank(d);
        const double share = !ll ? 1.0 : same_node ? options.low_latency_node_share : options.low_latency_nic_share;
        const double b = static_cast<double>(traffic.at(s, d)) * selections / copies * bpt / share;
        if (task.transpose)
          add(phase, npu[d], npu[s], b);
        else
          add(phase, npu[s], npu[d], b);
      }
    }
    push_nonempty(plan, std::move(phase));
    return plan;
  }

  if (options.algorithm != AlltoallAlgorithm::kHierarchical) {
    CollectivePhase phase;
    phase.name = "alltoallv";
    phase.per_transfer = per_transfer;
    for (int s = 0; s < ranks; ++s)
      for (int d = 0; d < ranks; ++d) add(phase, npu[s], npu[d], bytes(s, d));
    push_nonempty(plan, std::move(phase));
    return plan;
  }

  const int rpn = placement.ranks_per_node;
  const int nodes = ranks / rpn;
  if (traffic.node_tokens.size() != static_cast<std::size_t>(ranks) * nodes)
    throw InternalError(fmt::format("{}: node_tokens has {} entries, expected {} ranks x {} nodes", subject,
                                    traffic.node_tokens.size(), ranks, nodes));
  auto rank_of = [rpn](int node, int local) { return node * rpn + local; };
  // Network part: token rank s <-> the rank with s's local index on node b,
  // once per (token, node) as DeepEP sends it.
  CollectivePhase network;
  network.name = "inter-node";
  network.per_transfer = per_transfer;
  for (int s = 0; s < ranks; ++s) {
    for (int b = 0; b < nodes; ++b) {
      if (b == s / rpn) continue;
      double b_bytes = static_cast<double>(traffic.to_node(s, b)) * bpt;
      int relay = rank_of(b, s % rpn);
      if (task.transpose)
        add(network, npu[relay], npu[s], b_bytes);
      else
        add(network, npu[s], npu[relay], b_bytes);
    }
  }
  // Node part: relay (b, i) <-> (b, j) carries what token ranks with local
  // index i exchange with (b, j), including (b, i)'s own direct traffic.
  CollectivePhase forward;
  forward.name = "intra-node";
  forward.per_transfer = per_transfer;
  for (int b = 0; b < nodes; ++b) {
    for (int i = 0; i < rpn; ++i) {
      for (int j = 0; j < rpn; ++j) {
        if (i == j) continue;
        double sum = 0;
        for (int a = 0; a < nodes; ++a) {
          int s = rank_of(a, i);
          sum += static_cast<double>(traffic.at(s, rank_of(b, j))) * bpt;
        }
        if (task.transpose)
          add(forward, npu[rank_of(b, j)], npu[rank_of(b, i)], sum);
        else
          add(forward, npu[rank_of(b, i)], npu[rank_of(b, j)], sum);
      }
    }
  }
  if (task.transpose) {
    push_nonempty(plan, std::move(forward));
    push_nonempty(plan, std::move(network));
  } else {
    push_nonempty(plan, std::move(network));
    push_nonempty(plan, std::move(forward));
  }
  if (plan.phases.size() == 2) plan.pipeline_chunks = options.pipeline_chunks;  // before combine's reduction is added
  return plan;
}

}  // namespace

namespace {

// Ring steps over each member list: member k sends to member k+1.
CollectivePhase ring_phase(const std::string& name, const std::vector<std::vector<int>>& rings, double step_bytes,
                           int steps, bool exact_steps) {
  CollectivePhase phase;
  phase.name = name;
  phase.steps = steps;
  phase.per_step = exact_steps;
  for (const auto& ring : rings) {
    const int g = static_cast<int>(ring.size());
    if (g < 2) continue;
    for (int k = 0; k < g; ++k) add(phase, ring[k], ring[(k + 1) % g], step_bytes);
  }
  return phase;
}

// One round over each member list in which every member sends `pair_bytes`
// to every other member at once: on a full mesh each pair has its own link,
// so the round uses all L-1 links of every member.
CollectivePhase mesh_phase(const std::string& name, const std::vector<std::vector<int>>& meshes, double pair_bytes) {
  CollectivePhase phase;
  phase.name = name;
  for (const auto& mesh : meshes)
    for (int src : mesh)
      for (int dst : mesh) add(phase, src, dst, pair_bytes);
  return phase;
}

}  // namespace

namespace {

// A group collective's groups checked, and how they lie on nodes.
struct GroupLayout {
  CollectivePlan plan;  // participants filled in, no phases yet
  int group_size = 0;   // 0 when the groups are empty
  // Each group as a ring of NPUs, in group order.
  std::vector<std::vector<int>> rings;
  // When every group spans several nodes with the same count (> 1) on each:
  // per group, its members on each node (in group order), and per group
  // and local index, that index's members across nodes.
  bool two_level = false;
  int per_node = 0;
  std::vector<std::vector<int>> intra, inter;
  bool one_node = false;  // every group lies inside one node (its ring is its node's members)
};

GroupLayout group_layout(const Task& task, const Placement& placement) {
  const std::string subject = fmt::format("task {} groups", task.id);
  const int ranks = placement.ranks_and_phantoms();
  GroupLayout out;
  std::set<int> participants;
  std::size_t size = 0;
  for (const auto& group : task.groups) {
    if (size == 0) size = group.size();
    if (group.size() != size)
      throw InternalError(fmt::format("{}: groups must have equal sizes, got {} and {}", subject, size,
                                      group.size()));
    for (int r : group) {
      if (r < 0 || r >= ranks) throw InternalError(fmt::format("{}: rank {} outside [0, {})", subject, r, ranks));
      if (!participants.insert(placement.npu(r)).second)
        throw InternalError(fmt::format("{}: rank {} appears twice", subject, r));
    }
  }
  out.plan.participants.assign(participants.begin(), participants.end());
  out.group_size = static_cast<int>(size);
  if (size == 0) return out;
  std::vector<std::map<int, std::vector<int>>> by_node(task.groups.size());
  bool two_level = true;
  bool one_node = true;
  for (std::size_t k = 0; k < task.groups.size(); ++k) {
    out.rings.emplace_back();
    for (int r : task.groups[k]) {
      out.rings.back().push_back(placement.npu(r));
      by_node[k][placement.node_of_rank(r)].push_back(placement.npu(r));
    }
    const std::size_t per_node = by_node[k].begin()->second.size();
    for (const auto& [node, members] : by_node[k]) two_level &= members.size() == per_node;
    two_level &= by_node[k].size() > 1 && per_node > 1;
    one_node &= by_node[k].size() == 1;
  }
  out.one_node = one_node;
  if (!two_level) return out;
  out.two_level = true;
  out.per_node = static_cast<int>(by_node[0].begin()->second.size());
  for (const auto& groups : by_node) {
    for (const auto& [node, members] : groups) out.intra.push_back(members);
    for (int i = 0; i < out.per_node; ++i) {
      out.inter.emplace_back();
      for (const auto& [node, members] : groups) out.inter.back().push_back(members[i]);
    }
  }
  return out;
}

}  // namespace

CollectivePlan plan_all_reduce(const Task& task, const Placement& placement, AllReduceAlgorithm algorithm,
                               bool exact_steps) {
  GroupLayout l = group_layout(task, placement);
  const int g = l.group_size;
  if (g < 2 || !(task.bytes > 0)) return std::move(l.plan);
  const bool mesh = algorithm == AllReduceAlgorithm::kMesh;
  if (mesh && l.one_node) {
    push_nonempty(l.plan, mesh_phase("mesh reduce-scatter", l.rings, task.bytes / g));
    push_nonempty(l.plan, mesh_phase("mesh all-gather", l.rings, task.bytes / g));
    return std::move(l.plan);
  }
  if (algorithm == AllReduceAlgorithm::kRing || !l.two_level) {
    push_nonempty(l.plan, ring_phase("ring", l.rings, task.bytes / g, 2 * (g - 1), exact_steps));
    return std::move(l.plan);
  }
  const int nodes = g / l.per_node;
  const double chunk = task.bytes / l.per_node;
  push_nonempty(l.plan, mesh ? mesh_phase("mesh reduce-scatter in node", l.intra, chunk)
                             : ring_phase("reduce-scatter in node", l.intra, chunk, l.per_node - 1, exact_steps));
  push_nonempty(l.plan, ring_phase("all-reduce across nodes", l.inter, chunk / nodes, 2 * (nodes - 1), exact_steps));
  push_nonempty(l.plan, mesh ? mesh_phase("mesh all-gather in node", l.intra, chunk)
                             : ring_phase("all-gather in node", l.intra, chunk, l.per_node - 1, exact_steps));
  return std::move(l.plan);
}

namespace {

// Reduce-scatter (`gather` false) or all-gather: one pass of the ring each
// way the all-reduce makes two. Hierarchical reduce-scatter works in the
// node first (each rank then holds S / per_node summed over its node, which
// the ranks of its local index reduce-scatter across nodes); all-gather is
// its mirror, across nodes first (S / g per step) so that the node's ring
// then moves whole S / per_node chunks.
CollectivePlan plan_one_pass(const Task& task, const Placement& placement, AllReduceAlgorithm algorithm,
                             bool exact_steps, bool gather) {
  const std::string op = gather ? "all-gather" : "reduce-scatter";
  GroupLayout l = group_layout(task, placement);
  const int g = l.group_size;
  if (g < 2 || !(task.bytes > 0)) return std::move(l.plan);
  const bool mesh = algorithm == AllReduceAlgorithm::kMesh;
  if (mesh && l.one_node) {
    push_nonempty(l.plan, mesh_phase("mesh " + op, l.rings, task.bytes / g));
    return std::move(l.plan);
  }
  if (algorithm == AllReduceAlgorithm::kRing || !l.two_level) {
    push_nonempty(l.plan, ring_phase("ring " + op, l.rings, task.bytes / g, g - 1, exact_steps));
    return std::move(l.plan);
  }
  const int nodes = g / l.per_node;
  const double chunk = task.bytes / l.per_node;
  CollectivePhase in_node = mesh ? mesh_phase("mesh " + op + " in node", l.intra, chunk)
                                 : ring_phase(op + " in node", l.intra, chunk, l.per_node - 1, exact_steps);
  CollectivePhase across = ring_phase(op + " across nodes", l.inter, chunk / nodes, nodes - 1, exact_steps);
  push_nonempty(l.plan, gather ? std::move(across) : std::move(in_node));
  push_nonempty(l.plan, gather ? std::move(in_node) : std::move(across));
  return std::move(l.plan);
}

}  // namespace

CollectivePlan plan_reduce_scatter(const Task& task, const Placement& placement, AllReduceAlgorithm algorithm,
                                   bool exact_steps) {
  return plan_one_pass(task, placement, algorithm, exact_steps, false);
}

CollectivePlan plan_all_gather(const Task& task, const Placement& placement, AllReduceAlgorithm algorithm,
                               bool exact_steps) {
  return plan_one_pass(task, placement, algorithm, exact_steps, true);
}

CollectivePlan plan_group_collective(const Task& task, const Placement& placement, AllReduceAlgorithm algorithm,
                                     bool exact_steps) {
  switch (task.group_op) {
    case workloads::GroupCollective::kAllReduce: return plan_all_reduce(task, placement, algorithm, exact_steps);
    case workloads::GroupCollective::kReduceScatter:
      return plan_reduce_scatter(task, placement, algorithm, exact_steps);
    case workloads::GroupCollective::kAllGather: return plan_all_gather(task, placement, algorithm, exact_steps);
  }
  throw InternalError(fmt::format("task {}: unknown group collective", task.id));
}

bool node_fabric_is_mesh(const PlatformFacts& platform, const Placement& placement) {
  const int rpn = placement.ranks_per_node;
  if (rpn < 2 || static_cast<int>(placement.npu_of_rank.size()) < rpn) return false;
  // Facts without these NPUs or their routes (bare facts of plans and tests) say nothing of the fabric.
  for (int i = 0; i < rpn; ++i) {
    const int npu = placement.npu_of_rank[i];
    if (npu < 0 || npu >= static_cast<int>(platform.npus.size()) || npu >= platform.routes.npus()) return false;
  }
  // A pair's own link serves no other pair, so a mesh has at least one
  // link per pair: a switch of hundreds of ports fails here at once.
  const std::size_t pairs = static_cast<std::size_t>(rpn) * static_cast<std::size_t>(rpn - 1) / 2;
  if (platform.links.size() < pairs) return false;
  // Per link of the node's routes (HBM links aside), the unordered pairs
  // using it, in either direction: 0, 1 or 2 (two or more).
  std::vector<char> users(platform.links.size(), 0);
  std::vector<std::size_t> last_pair(platform.links.size(), pairs);  // a link counted once per pair
  auto for_each_pair = [&](auto&& visit) {
    std::size_t pair = 0;
    for (int i = 0; i < rpn; ++i)
      for (int j = i + 1; j < rpn; ++j, ++pair) {
        const int a = placement.npu_of_rank[i], b = placement.npu_of_rank[j];
        if (!visit(pair, a, b)) return false;
      }
    return true;
  };
  auto is_fabric = [&](int link, int a, int b) {
    return link != platform.npus[a].hbm_link && link != platform.npus[b].hbm_link;
  };
  for_each_pair([&](std::size_t pair, int a, int b) {
    for (auto [src, dst] : {std::pair{a, b}, std::pair{b, a}}) {
      auto [first, last] = platform.routes.links(src, dst);
      for (const int* l = first; l != last; ++l) {
        if (!is_fabric(*l, a, b) || last_pair[*l] == pair) continue;
        last_pair[*l] = pair;
        users[*l] = static_cast<char>(std::min(2, users[*l] + 1));
      }
    }
    return true;
  });
  return for_each_pair([&](std::size_t, int a, int b) {
    auto [first, last] = platform.routes.links(a, b);
    return std::any_of(first, last, [&](int l) { return users[l] == 1; });  // HBM links are never counted
  });
}

double route_latency_s(const PlatformFacts& platform, int src, int dst) {
  double latency_s = 0;
  auto [first, last] = platform.routes.links(src, dst);
  for (const int* l = first; l != last; ++l) latency_s += platform.links[*l].latency_s;
  return latency_s;
}

RoundCost round_cost(const CollectivePhase& phase, const PlatformFacts& platform, double share, bool latency) {
  const double scale = share * (phase.per_step ? 1.0 : static_cast<double>(phase.steps));
  // Per transfer, the route's links are visited once: its latency (summed
  // in route order, as route_latency_s does) and its loads. The largest
  // single transfers matter only when each transfer is its own activity.
  const bool per_transfer = phase.per_transfer;
  std::vector<double> load(platform.links.size(), 0.0);
  std::vector<double> fat(per_transfer ? platform.links.size() : 0, 0.0);  // largest single transfer on a FATPIPE link
  double max_latency_s = 0;
  double min_latency_s = std::numeric_limits<double>::infinity();
  double worst_transfer_s = 0;  // one transfer alone: latency + bytes / bottleneck
  for (const Transfer& t : phase.transfers) {
    const double bytes = t.bytes * scale;
    double latency_s = 0;
    double slowest_s = 0;
    auto [first, last] = platform.routes.links(t.src_npu, t.dst_npu);
    for (const int* l = first; l != last; ++l) {
      if (latency) latency_s += platform.links[*l].latency_s;
      load[*l] += bytes;
      if (!per_transfer) continue;
      fat[*l] = std::max(fat[*l], bytes);
      slowest_s = std::max(slowest_s, bytes / platform.links[*l].bandwidth_Bps);
    }
    latency_s *= phase.per_step ? 1.0 : static_cast<double>(phase.steps);
    max_latency_s = std::max(max_latency_s, latency_s);
    min_latency_s = std::min(min_latency_s, latency_s);
    worst_transfer_s = std::max(worst_transfer_s, latency_s + slowest_s);
  }
  if (phase.transfers.empty()) return {0.0, phase.floor_s * scale};
  if (latency) {
    max_latency_s += phase.setup_s;
    min_latency_s += phase.setup_s;
    worst_transfer_s += phase.setup_s;
  }
  double link_s = 0;
  for (std::size_t l = 0; l < load.size(); ++l) {
    // One parallel task charges a FATPIPE link with the sum of its own
    // transfers (they are one variable); separate transfers share it freely.
    const double bytes = (platform.links[l].shared || !per_transfer) ? load[l] : fat[l];
    link_s = std::max(link_s, bytes / platform.links[l].bandwidth_Bps);
  }
  link_s = std::max(link_s, phase.floor_s * scale);  // the kernel's copies
  if (!phase.per_transfer) return {max_latency_s, link_s};
  const double total_s = std::max(worst_transfer_s, min_latency_s + link_s);
  return {min_latency_s, total_s - min_latency_s};
}

RoundCosts::RoundCosts(const CollectivePlan& plan, const PlatformFacts& platform) : plan_(plan), platform_(platform) {
  for (const CollectivePhase& phase : plan.phases)
    unit_.push_back(phase.per_transfer ? RoundCost{} : round_cost(phase, platform));
}

RoundCost RoundCosts::at(std::size_t phase, double share, bool latency) const {
  if (plan_.phases[phase].per_transfer) return round_cost(plan_.phases[phase], platform_, share, latency);
  return {latency ? unit_[phase].latency_s : 0.0, unit_[phase].transfer_s * share};
}

std::vector<PlanStep> plan_steps(const CollectivePlan& plan, const PlatformFacts& platform) {
  return plan_steps(plan, RoundCosts(plan, platform));
}

std::vector<PlanStep> plan_steps(const CollectivePlan& plan, const RoundCosts& costs) {
  std::vector<PlanStep> steps;
  // A control phase runs from the start, beside the others (it is last).
  auto add_control = [&] {
    for (std::size_t i = 0; i < plan.phases.size(); ++i)
      if (plan.phases[i].control) steps.push_back({i, 1.0, true, {}});
    return steps;
  };
  if (plan.pipeline_chunks <= 1) {
    for (std::size_t i = 0; i < plan.phases.size(); ++i) {
      const CollectivePhase& phase = plan.phases[i];
      if (phase.control) continue;
      const int rounds = phase.per_step ? phase.steps : 1;
      for (int r = 0; r < rounds; ++r) {
        PlanStep s;
        s.phase = i;
        if (!steps.empty()) s.after = {steps.size() - 1};
        steps.push_back(s);
      }
    }
    if (!steps.empty()) steps.front().delay_s = plan.launch_s;
    return add_control();
  }
  if (plan.phases.size() < 2 || plan.phases[0].steps != 1 || plan.phases[1].steps != 1)
    throw std::logic_error("plan_steps: a pipelined plan starts with two phases of one step");
  const double c = plan.pipeline_chunks;
  const double t1 = costs.at(0, 1 / c, false).total_s();
  const double t2 = costs.at(1, 1 / c, false).total_s();
  steps.push_back({0, 1 / c, true, {}, plan.launch_s});
  steps.push_back({0, (c - 1) / c, false, {0}});
  if (t1 >= t2) {
    steps.push_back({1, (c - 1) / c, true, {0}});
    steps.push_back({1, 1 / c, false, {1, 2}});
  } else {
    steps.push_back({1, 1.0, true, {0}});
  }
  // Phases after the two stages (combine's reduction) run once the pipeline has ended.
  for (std::size_t i = 2; i < plan.phases.size(); ++i) {
    if (plan.phases[i].control) continue;
    std::vector<std::size_t> after = {steps.size() - 1};
    if (i == 2 && t1 < t2) after = {1, 2};  // stage 1's last chunks and stage 2 end apart
    steps.push_back({i, 1.0, true, after});
  }
  return add_control();
}

double plan_bound_s(const CollectivePlan& plan, const PlatformFacts& platform) {
  const RoundCosts costs(plan, platform);
  return plan_bound_s(plan_steps(plan, costs), costs);
}

double plan_bound_s(const std::vector<PlanStep>& steps, const RoundCosts& costs) {
  std::vector<double> finish_s(steps.size(), 0.0);
  double end_s = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const PlanStep& s = steps[i];
    double start_s = 0;
    for (std::size_t j : s.after) start_s = std::max(start_s, finish_s[j]);
    finish_s[i] = start_s + s.delay_s + costs.at(s.phase, s.share, s.latency).total_s();
    end_s = std::max(end_s, finish_s[i]);
  }
  return end_s;
}

void add_link_bytes(const CollectivePlan& plan, const PlatformFacts& platform, std::vector<double>& link_bytes) {
  for (const CollectivePhase& phase : plan.phases) {
    for (const Transfer& t : phase.transfers) {
      auto [first, last] = platform.routes.links(t.src_npu, t.dst_npu);
      for (const int* l = first; l != last; ++l) link_bytes[*l] += t.bytes * phase.steps;
    }
  }
}

namespace {

// Whether the collective library runs the task (and pays its cost per
// call) rather than DeepEP's kernels, which carry their own.
bool library_runs(const Task& task, const KernelCosts& kernels) {
  switch (task.kind) {
    case workloads::TaskKind::kDispatch:
    case workloads::TaskKind::kCombine: return kernels.dispatch == topology::DispatchKernel::kAlltoall;
    default: return true;
  }
}

// A group collective's ring has no cost per peer: its steps pay their
// links' latency. An exchange (the all-to-all, a pipeline transfer) is the
// library's grouped sends and receives, one pair per peer, each set up in
// turn: its launch + its most peers x the cost per peer.
CollectivePlan with_library_cost(CollectivePlan plan, const Task& task, const KernelCosts& kernels, bool exchange) {
  if (plan.phases.empty() || !library_runs(task, kernels)) return plan;
  plan.launch_s = kernels.collective_launch_s;
  if (exchange && kernels.collective_peer_s > 0)
    plan.launch_s += kernels.collective_peer_s * max_peers(plan.phases.front());
  return plan;
}

}  // namespace

CollectivePlan plan_collective(const Task& task, const workloads::TaskGraph& graph, const Placement& placement,
                               AllReduceAlgorithm all_reduce, bool exact_ring_steps, AlltoallvOptions alltoallv) {
  if (task.kind == workloads::TaskKind::kGradAllReduce || task.kind == workloads::TaskKind::kTpAllReduce)
    return with_library_cost(plan_group_collective(task, placement, all_reduce, exact_ring_steps), task,
                             alltoallv.kernels, false);
  if (task.kind == workloads::TaskKind::kPipelineP2p) alltoallv.algorithm = AlltoallAlgorithm::kDirect;
  const TrafficMatrix& traffic = graph.traffic[static_cast<std::size_t>(task.traffic)];
  CollectivePlan plan = task.groups.empty()
                            ? plan_alltoallv(task, traffic, placement, alltoallv)
                            : plan_alltoallv(task, traffic, sub_placement(placement, task.groups[0]), alltoallv);
  return with_library_cost(std::move(plan), task, alltoallv.kernels, true);
}

}  // namespace epsim::sim
