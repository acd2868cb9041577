// The task graph of one training step, in SPMD form: every task is one
// kernel or collective that all EP ranks run, with per-rank amounts. This
// keeps a DeepSeek-V3 step at EP256 to a few thousand tasks instead of
// hundreds of thousands, and lets the simulator choose how to fuse.
//
// Contract between workloads/ (which builds it) and sim/ (which replays it).
// Plain data; no SimGrid, no host names.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "workloads/operators.hpp"

namespace epsim::workloads {


enum class TaskKind {
  kAttention,      // QKV/O projections + attention core (MLA or GQA), fused
  kGate,           // router logits + top-k
  kDenseFfn,       // FFN of the leading dense layers
  kSharedExpert,   // the shared expert's GEMMs
  kExpertGemm,     // grouped GEMM over the rank's local experts (gate/up + down)
  kDispatch,       // all-to-all: tokens to the ranks of their experts
  kCombine,        // all-to-all: expert outputs back to the tokens' ranks
  kGradAllReduce,  // gradient synchronisation
  kOptimizer,      // AdamW update, memory-bound
  kPipelineP2p,    // activations (forward) or their gradients (backward) to the next pipeline stage's ranks
  kTpAllReduce,    // a TP group sums a sharded kernel's partial outputs (groups, bytes per rank)
};

// kRecompute: a layer's forward run again just before its backward, when
// memory.recompute = "full" kept only the layer's input.
enum class Phase { kForward, kRecompute, kBackward, kGradSync, kOptimizer };

// What the groups of a kGradAllReduce task run over their `bytes` (S, the
// whole buffer as nccl-tests counts it): an all-reduce, or one of its two
// halves as a ZeRO-style step runs them (reduce-scatter of the gradients,
// all-gather of the updated parameters), each rank ending with or starting
// from S / group size.
enum class GroupCollective { kAllReduce, kReduceScatter, kAllGather };

using TaskId = std::int32_t;

// Tokens sent from each source rank to each destination rank for one
// layer and micro-batch, counted once per (token, destination rank): a token
// whose k experts sit on 3 ranks counts once on each of the 3.
struct TrafficMatrix {
  int ranks = 0;
  int ranks_per_node = 0;
  std::vector<std::int32_t> tokens;       // [src * ranks + dst]
  std::vector<std::int32_t> node_tokens;  // [src * nodes + dst_node], once per (token, node)
  std::int64_t selections_per_rank = 0;   // (token, expert) pairs each source rank routes; 0: not known
  std::int64_t tokens_per_rank = 0;       // tokens each source rank routes (combine writes one output each); 0: not known

  std::int64_t at(int src, int dst) const { return tokens[static_cast<std::size_t>(src) * ranks + dst]; }
  int nodes() const { return ranks / ranks_per_node; }
  std::int64_t to_node(int src, int node) const {
    return node_tokens[static_cast<std::size_t>(src) * nodes() + node];
  }
};

struct Task {
  TaskId id = 0;
  TaskKind kind = TaskKind::kAttention;
  Phase phase = Phase::kForward;
  int layer = -1;        // -1 for step-wide tasks (gradient sync, optimizer)
  int micro_batch = -1;  // -1 when not tied to one micro-batch
  // Compute tasks: the pipeline stage whose ranks run it (TaskGraph::runs);
  // -1: every rank. The other ranks' amounts are 0.
  int stage = -1;

  // Tasks this one waits for; all have smaller ids. For a compute task, rank
  // r waits for rank r's part of a compute dependency and for the whole of a
  // collective dependency.
  std::vector<TaskId> deps;

  // Compute tasks: per-rank amounts (size = ranks).
  Dtype dtype = Dtype::kBf16;
  std::vector<double> flops;
  std::vector<double> hbm_bytes;
  // The operators one running rank executes (docs/operators.md): what
  // the stack prices, each at its own shape. Rank r runs share() of them:
  // flops[r] over their FLOPs (bytes when they have none), so an expert
  // GEMM's ranks differ by their experts' rows and every other task runs
  // alike on its stage's ranks.
  Operators ops;
  double share(int rank) const {
    const double f = total_flops(ops), b = total_bytes(ops);
    const auto i = static_cast<std::size_t>(rank);
    if (f > 0) return flops.empty() ? 0.0 : flops[i] / f;
    return b > 0 && !hbm_bytes.empty() ? hbm_bytes[i] / b : 0.0;
  }

