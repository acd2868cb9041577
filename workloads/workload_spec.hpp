// A checked workload: the MoE model, how it is parallelised, the number
// formats on the wire and in GEMMs, and how tokens pick experts. Plain data;
// workload_loader.hpp reads it from TOML and checks every field.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/moe_formulas.hpp"
#include "workloads/grad_buckets.hpp"
#include "workloads/parallel_layout.hpp"
#include "workloads/task_graph.hpp"

namespace epsim::workloads {

// The workload TOML format this code reads (`schema = 1`).
inline constexpr int kWorkloadSchema = 1;

enum class AttentionKind { kMla, kGqa };

struct AttentionSpec {
  AttentionKind kind = AttentionKind::kMla;
  int heads = 128;
  // GQA: key/value heads and the per-head dimension.
  int kv_heads = 0;
  int head_dim = 0;
  // MLA (DeepSeek-V2/V3): low-rank query/key-value compression.
  int q_lora_rank = 1536;  // 0 = queries projected directly from hidden
  int kv_lora_rank = 512;
  int qk_nope_head_dim = 128;
  int qk_rope_head_dim = 64;
  int v_head_dim = 128;
  // Sliding-window attention: a query attends to at most `sliding_window`
  // keys (0: the whole causal context) on every layer, or on the even
  // layers only (`window_on_even_layers`: GPT-OSS alternates windowed and full layers).
  int sliding_window = 0;
  bool window_on_even_layers = false;
  bool windowed(int layer) const { return sliding_window > 0 && (!window_on_even_layers || layer % 2 == 0); }
};

// The FFNs' gated activation. A stack fuses the plain SwiGLU into one
// kernel; GPT-OSS's variant (both halves clamped, gate x sigmoid(1.702
// gate) x (up + 1)) runs as eager kernels in the stacks we know
// (docs/operators.md).
enum class Activation { kSwiglu, kClampedSwiglu };

struct ModelSpec {
  std::string name;
  int layers = 0;
  int dense_layers = 0;  // the leading layers that use a dense FFN instead of experts
  std::int64_t hidden = 0;
  AttentionSpec attention;
  std::int64_t dense_ffn = 0;          // intermediate size of the dense FFN (SwiGLU)
  std::int64_t expert_ffn = 0;         // intermediate size of one routed expert (SwiGLU)
  std::int64_t shared_expert_ffn = 0;  // intermediate size of one shared expert
  int experts = 0;                     // routed experts per MoE layer
  int shared_experts = 0;
  int top_k = 0;
  int node_limit = 0;  // max nodes one token's experts may span; 0 = no limit
  std::int64_t vocab = 0;
  // Multi-token prediction modules (DeepSeek-V3 trains with one): each a
  // projection, one MoE block and its own pass of the output head, on the
  // last stage; not model FLOPs (docs/workload.md).
  int mtp_modules = 0;
  Activation activation = Activation::kSwiglu;
  // The longest sequence the model takes (config.json's
  // max_position_embeddings); 0: not given, not checked.
  std::int64_t context_length = 0;

  int moe_layers() const { return layers - dense_layers; }
  // The layers a pipeline splits into chunks: the model's, then its MTP
  // modules, which Megatron's pipeline layout places as layers ("m" before
  // the loss, "L"), so that first/last_stage_layers count them.
  int pipeline_layers() const { return layers + mtp_modules; }
  bool is_moe(int layer) const { return layer >= dense_layers && layer < layers; }
};

// How a step runs its pipeline stages (docs/layout.md), and so how many
// micro-batches' activations a stage holds at its peak (docs/memory.md).
enum class PipelineSchedule {
  kGpipe,        // every forward, then every backward: all micro-batches (memory_fit's formula only; no step runs it)
  kOneFOneB,     // Megatron's one-forward-one-backward (PipeDream-Flush): min(pp - stage, micro-batches)
  kInterleaved,  // Megatron's interleaved 1F1B with vpp model chunks per stage
  kDualPipe,     // DeepSeek-V3's bidirectional schedule: slices s and pp-1-s per stage, F&B pairs overlapped
};
const char* to_string(PipelineSchedule s);  // "gpipe", "1f1b", "interleaved", "dualpipe"

// The job's layout (Megatron-Core's sizes and numbering: ParallelLayout,
// docs/layout.md) and its batch. The derived `micro_batches` and
// `tokens_per_micro_batch` are what the routing sampler and the task graph
// read; the loader fills them from the keys.
struct ParallelSpec {
  int tp = 1;   // tensor-parallel ranks (only 1 is simulated so far)
  int pp = 1;   // pipeline stages
  int vpp = 1;  // model chunks per stage (interleaved schedule)
  int ep = 1;   // expert-parallel ranks; routed experts are split evenly over them
  int etp = 1;  // expert-tensor-parallel ranks (only 1 is simulated so far)
  int dp = 1;   // data-parallel ranks of the dense layers: world = tp x dp x pp
  std::int64_t micro_batch = 1;   // sequences per micro-batch per DP rank
  std::int64_t global_batch = 1;  // sequences per step over all DP ranks = micro_batch x dp x micro_batches
  std::int64_t sequence_length = 0;
  PipelineSchedule schedule = PipelineSchedule::kOneFOneB;
  int first_stage_layers = 0;  // layers of the first model chunk; 0: even split
  int last_stage_layers = 0;   // layers of the last model chunk; 0: even split
  bool tp_across_nodes = false;
  // Gradient sync (docs/workload.md): buckets of at least this many gradient
  // bytes, each reduced on the DP stream once backward has produced it
  // (overlap), or one sync per parameter group after the whole backward.
  double grad_bucket_bytes = kDefaultGradBucketBytes;
  bool overlap_grad_reduce = true;
  // Megatron's 1F1B all-to-all overlap (overlap_moe_expert_parallel_comm,
  // Megatron-Bridge's moe_a2a_overlap): one more warm-up forward, then
  // every steady-state forward runs with the backward beside it as one
  // pair, so one micro-batch's dispatch and combine run under the other's
  // compute. Interleaved schedules, or one stage.
  bool moe_a2a_overlap = false;
  int ranks_per_node = 8;  // the workload's node, for node-limited routing and per-node dedup
  SourceLocation ranks_given_at;  // where parallel.ep was set: memory refusals of the ranks point here

