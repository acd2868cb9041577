// One collective as a one-task graph replayed by the replay.
#include "sim/replay/collective_bench.hpp"

#include <numeric>

#include "core/error.hpp"
#include "sim/platform/placement.hpp"
#include "sim/replay/collectives.hpp"
#include "workloads/routing_stream.hpp"

namespace epsim::sim {

using workloads::Task;
using workloads::TaskGraph;
using workloads::TaskKind;
using workloads::TrafficMatrix;

const char* to_string(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllToAll: return "alltoall";
    case CollectiveOp::kAllToAllv: return "alltoallv";
    case CollectiveOp::kAllReduce: return "allreduce";
    case CollectiveOp::kReduceScatter: return "reducescatter";
    case CollectiveOp::kAllGather: return "allgather";
  }
  return "?";
}

double bus_factor(CollectiveOp op, int ranks) {
  const double n = ranks;
  return op == CollectiveOp::kAllReduce ? 2 * (n - 1) / n : (n - 1) / n;
}

const char* bus_factor_formula(CollectiveOp op) { return op == CollectiveOp::kAllReduce ? "2(n-1)/n" : "(n-1)/n"; }

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

workloads::GroupCollective group_op(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kReduceScatter: return workloads::GroupCollective::kReduceScatter;
    case CollectiveOp::kAllGather: return workloads::GroupCollective::kAllGather;
    default: return workloads::GroupCollective::kAllReduce;
  }
}

Task collective_task() {
  Task t;
  t.id = 0;
  t.layer = -1;
  t.micro_batch = -1;
  return t;
}

}  // namespace

TaskGraph alltoallv_graph(const TrafficMatrix& traffic, double bytes_per_token) {
  TaskGraph g;
  g.ranks = traffic.ranks;
  g.ranks_per_node = traffic.ranks_per_node;
  g.traffic.push_back(traffic);
  Task t = collective_task();
  t.kind = TaskKind::kDispatch;
  t.traffic = 0;
  t.bytes_per_token = bytes_per_token;
  g.tasks = {t};
  return g;
}

TaskGraph collective_graph(CollectiveOp op, int ranks, int ranks_per_node, double bytes) {
  if (op == CollectiveOp::kAllToAll) return alltoallv_graph(uniform_traffic(ranks, ranks_per_node), bytes / ranks);
  if (op == CollectiveOp::kAllToAllv)
    throw std::logic_error("collective_graph: an alltoallv takes its traffic (alltoallv_graph)");
  TaskGraph g;
  g.ranks = ranks;
  g.ranks_per_node = ranks_per_node;
  Task t = collective_task();
  t.kind = TaskKind::kGradAllReduce;
  t.phase = workloads::Phase::kGradSync;
  t.group_op = group_op(op);
  t.groups.emplace_back();
  for (int r = 0; r < ranks; ++r) t.groups.back().push_back(r);
  t.bytes = bytes;
  g.tasks = {t};
  return g;
}

SampledAlltoallv sample_alltoallv(workloads::WorkloadSpec w) {
  // Only the first MoE layer is drawn: the sampler seeds each layer on its
  // own, so this is the layer `run` would draw first.
  w.model.layers = w.model.dense_layers + 1;
  w.parallel.micro_batches = 1;
  w.parallel.dp = w.parallel.ep;  // one EP group
  w.parallel.tp = w.parallel.pp = 1;
  workloads::RoutingSample sample = workloads::sample_routing(w);
  SampledAlltoallv out;
  out.traffic = std::move(sample.layers.at(0).traffic);
  out.bytes_per_token = workloads::dispatch_bytes_per_token(w);
  out.tokens_per_rank = sample.tokens_per_rank;
  return out;
}

CollectiveTiming time_collective_graph(SimEngine& engine, const LoadedPlatform& platform, CollectiveOp op,
                                       const TaskGraph& graph, const ReplayOptions& options) {
  const Placement placement = place_ranks(graph.ranks, graph.ranks_per_node, platform.facts);
  const ReplayOptions resolved = resolve(options, platform.facts, placement);
  const Task& task = graph.tasks.at(0);
  const bool alltoall = task.kind == TaskKind::kDispatch;
  const CollectivePlan plan = plan_collective(task, graph, placement, resolved.all_reduce,
                                              *resolved.exact_ring_steps, alltoallv_options(resolved));
  const Timeline t = replay(engine, platform, placement, graph, resolved);

  CollectiveTiming out;
  if (alltoall) {
    const auto& tokens = graph.traffic[0].tokens;
    out.bytes = static_cast<double>(std::accumulate(tokens.begin(), tokens.end(), std::int64_t{0})) *
                task.bytes_per_token / graph.ranks;
  } else {
    out.bytes = task.bytes;
  }
  for (const CollectiveSpan& c : t.collectives) out.time_s = c.end_s - c.start_s;
  out.bound_s = plan_bound_s(plan, platform.facts);
  out.algbw_Bps = out.time_s > 0 ? out.bytes / out.time_s : 0;
  out.busbw_Bps = out.algbw_Bps * bus_factor(op, graph.ranks);
  for (const CollectivePhase& phase : plan.phases)
    for (const Transfer& tr : phase.transfers) out.moved_bytes += tr.bytes * phase.steps;
  out.algorithm = alltoall ? to_string(*resolved.algorithm) : to_string(resolved.all_reduce);
  out.fidelity = to_string(*resolved.fidelity);
  out.activities = t.activities;
  return out;
}

CollectiveTiming time_collective(SimEngine& engine, const LoadedPlatform& platform, CollectiveOp op, int ranks,
                                 int ranks_per_node, double bytes, const ReplayOptions& options) {
  CollectiveTiming out =
      time_collective_graph(engine, platform, op, collective_graph(op, ranks, ranks_per_node, bytes), options);
  out.bytes = bytes;  // S as given (all-to-all's per-pair share times n may round)
  out.algbw_Bps = out.time_s > 0 ? bytes / out.time_s : 0;
  out.busbw_Bps = out.algbw_Bps * bus_factor(op, ranks);
  return out;
}

}  // namespace epsim::sim
