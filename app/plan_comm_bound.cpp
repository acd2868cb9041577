// The plan's communication bound: the platform's fastest paths, expected
// remote nodes and ranks per token, and each stage's unavoidable bytes.
#include "app/plan_comm_bound.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "workloads/parallel_layout.hpp"
#include "workloads/pipeline_schedule.hpp"

namespace epsim::app {

namespace {

// The share of a uniform routing's expectation the bound counts: a step's
// sampled mean of distinct nodes per token lies within about 1 % of it
// (thousands of tokens per stage and step), so 95 % stays below.
constexpr double kSampledShare = 0.95;

double binomial(int n, int k) {
  if (k < 0 || k > n) return 0;
  double c = 1;
  for (int i = 0; i < k; ++i) c = c * (n - i) / (i + 1);
  return c;
}

struct PerToken {
  double remote_nodes = 0;  // distinct nodes other than the source's
  double remote_ranks = 0;  // distinct ranks other than the source
};

// What one token's routed copies must cross, per w's routing and its EP group.
PerToken per_token(const workloads::WorkloadSpec& w, int npus_per_node) {
  const workloads::ModelSpec& m = w.model;
  const workloads::ParallelSpec& p = w.parallel;
  const workloads::RoutingSpec& r = w.routing;
  PerToken out;
  if (r.per_token_mitigations() || p.ep <= 1 || m.experts % p.ep != 0) return out;  // dropped or replicated picks
  // Nodes of the EP group: only when groups fill whole nodes of the platform's size.
  const bool whole_nodes = p.ep % npus_per_node == 0 && p.ranks_per_node == npus_per_node;
  const int nodes = whole_nodes ? p.ep / npus_per_node : 1;
  const int per_rank = m.experts / p.ep;
  const int per_node = per_rank * (whole_nodes ? npus_per_node : 1);
  if (r.kind == workloads::RoutingKind::kUniform) {
    out.remote_nodes = nodes > 1 ? kSampledShare * expected_remote_nodes(nodes, per_node, m.top_k, m.node_limit) : 0;
    out.remote_ranks = m.node_limit > 0 && m.node_limit < nodes
                           ? out.remote_nodes
                           : kSampledShare * expected_remote_nodes(p.ep, per_rank, m.top_k, 0);
  } else {  // any routing: k distinct experts span at least ceil(k / per unit) units, one maybe the source's
    out.remote_nodes = nodes > 1 ? std::max(0, (m.top_k + per_node - 1) / per_node - 1) : 0;
    out.remote_ranks = std::max(0, (m.top_k + per_rank - 1) / per_rank - 1);
  }
  return out;
}

}  // namespace

PlanLinks plan_links(const topology::ClusterSpec& c) {
  PlanLinks out;
  out.npus_per_node = c.node.npus;
  const double link_eff = std::max(c.node.link_efficiency, c.node.low_latency_efficiency);
  double in = c.node.npus > 1 ? c.node.link_bandwidth_Bps * link_eff *
                                    (c.node.fabric == topology::NodeFabricKind::kMesh ? c.node.npus - 1 : 1)
                              : 0.0;
  if (c.scaleout) {
    const double nic = c.scaleout->nic_bandwidth_Bps *
                       std::max(c.scaleout->nic_efficiency, c.scaleout->low_latency_efficiency);
    in += nic;
    out.node_out_Bps = c.scaleout->nic_per_npu ? nic * c.node.npus : nic;
  }
  if (c.supernode) {
    in += c.supernode->port_bandwidth_Bps * std::max(c.supernode->port_efficiency, c.supernode->low_latency_efficiency);
    out.node_out_Bps = 0;  // the supernode's ports carry cross-node traffic too
  }
  out.rank_in_Bps = c.kernels.package_npus > 1 ? 0.0 : in;
  return out;
}

double expected_remote_nodes(int nodes, int per_node, int top_k, int node_limit) {
  if (nodes <= 1 || top_k <= 0) return 0;
  // ways[c][d]: ways to take c experts from the nodes seen so far, d of them hit.
  const int k = top_k;
  std::vector<double> choose(static_cast<std::size_t>(k) + 1);  // C(per_node, j)
  for (int j = 0; j <= k; ++j) choose[static_cast<std::size_t>(j)] = binomial(per_node, j);
  std::vector<std::vector<double>> ways(k + 1, std::vector<double>(k + 1, 0.0));
  ways[0][0] = 1;
  for (int n = 0; n < nodes; ++n) {
    std::vector<std::vector<double>> next(k + 1, std::vector<double>(k + 1, 0.0));
    for (int c = 0; c <= k; ++c)
      for (int d = 0; d <= k; ++d) {
        if (ways[c][d] == 0) continue;
        for (int j = 0; c + j <= k && j <= per_node; ++j)
          next[c + j][d + (j > 0 ? 1 : 0)] += ways[c][d] * choose[static_cast<std::size_t>(j)];
      }
    ways.swap(next);
  }
  double total = 0, distinct = 0;
  const int limit = node_limit > 0 ? node_limit : k;
  for (int d = 0; d <= k; ++d) {
    total += ways[k][d];
    distinct += ways[k][d] * std::min(d, limit);
  }
  if (total <= 0) return 0;  // fewer experts than top_k
  return distinct / total * (nodes - 1) / nodes;
}

double plan_comm_bound_s(const workloads::WorkloadSpec& w, const PlanLinks& links,
                         const std::vector<double>& fill_drain_s) {
  const workloads::ParallelSpec& p = w.parallel;
  const workloads::ModelSpec& m = w.model;
  const int vpp = p.schedule == workloads::PipelineSchedule::kInterleaved ? p.vpp : 1;
  const workloads::StageSplit split =
      workloads::split_layers(m.pipeline_layers(), p.pp, vpp, p.first_stage_layers, p.last_stage_layers);
  const PerToken token = per_token(w, links.npus_per_node);
  const bool full = w.memory.recompute == workloads::Recompute::kFull;
  const double grad = workloads::token_bytes(workloads::Dtype::kBf16, m.hidden, w.precision.scale_block);
  // Per MoE layer and pass, the all-to-all bytes per (token, destination): forward dispatch and
  // combine, backward combine and dispatch, the dispatch again when recomputed.
  const double ep_bytes = workloads::dispatch_bytes_per_token(w) * (full ? 2 : 1) +
                          workloads::combine_bytes_per_token(w) + 2 * grad;
  const double tokens = static_cast<double>(p.tokens_per_micro_batch);  // per rank
  const double tp_in = p.tp > 1 ? (p.tp - 1.0) / p.tp * static_cast<double>(p.micro_batch * p.sequence_length) * grad : 0.0;
  const double phases = full ? 3 : 2;  // TP all-reduces: forward, backward, the forward again
  // Per position (a chunk of layers on a micro-batch's path): bytes per pass.
  const int positions = static_cast<int>(split.chunk_layers.size());
  std::vector<double> node_out(static_cast<std::size_t>(positions), 0.0), rank_in(node_out);
  for (int pos = 0; pos < positions; ++pos) {
    // An MTP module's position (l >= layers) adds nothing: the bound leaves MTP out.
    for (int l = split.chunk_first[pos]; l < std::min(split.chunk_first[pos] + split.chunk_layers[pos], m.layers); ++l) {
      const bool moe = m.is_moe(l);
      const int all_reduces = 1 + (moe ? (m.shared_experts > 0 ? 1 : 0) : 1);  // attention, then the FFN's
      rank_in[pos] += phases * all_reduces * tp_in;
      if (!moe) continue;
      node_out[pos] += links.npus_per_node * tokens * token.remote_nodes * ep_bytes;
      rank_in[pos] += tokens * token.remote_ranks * ep_bytes;
    }
  }
  const int chunks = workloads::pipeline_chunks(p.schedule, p.pp, vpp);
  const double passes = p.schedule == workloads::PipelineSchedule::kDualPipe ? p.micro_batches / 2.0 : p.micro_batches;
  std::vector<double> stage_out(static_cast<std::size_t>(p.pp), 0.0), stage_in(stage_out);
  for (int c = 0; c < chunks; ++c) {
    const auto stage = static_cast<std::size_t>(workloads::chunk_stage(p.schedule, p.pp, c));
    const auto pos = static_cast<std::size_t>(workloads::chunk_position(p.schedule, p.pp, c));
    stage_out[stage] += passes * node_out[pos];
    stage_in[stage] += passes * rank_in[pos];
  }
  double bound = 0;
  for (int s = 0; s < p.pp; ++s) {
    const auto i = static_cast<std::size_t>(s);
    double streams = 0;
    if (links.node_out_Bps > 0) streams = std::max(streams, stage_out[i] / links.node_out_Bps);
    if (links.rank_in_Bps > 0) streams = std::max(streams, stage_in[i] / links.rank_in_Bps);
    // A stage that moves nothing is bounded by its compute alone (plan_step_bound_s).
    if (streams > 0) bound = std::max(bound, streams + (i < fill_drain_s.size() ? fill_drain_s[i] : 0.0));
  }
  return bound;
}

}  // namespace epsim::app