  // Derived by the loader.
  int micro_batches = 1;                    // per step, per DP rank
  std::int64_t tokens_per_micro_batch = 0;  // per rank: micro_batch x sequence_length
  // Set by fold_replicas() (replica_fold.hpp), never by the loader: the EP
  // groups per stage this spec's one group stands for; its gradient sync
  // spans all of them and its optimizer shards are theirs.
  int folded_replicas = 1;

  ParallelLayout layout() const { return ParallelLayout{tp, pp, dp, ep, etp}; }
  int full_dp() const { return dp * folded_replicas; }      // dp of the layout a folded spec stands for
  int full_edp() const { return edp() * folded_replicas; }  // its edp
  int world() const { return tp * dp * pp; }
  int stage_ranks() const { return tp * dp; }
  // Replicas of an EP group inside one stage (expert data parallelism).
  int edp() const { return stage_ranks() / (etp * ep); }
  // Ranks of one stage's EP groups: what the routing sample covers.
  int ranks() const { return ep * edp(); }
  int nodes_per_replica() const { return ep / ranks_per_node; }
};

struct PrecisionSpec {
  Dtype dispatch = Dtype::kFp8;  // kFp8 carries one FP32 scale per `scale_block` channels
  Dtype combine = Dtype::kBf16;
  Dtype gemm = Dtype::kBf16;     // expert, shared-expert, dense-FFN and attention-projection GEMMs
  // The dtype whose peak GEMMs run at on an NPU that lacks `gemm` (FP8 on a
  // 910B); operand bytes stay those of `gemm`. Unset ("none"): such a run is
  // an error.
  std::optional<Dtype> gemm_fallback;
  Dtype gradient = Dtype::kBf16;  // gradients as all-reduced and read by the optimizer
  int scale_block = static_cast<int>(kFp8ScaleBlock);
  int expert_alignment = 128;  // rows per local expert are rounded up to this
  // When true, a dispatched token also carries its top-k indices (int64) and
  // weights (fp32), and a combined one its weights, as DeepEP-Ascend's test
  // counts bytes (seed 001). DeepEP's own benchmark does not count them.
  bool routing_metadata = false;
};

enum class RoutingKind { kUniform, kZipf, kHot, kTrace };
// "uniform", "zipf", "hot", "trace": the routing.kind value.
const char* to_string(RoutingKind kind);
enum class ExpertOrder { kNone, kFixed, kPerLayer };
// Which experts hold the popular slots of zipf/hot routing (docs/workload.md).
enum class HotPlacement {
  kFirst,   // slot i on expert i: the hottest experts all on rank 0, the worst case
  kSpread,  // slot i on rank i mod ep: the ep hottest experts on distinct ranks
  kRandom,  // a seeded shuffle
};

// Measured loads: tokens[moe_layer][expert], read from a CSV.
struct RoutingTrace {
  std::string path;
  std::vector<std::vector<double>> tokens;
};

struct RoutingSpec {
  RoutingKind kind = RoutingKind::kUniform;
  double zipf_s = 1.0;      // zipf: weight of the i-th hottest expert ~ i^-s
  double hot_share = 0.5;   // hot: share of the pick weight held by the hot experts
  int hot_experts = 1;      // hot: how many experts are hot
  ExpertOrder order = ExpertOrder::kNone;  // whether the placement changes from layer to layer
  // Default kFirst under order kNone, kRandom under kFixed and kPerLayer.
  HotPlacement hot_placement = HotPlacement::kFirst;
  double layer_jitter = 0;  // per-layer multiplicative noise on weights, in [0, 1)
  std::uint64_t seed = 1;
  RoutingTrace trace;
  // Mitigations (docs/workload.md, "Mitigations"). Redundant experts:
  // extra expert slots, redundant_experts / ep on every rank, holding
  // replicas of the hottest experts (EPLB-style, workloads/expert_replicas.hpp);
  // a replicated expert's picks alternate over its replicas. 0: none.
  int redundant_experts = 0;
  // Token dropping: each source rank sends an expert at most
  // ceil(tokens x top_k / experts x capacity_factor) of its tokens (the
  // router's capacity, as Megatron computes it per rank); later picks are
  // dropped, neither sent nor computed. 0: no capacity, nothing dropped.
  double capacity_factor = 0;
  bool per_token_mitigations() const { return redundant_experts > 0 || capacity_factor > 0; }
};

// Which activations backward recomputes instead of keeping (docs/memory.md).
enum class Recompute {
  kNone,       // every activation backward needs is kept
  kSelective,  // DeepSeek-V3's recipe: RMSNorm outputs, MLA up-projections and SwiGLU outputs recomputed
  kFull,       // only each layer's input is kept; one layer is recomputed at a time
  kModules,    // Megatron's recompute_modules, as MemorySpec::modules lists them
};

// Megatron-Core's recompute_modules (selective granularity): each module's
// outputs are dropped after the forward and recomputed before its backward.
// Megatron's "moe" (the whole MoE layer, its all-to-alls again) is not
// simulated.
struct RecomputeModules {
  bool layernorm = false;       // the RMSNorms' outputs (the projections' and FFNs' inputs)
  bool mla_up_proj = false;     // MLA's q and kv up-projections' outputs
  bool core_attn = false;       // the attention core's output and softmax statistics
  bool mlp = false;             // a dense layer's FFN, its input kept
  bool shared_experts = false;  // the shared experts' FFN, its input kept
  bool moe_act = false;         // the routed experts' SwiGLU outputs (and each copy's output)
};

// [memory]: what the memory-fit check (workloads/memory_fit.hpp) assumes
// about the training framework, and what to do when a rank does not fit.
struct MemorySpec {
  Recompute recompute = Recompute::kNone;
  RecomputeModules modules;  // what kModules recomputes
  int zero_stage = 0;             // 1: optimizer state sharded over the data-parallel groups
  Dtype moments = Dtype::kFp32;   // Adam's m and v (DeepSeek-V3 keeps them in BF16)
  bool allow_oversubscribed = false;  // simulate a step whose ranks exceed HBM instead of refusing it
};

// [serving]: one inference step instead of a training step (docs/serving.md).
enum class ServingPhase {
  kPrefill,  // every prompt's tokens through every layer, the first output token sampled
  kDecode,   // one new token per sequence, attending to its KV cache
};
const char* to_string(ServingPhase phase);  // "prefill", "decode"

struct ServingSpec {
  ServingPhase phase = ServingPhase::kDecode;
  std::int64_t batch = 0;          // sequences per attention (DP) rank in one step
  std::int64_t prompt_length = 0;  // prefill: tokens each prompt computes
  std::int64_t kv_length = 0;      // decode: tokens already in each sequence's KV cache
  // The batch split into this many micro-batches whose kernels and
  // all-to-alls interleave (DeepSeek's two-micro-batch overlap); 1: none.
  int micro_batches = 2;
  Dtype kv_cache = Dtype::kBf16;   // the KV cache's element type
  SourceLocation batch_given_at;   // where serving.batch was set: memory refusals point here
  // Prefill: the share of each prompt's tokens found in a prefix cache
  // (read, not computed; DeepSeek's service: 56.3 %).
  double prefix_hit = 0;
  // Prefill: a prompt's computed tokens per step (chunked prefill: each
  // chunk attends to the prefix and the chunks before it, the prompt's
  // first token comes with its last chunk); 0: the whole prompt in one step.
  std::int64_t chunk = 0;
  // Decode: draft tokens the model's MTP modules propose per step, verified
  // with the next token (speculative decoding), and the mean share of them
  // accepted.
  int mtp_tokens = 0;
  double acceptance = 0;