  // kDispatch / kCombine / kPipelineP2p: bytes(src -> dst) =
  // traffic.at(src, dst) * bytes_per_token, or traffic.at(dst, src) *
  // bytes_per_token when `transpose` (combine). The traffic's rank i is
  // rank i of the graph when `groups` is empty, else rank groups[0][i] (a
  // pipeline stage's ranks; for kPipelineP2p the sender's then the receiver's).
  int traffic = -1;  // index into TaskGraph::traffic

  // kDispatch / kCombine / kExpertGemm: the routing job (MoE layer x
  // micro_batches + micro-batch, as TaskGraph::traffic) whose draw sets its
  // traffic or its experts' loads; -1 for every other task.
  int routing = -1;
  bool transpose = false;
  double bytes_per_token = 0;

  // kGradAllReduce: independent groups of ranks, each running `group_op` over `bytes` per rank;
  // kTpAllReduce: each all-reducing `bytes` per rank. All collectives: the union of `groups`
  // takes part (empty: every rank).
  std::vector<std::vector<int>> groups;
  double bytes = 0;
  GroupCollective group_op = GroupCollective::kAllReduce;

  bool is_collective() const {
    return kind == TaskKind::kDispatch || kind == TaskKind::kCombine || kind == TaskKind::kGradAllReduce ||
           kind == TaskKind::kPipelineP2p || kind == TaskKind::kTpAllReduce;
  }
  // Collectives whose traffic matrix is indexed through groups[0].
  bool uses_traffic() const {
    return kind == TaskKind::kDispatch || kind == TaskKind::kCombine || kind == TaskKind::kPipelineP2p;
  }
};

struct TaskGraph {
  int ranks = 0;
  int ranks_per_node = 0;
  // Pipeline stages: stage s is ranks [s x stage_ranks, (s+1) x stage_ranks).
  int stages = 1;
  int stage_ranks = 0;
  // A folded graph (replica_fold.hpp) keeps one EP group per stage of a
  // layout with `folded_replicas` of them; its gradient collectives' groups
  // also name the others' ranks as phantom ids in [ranks, full_rank_of.size()).
  // full_rank_of[id]: the full layout's rank an id stands for (empty: not folded).
  int folded_replicas = 1;
  std::vector<int> full_rank_of;
  int phantom_ranks() const { return full_rank_of.empty() ? 0 : static_cast<int>(full_rank_of.size()) - ranks; }
  std::vector<Task> tasks;            // topologically ordered: deps precede
  // One per (MoE layer, micro-batch), then (with stages > 1) the pattern of
  // the pipeline's point-to-point transfers.
  std::vector<TrafficMatrix> traffic;
  // (token, expert) picks of the step's routing, and those the routing's
  // capacity dropped (routing.capacity_factor; 0 without one).
  std::int64_t routed_picks = 0;
  std::int64_t dropped_picks = 0;

  // Whether `rank` runs its part of compute task t. A rank's part of a task
  // it does not run is empty and done from the start: nothing waits for it.
  bool runs(const Task& t, int rank) const { return t.stage < 0 || rank / stage_ranks == t.stage; }
  // The ranks taking part in collective t: the union of its groups; every
  // rank for a dispatch/combine without groups.
  std::vector<bool> members(const Task& t) const {
    std::vector<bool> joins(static_cast<std::size_t>(ranks), t.groups.empty() && t.kind != TaskKind::kGradAllReduce);
    for (const auto& g : t.groups)
      for (int r : g)
        if (r >= 0 && r < ranks) joins[static_cast<std::size_t>(r)] = true;
    return joins;
  }
};

// A task kind's identifier in JSON ("expert_gemm").
const char* to_string(TaskKind kind);
// A task kind as reports, traces and plots print it ("expert GEMM").
const char* task_kind_label(TaskKind kind);
const char* to_string(Phase phase);
const char* to_string(GroupCollective op);  // "allreduce", "reducescatter", "allgather" (nccl-tests' names)
const char* to_string(Dtype dtype);

}  // namespace epsim::workloads
