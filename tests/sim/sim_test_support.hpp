// Helpers for simulator tests: running a simulation in a child process
// (SimGrid allows one engine per process, a test may need several) and
// building small MoE task graphs by hand.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "sim/platform/platform_facts.hpp"
#include "workloads/task_graph.hpp"

namespace epsim::sim::testing {

// Path of a test platform: "two_nodes" -> <source>/tests/sim/platforms/two_nodes.xml.
std::string platform_path(const std::string& name);

// Runs `body` in a forked child and returns its result. If the child throws,
// returns "ERROR: <what()>"; if it crashes, fails the calling test.
std::string in_child(const std::function<std::string()>& body);

// Facts of `nodes` x `npus_per_node` NPUs with no links: enough for plans
// and placements, which only read the NPU count and layout.
PlatformFacts bare_facts(int nodes, int npus_per_node);

// Facts of `nodes` x `npus_per_node` NPUs (1e14 flop/s BF16, 1 TB/s HBM)
// whose only links are their HBMs, link i of NPU i; the caller adds the
// fabric's links and routes.
PlatformFacts hbm_facts(int nodes, int npus_per_node);

// A dispatch of traffic 0 at `bytes_per_token`.
workloads::Task dispatch_task(double bytes_per_token);

// A forward MoE pass: per layer and micro-batch attention -> gate ->
// dispatch -> expert GEMM -> combine, with rank r holding experts whose load
// share is weights[r] (uniform when empty).
struct MoeShape {
  int ranks = 4;
  int ranks_per_node = 2;
  int layers = 2;
  int micro_batches = 2;
  int tokens_per_rank = 4096;
  double bytes_per_token = 7168;         // bf16 hidden 3584
  double attention_flops = 2e12;          // per rank and micro-batch
  double attention_hbm_bytes = 2e9;
  double expert_flops_per_token = 2e8;    // per token routed to the rank
  double expert_hbm_bytes = 1e9;          // weights read per expert GEMM
  std::vector<double> weights;            // per rank, sums to 1
  bool grad_all_reduce = false;           // one all-reduce of 1 GB per rank over all ranks at the end
};

workloads::TaskGraph moe_graph(const MoeShape& shape);

// 16 ranks, 4 per node (four_nodes.xml), two layers of small kernels; rank
// `hot` (when >= 0) gets `hot_share` of every rank's tokens.
MoeShape sixteen_ranks(int hot = -1, double hot_share = 0);

// A graph holding one compute task: flops and HBM bytes per rank.
workloads::TaskGraph one_compute_task(int ranks, int ranks_per_node, workloads::Dtype dtype,
                                      std::vector<double> flops, std::vector<double> hbm_bytes);

// A graph holding one dispatch: tokens[src * ranks + dst] at bytes_per_token,
// node_tokens = per-node sums (each token bound for one rank only).
workloads::TaskGraph one_dispatch(int ranks, int ranks_per_node, std::vector<std::int32_t> tokens,
                                  double bytes_per_token);

}  // namespace epsim::sim::testing
