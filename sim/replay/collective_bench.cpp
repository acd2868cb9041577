// One collective as a one-task graph replayed by the replay.
#include "sim/replay/collective_bench.hpp"

#include "sim/platform/placement.hpp"
#include "sim/replay/collectives.hpp"

namespace epsim::sim {

using workloads::Task;
using workloads::TaskGraph;
using workloads::TaskKind;
using workloads::TrafficMatrix;

const char* to_string(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllToAll: return "alltoall";
    case CollectiveOp::kAllReduce: return "allreduce";
  }
  return "?";
}

double bus_factor(CollectiveOp op, int ranks) {
  const double n = ranks;
  return op == CollectiveOp::kAllReduce ? 2 * (n - 1) / n : (n - 1) / n;
}

namespace {

// Uniform traffic: one token from every rank to every rank (itself included).
TrafficMatrix uniform_traffic(int ranks, int ranks_per_node) {
  TrafficMatrix t;
  t.ranks = ranks;
  t.ranks_per_node = ranks_per_node;
  t.tokens.assign(static_cast<std::size_t>(ranks) * ranks, 1);
  t.node_tokens.assign(static_cast<std::size_t>(ranks) * t.nodes(), ranks_per_node);
  return t;
}

}  // namespace

TaskGraph collective_graph(CollectiveOp op, int ranks, int ranks_per_node, double bytes) {
  TaskGraph g;
  g.ranks = ranks;
  g.ranks_per_node = ranks_per_node;
  Task t;
  t.id = 0;
  t.layer = -1;
  t.micro_batch = -1;
  if (op == CollectiveOp::kAllToAll) {
    g.traffic.push_back(uniform_traffic(ranks, ranks_per_node));
    t.kind = TaskKind::kDispatch;
    t.traffic = 0;
    t.bytes_per_token = bytes / ranks;
  } else {
    t.kind = TaskKind::kGradAllReduce;
    t.phase = workloads::Phase::kGradSync;
    t.groups.emplace_back();
    for (int r = 0; r < ranks; ++r) t.groups.back().push_back(r);
    t.bytes = bytes;
  }
  g.tasks = {t};
  return g;
}

CollectiveTiming time_collective(SimEngine& engine, const LoadedPlatform& platform, CollectiveOp op, int ranks,
                                 int ranks_per_node, double bytes, const ReplayOptions& options) {
  const TaskGraph graph = collective_graph(op, ranks, ranks_per_node, bytes);
  const Placement placement = place_ranks(ranks, ranks_per_node, platform.facts);
  const ReplayOptions resolved = resolve(options, platform.facts, placement);
  const Task& task = graph.tasks[0];
  const CollectivePlan plan =
      op == CollectiveOp::kAllToAll
          ? plan_alltoallv(task, graph.traffic[0], placement, alltoallv_options(resolved))
          : plan_all_reduce(task, placement, resolved.all_reduce, *resolved.exact_ring_steps);
  const Timeline t = replay(engine, platform, placement, graph, resolved);

  CollectiveTiming out;
  out.bytes = bytes;
  for (const CollectiveSpan& c : t.collectives) out.time_s = c.end_s - c.start_s;
  out.bound_s = plan_bound_s(plan, platform.facts);
  out.algbw_Bps = out.time_s > 0 ? bytes / out.time_s : 0;
  out.busbw_Bps = out.algbw_Bps * bus_factor(op, ranks);
  out.algorithm = op == CollectiveOp::kAllToAll ? to_string(*resolved.algorithm) : to_string(resolved.all_reduce);
  out.fidelity = to_string(*resolved.fidelity);
  out.activities = t.activities;
  return out;
}

}  // namespace epsim::sim
