// Text report of a workload, its sampled routing and its task graph.
#include "workloads/workload_report.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "workloads/expert_weights.hpp"

namespace epsim::workloads {

namespace {

std::string routing_line(const RoutingSpec& r) {
  std::string s = to_string(r.kind);
  if (r.kind == RoutingKind::kZipf) s += fmt::format(" s={}", r.zipf_s);
  if (r.kind == RoutingKind::kHot) s += fmt::format(" share={} of {} experts", r.hot_share, r.hot_experts);
  if (r.kind == RoutingKind::kTrace) s += " " + r.trace.path;
  if (r.order == ExpertOrder::kFixed) s += ", order fixed";
  if (r.order == ExpertOrder::kPerLayer) s += ", order per layer";
  if (r.layer_jitter > 0) s += fmt::format(", layer jitter {}", r.layer_jitter);
  if (r.redundant_experts > 0) s += fmt::format(", {} redundant experts", r.redundant_experts);
  if (r.capacity_factor > 0) s += fmt::format(", capacity factor {:g}", r.capacity_factor);
  return s + fmt::format(", seed {}", r.seed);
}

// Per-rank sums over the graph: what one rank computes and sends in a step.
struct Totals {
  double forward_flops = 0, recompute_flops = 0, backward_flops = 0, optimizer_bytes = 0;
  double dispatch_bytes = 0, combine_bytes = 0, grad_sync_bytes = 0;
  double pipeline_bytes = 0;  // p2p between stages, sent by the average rank
  double tp_bytes = 0;        // TP all-reduces, per rank
  int compute = 0, collective = 0;
};

Totals totals(const TaskGraph& g) {
  Totals t;
  const double ranks = g.ranks;
  for (const Task& task : g.tasks) {
    if (task.is_collective()) {
      ++t.collective;
      if (task.kind == TaskKind::kGradAllReduce) {
        t.grad_sync_bytes += task.bytes;
        continue;
      }
      if (task.kind == TaskKind::kTpAllReduce) {
        t.tp_bytes += task.bytes;
        continue;
      }
      // Sent by the average rank: all (token, destination) pairs / ranks.
      const TrafficMatrix& m = g.traffic[static_cast<std::size_t>(task.traffic)];
      double pairs = 0;
      for (std::int32_t n : m.tokens) pairs += n;
      const double bytes = pairs * task.bytes_per_token / ranks;
      (task.kind == TaskKind::kDispatch   ? t.dispatch_bytes
       : task.kind == TaskKind::kCombine ? t.combine_bytes
                                          : t.pipeline_bytes) += bytes;
      continue;
    }
    ++t.compute;
    double flops = 0;
    for (double f : task.flops) flops += f / ranks;
    if (task.phase == Phase::kForward) t.forward_flops += flops;
    if (task.phase == Phase::kRecompute) t.recompute_flops += flops;
    if (task.phase == Phase::kBackward) t.backward_flops += flops;
    if (task.phase == Phase::kOptimizer) t.optimizer_bytes += task.hbm_bytes[0];
  }
  return t;
}

}  // namespace

void write_workload_report(std::ostream& out, const WorkloadSpec& w, const RoutingSummary& summary,
                           const TaskGraph& graph) {
  const ModelSpec& m = w.model;
  const ParallelSpec& p = w.parallel;
  fmt::print(out, "workload {} ({})\n", m.name.empty() ? "(unnamed)" : m.name, w.source);
  fmt::print(out, "  model     {} layers ({} dense), hidden {}, {} attention, {} routed experts top-{} + {} shared, "
                  "expert FFN {}, node limit {}\n",
             m.layers, m.dense_layers, m.hidden, m.attention.kind == AttentionKind::kMla ? "MLA" : "GQA", m.experts,
             m.top_k, m.shared_experts, m.expert_ffn, m.node_limit > 0 ? std::to_string(m.node_limit) : "none");
  fmt::print(out, "  parallel  TP{} x DP{} x PP{} = {} ranks (a stage: EP{} x ETP{} x EDP{}), nodes of {} ranks, {} "
                  "micro-batch(es) x {} sequence(s) of {} tokens per DP rank, global batch {}{}{}\n",
             p.tp, p.dp, p.pp, p.world(), p.ep, p.etp, p.edp(), p.ranks_per_node, p.micro_batches, p.micro_batch,
             p.sequence_length, p.global_batch,
             p.pp > 1 ? fmt::format(", schedule {} x{} chunks", to_string(p.schedule), p.vpp) : std::string(),
             p.moe_a2a_overlap ? ", 1F1B all-to-all overlap (moe_a2a_overlap)" : "");
  fmt::print(out, "  wire      dispatch {} B/token ({}), combine {} B/token ({}){}\n", dispatch_bytes_per_token(w),
             to_string(w.precision.dispatch), combine_bytes_per_token(w), to_string(w.precision.combine),
             w.precision.routing_metadata ? ", routing metadata included" : "");
  fmt::print(out, "  routing   {}\n\n", routing_line(w.routing));

  fmt::print(out, "distinct ranks per token, R={} k={} E={}:\n", p.ep, m.top_k, m.experts);
  fmt::print(out, "  seed closed form  R(1-(1-1/R)^k)          = {:.3f}  (k draws with replacement)\n",
             summary.closed_form);
  fmt::print(out, "  exact             R(1-C(E-m,k)/C(E,k))    = {:.3f}  (uniform, no node limit{})\n\n",
             summary.exact, node_limit_binds(w) ? "; this workload's limit binds" : "");

  fmt::print(out, "per MoE layer (tokens received per rank, once per token and rank, summed over micro-batches):\n");
  fmt::print(out, "{:>5} {:>11} {:>11} {:>9} {:>8} {:>7} {:>9} {:>9} {:>9}\n", "layer", "recv max", "recv mean",
             "max/mean", "hottest", "share", "ranks/tok", "nodes/tok", "max nodes");
  for (const LayerSummary& l : summary.layers) {
    fmt::print(out, "{:>5} {:>11.0f} {:>11.1f} {:>9.3f} {:>8} {:>6.2f}% {:>9.3f} {:>9.3f} {:>9}\n", l.layer,
               l.received_max, l.received_mean, l.imbalance(), l.hottest_expert, 100 * l.hottest_share,
               l.distinct_ranks, l.distinct_nodes, l.max_nodes_per_token);
  }

  if (w.routing.capacity_factor > 0)
    fmt::print(out, "capacity: at most {} tokens per (source rank, expert); {} of {} (token, expert) picks dropped "
                    "({:.3f} %), neither sent nor computed\n",
               expert_capacity(w), graph.dropped_picks, graph.routed_picks,
               graph.routed_picks > 0 ? 100.0 * static_cast<double>(graph.dropped_picks) / graph.routed_picks : 0.0);

  const Totals t = totals(graph);
  fmt::print(out, "\ntask graph: {} tasks ({} compute, {} collective), {} traffic matrices\n", graph.tasks.size(),
             t.compute, t.collective, graph.traffic.size());
  fmt::print(out, "per rank per step (average rank):\n");
  fmt::print(out, "  forward FLOPs   {:.4g}\n  backward FLOPs  {:.4g}\n", t.forward_flops, t.backward_flops);
  if (t.recompute_flops > 0)
    fmt::print(out, "  recompute FLOPs {:.4g} (forward run again before backward: memory.recompute = \"full\")\n",
               t.recompute_flops);
  fmt::print(out, "  all-to-all bytes sent: dispatch {:.4g}, combine {:.4g} (forward + backward)\n",
             t.dispatch_bytes, t.combine_bytes);
  fmt::print(out,
             "  gradient sync bytes {:.4g} (the buffers S of its all-reduces, or ZeRO-1's reduce-scatters and "
             "all-gathers, summed), optimizer HBM bytes {:.4g}\n",
             t.grad_sync_bytes, t.optimizer_bytes);
  if (t.tp_bytes > 0) fmt::print(out, "  TP all-reduce bytes {:.4g}\n", t.tp_bytes);
  if (graph.stages > 1)
    fmt::print(out, "  pipeline p2p bytes sent {:.4g} (activations and their gradients, over all ranks)\n",
               t.pipeline_bytes);
}

}  // namespace epsim::workloads