  bool prefill() const { return phase == ServingPhase::kPrefill; }
  // A prompt's tokens that are computed, the rest read from the prefix cache.
  std::int64_t computed_prompt_tokens() const {
    return prompt_length - static_cast<std::int64_t>(static_cast<double>(prompt_length) * prefix_hit);
  }
  // Query tokens per sequence in one step: a prompt's chunk (all its
  // computed tokens unless chunked), or decode's token and drafts.
  std::int64_t step_tokens() const {
    if (!prefill()) return 1 + mtp_tokens;
    return chunk > 0 ? std::min(chunk, computed_prompt_tokens()) : computed_prompt_tokens();
  }
  // Steps a prompt takes to its first token: its chunks.
  std::int64_t prefill_steps() const {
    return prefill() ? (computed_prompt_tokens() + step_tokens() - 1) / step_tokens() : 1;
  }
  // What a step serves per sequence: prefill the prompt (cache hits
  // included, as services count input; a chunk serves its share of it),
  // decode its expected output tokens.
  double served_tokens() const {
    if (!prefill()) return 1.0 + acceptance * mtp_tokens;
    return static_cast<double>(prompt_length) * static_cast<double>(step_tokens()) /
           static_cast<double>(computed_prompt_tokens());
  }
  // Tokens each sequence holds in its KV cache at the end of the step.
  std::int64_t cached_tokens() const { return prefill() ? prompt_length : kv_length + 1 + mtp_tokens; }
};

struct WorkloadSpec {
  std::string source;  // file the workload came from
  ModelSpec model;
  ParallelSpec parallel;
  PrecisionSpec precision;
  RoutingSpec routing;
  MemorySpec memory;
  std::optional<ServingSpec> serving;  // set: the step is a serving step (no backward, no optimizer)
  bool decoding() const { return serving && serving->phase == ServingPhase::kDecode; }
  // Expert slots per rank: (experts + redundant_experts) / ep, its own
  // experts (expert_home_rank) first, replicas in the rest.
  int expert_slots_per_rank() const { return (model.experts + routing.redundant_experts) / parallel.ep; }
};

// Where expert parallelism puts each expert: rank r owns experts
// [first_expert_of_rank(r), first_expert_of_rank(r + 1)), contiguous and as
// even as the division allows: experts / ranks each when it divides, else
// some ranks one fewer, their free slots taken by redundant experts
// (DeepSeek's decode EP144: 256 experts and 32 replicas, two slots on each
// of 144 ranks; EP320: one on each of 320).
inline int expert_home_rank(int expert, int experts, int ranks) {
  return static_cast<int>(static_cast<std::int64_t>(expert) * ranks / experts);
}
inline int first_expert_of_rank(int rank, int experts, int ranks) {
  return static_cast<int>((static_cast<std::int64_t>(rank) * experts + ranks - 1) / ranks);
}

// The capacity of one source rank for one expert under routing.capacity_factor
// (0: none): ceil(tokens x top_k / experts x capacity_factor).
std::int64_t expert_capacity(const WorkloadSpec& w);

// Memory a job's traffic matrices cost while it is sampled, built and
// replayed, ~32 B per matrix entry: measured 9-10 B per entry for sampling
// and the task graph (`workload show deepseek-v3`, EP64 and EP256) and
// ~18 B more in the replay (`run` at EP256: 260 MB in all, of which 52 MB
// platform), rounded up. One matrix per MoE layer and micro-batch, ranks^2.
inline constexpr double kTrafficBytesPerEntry = 32;
inline double traffic_memory_bytes(int moe_layers, int micro_batches, int ranks) {
  return kTrafficBytesPerEntry * moe_layers * static_cast<double>(micro_batches) * ranks * static_cast<double>(ranks);
}

// Bytes of one element of `dtype`.
double dtype_bytes(Dtype dtype);

// Bytes of one token of `hidden` channels on the wire: BF16 is 2 per channel;
// FP8 is 1 per channel plus a 4-byte FP32 scale per `scale_block` channels.
double token_bytes(Dtype dtype, std::int64_t hidden, int scale_block);

// Payload per (token, destination rank) of the forward all-to-alls, with the
// routing metadata when `precision.routing_metadata`.
double dispatch_bytes_per_token(const WorkloadSpec& w);
double combine_bytes_per_token(const WorkloadSpec& w);

// Seed 000/001's closed form of expected distinct ranks per token,
// R(1-(1-1/R)^k) with k draws with replacement, is
// epsim::expected_distinct_ranks (core/moe_formulas.hpp).

// The exact expectation for k distinct experts drawn uniformly from E
// experts, rank r owning m_r of them (expert_home_rank):
// sum over r of 1 - C(E-m_r, k)/C(E, k); R(1 - C(E-m, k)/C(E, k)) when
// every rank owns m = E/R.
double distinct_ranks_exact(int ranks, int experts, int top_k);

}  // namespace epsim::workloads
