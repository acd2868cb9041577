// The communication a layout's step cannot avoid, in closed form, for the
// plan's pruning (docs/plan.md, "The bound"): on H800 and other clusters
// where the all-to-alls decide, the compute-only bound (plan_bound.hpp)
// prunes nothing. Every figure is chosen so that the bound stays below any
// replay of the layout: the fastest rates (line rate times the larger of
// the normal and low-latency efficiencies, no contention, no latency, no
// kernel cost), the fewest bytes any dispatch algorithm could move (one
// copy per token and remote node, or per remote rank, whatever the kernel
// sends), expectations of uniform routing taken at 95 % (the sampled
// routing's mean sits within a fraction of it), and terms the closed form
// cannot bound safely left out (gradient sync, pipeline transfers, MTP).
#pragma once

#include <vector>

#include "topology/cluster_spec.hpp"
#include "workloads/workload_spec.hpp"

namespace epsim::app {

// The platform's fastest paths, bytes per second.
struct PlanLinks {
  int npus_per_node = 0;
  // Everything that can leave (or enter) one node towards other nodes per
  // second: its NICs together; 0 when the cluster has none or a scale-up
  // fabric spans the nodes (a supernode), which may carry that traffic.
  double node_out_Bps = 0;
  // Everything that can arrive at one NPU per second from other NPUs: its
  // scale-up links (a mesh's npus-1 pairs, a switch port, a supernode port)
  // plus a NIC's line; 0 when ranks are dies sharing a package link the
  // closed form does not see (the bound then leaves this term out).
  double rank_in_Bps = 0;
};
PlanLinks plan_links(const topology::ClusterSpec& cluster);

// The expected number of distinct nodes other than the source's that one
// token's `top_k` distinct experts, drawn uniformly from `nodes` nodes of
// `per_node` experts each, span, when a token keeps to the first
// `node_limit` nodes it meets (0: no limit): E[min(limit, D)] x (nodes-1)/nodes,
// D the distinct nodes of unlimited draws (exact, by the groups' counts).
double expected_remote_nodes(int nodes, int per_node, int top_k, int node_limit);

// Seconds: the largest over pipeline stages of (a) a node's dispatch and
// combine bytes to other nodes over the step / node_out_Bps and (b) a
// rank's dispatch, combine and TP all-reduce bytes in / rank_in_Bps, each
// plus the stage's fill and drain (`fill_drain_s`, plan_fill_drain_s: none
// of its collectives can start before the forward of the chunks ahead nor
// end later than their backward allows; empty: none counted).
// Per MoE layer and pass: dispatch and combine forward, combine and
// dispatch backward (BF16 gradients), the dispatch again under full
// recomputation; per token the expected remote nodes (a) or ranks (b) for
// uniform routing at 95 %, the fewest any routing allows otherwise
// (ceil(top_k / experts per node) - 1), none with token dropping or
// redundant experts. TP: each all-reduce of a micro-batch's BF16
// activations brings (tp-1)/tp of them into every rank.
double plan_comm_bound_s(const workloads::WorkloadSpec& w, const PlanLinks& links,
                         const std::vector<double>& fill_drain_s = {});

}  // namespace epsim::app
