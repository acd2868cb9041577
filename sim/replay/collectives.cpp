// Plans of alltoallv (direct and DeepEP-style hierarchical) and all-reduce
// (ring and hierarchical), and their cost on an idle platform.
#include "sim/replay/collectives.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "core/error.hpp"

namespace epsim::sim {

using workloads::Task;
using workloads::TrafficMatrix;

const char* to_string(AlltoallAlgorithm a) {
  switch (a) {
    case AlltoallAlgorithm::kDirect: return "direct";
    case AlltoallAlgorithm::kHierarchical: return "hierarchical";
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

}  // namespace

CollectivePlan plan_alltoallv(const Task& task, const TrafficMatrix& traffic, const Placement& placement,
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
  if (plan.phases.size() == 2) plan.pipeline_chunks = options.pipeline_chunks;
  return plan;
}

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

}  // namespace

CollectivePlan plan_all_reduce(const Task& task, const Placement& placement, AllReduceAlgorithm algorithm,
                               bool exact_steps) {
  const std::string subject = fmt::format("task {} groups", task.id);
  const int ranks = static_cast<int>(placement.npu_of_rank.size());
  CollectivePlan plan;
  std::set<int> participants;
  std::size_t size = 0;
  for (const auto& group : task.groups) {
    if (size == 0) size = group.size();
    if (group.size() != size)
      throw InternalError(fmt::format("{}: all-reduce groups must have equal sizes, got {} and {}", subject, size,
                                      group.size()));
    for (int r : group) {
      if (r < 0 || r >= ranks) throw InternalError(fmt::format("{}: rank {} outside [0, {})", subject, r, ranks));
      if (!participants.insert(placement.npu_of_rank[r]).second)
        throw InternalError(fmt::format("{}: rank {} appears twice", subject, r));
    }
  }
  plan.participants.assign(participants.begin(), participants.end());
  const int g = static_cast<int>(size);
  if (g < 2 || !(task.bytes > 0)) return plan;

  // Members of each group by node, in group order: hierarchical needs the
  // same count on every node of a group.
  bool hierarchical = algorithm == AllReduceAlgorithm::kHierarchical;
  std::vector<std::map<int, std::vector<int>>> by_node(task.groups.size());
  for (std::size_t k = 0; k < task.groups.size(); ++k) {
    for (int r : task.groups[k]) by_node[k][placement.node_of_rank(r)].push_back(placement.npu_of_rank[r]);
    std::size_t per_node = by_node[k].begin()->second.size();
    for (const auto& [node, members] : by_node[k]) hierarchical &= members.size() == per_node;
    hierarchical &= by_node[k].size() > 1 && per_node > 1;
  }
  if (!hierarchical) {
    std::vector<std::vector<int>> rings;
    for (const auto& group : task.groups) {
      rings.emplace_back();
      for (int r : group) rings.back().push_back(placement.npu_of_rank[r]);
    }
    push_nonempty(plan, ring_phase("ring", rings, task.bytes / g, 2 * (g - 1), exact_steps));
    return plan;
  }
  const int per_node = static_cast<int>(by_node[0].begin()->second.size());
  const int nodes = g / per_node;
  std::vector<std::vector<int>> intra, inter;
  for (const auto& groups : by_node) {
    for (const auto& [node, members] : groups) intra.push_back(members);
    for (int i = 0; i < per_node; ++i) {
      inter.emplace_back();
      for (const auto& [node, members] : groups) inter.back().push_back(members[i]);
    }
  }
  const double chunk = task.bytes / per_node;
  push_nonempty(plan, ring_phase("reduce-scatter in node", intra, chunk, per_node - 1, exact_steps));
  push_nonempty(plan, ring_phase("all-reduce across nodes", inter, chunk / nodes, 2 * (nodes - 1), exact_steps));
  push_nonempty(plan, ring_phase("all-gather in node", intra, chunk, per_node - 1, exact_steps));
  return plan;
}

double route_latency_s(const PlatformFacts& platform, int src, int dst) {
  double latency_s = 0;
  auto [first, last] = platform.routes.links(src, dst);
  for (const int* l = first; l != last; ++l) latency_s += platform.links[*l].latency_s;
  return latency_s;
}

RoundCost round_cost(const CollectivePhase& phase, const PlatformFacts& platform, double share, bool latency) {
  const double scale = share * (phase.per_step ? 1.0 : static_cast<double>(phase.steps));
  std::vector<double> load(platform.links.size(), 0.0);
  std::vector<double> fat(platform.links.size(), 0.0);  // largest single transfer on a FATPIPE link
  double max_latency_s = 0;
  double min_latency_s = std::numeric_limits<double>::infinity();
  double worst_transfer_s = 0;  // one transfer alone: latency + bytes / bottleneck
  for (const Transfer& t : phase.transfers) {
    const double bytes = t.bytes * scale;
    const double latency_s = latency ? route_latency_s(platform, t.src_npu, t.dst_npu) : 0.0;
    max_latency_s = std::max(max_latency_s, latency_s);
    min_latency_s = std::min(min_latency_s, latency_s);
    double slowest_s = 0;
    auto [first, last] = platform.routes.links(t.src_npu, t.dst_npu);
    for (const int* l = first; l != last; ++l) {
      load[*l] += bytes;
      fat[*l] = std::max(fat[*l], bytes);
      slowest_s = std::max(slowest_s, bytes / platform.links[*l].bandwidth_Bps);
    }
    worst_transfer_s = std::max(worst_transfer_s, latency_s + slowest_s);
  }
  if (phase.transfers.empty()) return {};
  double link_s = 0;
  for (std::size_t l = 0; l < load.size(); ++l) {
    // One parallel task charges a FATPIPE link with the sum of its own
    // transfers (they are one variable); separate transfers share it freely.
    const double bytes = (platform.links[l].shared || !phase.per_transfer) ? load[l] : fat[l];
    link_s = std::max(link_s, bytes / platform.links[l].bandwidth_Bps);
  }
  if (!phase.per_transfer) return {max_latency_s, link_s};
  const double total_s = std::max(worst_transfer_s, min_latency_s + link_s);
  return {min_latency_s, total_s - min_latency_s};
}

std::vector<PlanStep> plan_steps(const CollectivePlan& plan, const PlatformFacts& platform) {
  std::vector<PlanStep> steps;
  if (plan.pipeline_chunks <= 1) {
    for (std::size_t i = 0; i < plan.phases.size(); ++i) {
      const CollectivePhase& phase = plan.phases[i];
      const int rounds = phase.per_step ? phase.steps : 1;
      for (int r = 0; r < rounds; ++r) {
        PlanStep s;
        s.phase = i;
        if (!steps.empty()) s.after = {steps.size() - 1};
        steps.push_back(s);
      }
    }
    return steps;
  }
  if (plan.phases.size() != 2 || plan.phases[0].steps != 1 || plan.phases[1].steps != 1)
    throw std::logic_error("plan_steps: a pipelined plan has two phases of one step");
  const double c = plan.pipeline_chunks;
  const double t1 = round_cost(plan.phases[0], platform, 1 / c, false).total_s();
  const double t2 = round_cost(plan.phases[1], platform, 1 / c, false).total_s();
  steps.push_back({0, 1 / c, true, {}});
  steps.push_back({0, (c - 1) / c, false, {0}});
  if (t1 >= t2) {
    steps.push_back({1, (c - 1) / c, true, {0}});
    steps.push_back({1, 1 / c, false, {1, 2}});
  } else {
    steps.push_back({1, 1.0, true, {0}});
  }
  return steps;
}

double plan_bound_s(const CollectivePlan& plan, const PlatformFacts& platform) {
  const std::vector<PlanStep> steps = plan_steps(plan, platform);
  std::vector<double> finish_s(steps.size(), 0.0);
  double end_s = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const PlanStep& s = steps[i];
    double start_s = 0;
    for (std::size_t j : s.after) start_s = std::max(start_s, finish_s[j]);
    finish_s[i] = start_s + round_cost(plan.phases[s.phase], platform, s.share, s.latency).total_s();
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

CollectivePlan plan_collective(const Task& task, const workloads::TaskGraph& graph, const Placement& placement,
                               AllReduceAlgorithm all_reduce, bool exact_ring_steps, AlltoallvOptions alltoallv) {
  if (task.kind == workloads::TaskKind::kGradAllReduce || task.kind == workloads::TaskKind::kTpAllReduce)
    return plan_all_reduce(task, placement, all_reduce, exact_ring_steps);
  if (task.kind == workloads::TaskKind::kPipelineP2p) alltoallv.algorithm = AlltoallAlgorithm::kDirect;
  const TrafficMatrix& traffic = graph.traffic[static_cast<std::size_t>(task.traffic)];
  if (task.groups.empty()) return plan_alltoallv(task, traffic, placement, alltoallv);
  return plan_alltoallv(task, traffic, sub_placement(placement, task.groups[0]), alltoallv);
}

}  // namespace epsim::sim
