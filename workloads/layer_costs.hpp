// The operators of each module of a layer, forward and backward, per rank
// and micro-batch, and the parameter counts behind gradient sync and the
// optimizer. Formulas are in docs/operators.md and docs/workload.md.
#pragma once

#include <cstdint>

#include "workloads/operators.hpp"
#include "workloads/workload_spec.hpp"

namespace epsim::workloads {

// One module's work on one rank: its forward operators and, per operator,
// their backward (docs/operators.md); FLOPs and bytes are the forward's
// sums. Each GEMM carries its own M (an expert GEMM: the mean rows of the
// experts with work).
struct ComputeCost {
  double flops = 0;
  double hbm_bytes = 0;
  Operators ops;
  Operators backward;

  ComputeCost() = default;
  ComputeCost(Operators forward, Operators backward_ops);
  ComputeCost& operator+=(const ComputeCost& o);  // two modules' work run as one task (rows kept)
};

// Parameters of one layer's attention (projections only; norms ignored).
double attention_params(const ModelSpec& m);

// The attention block: its RMSNorm, the QKV/O projections (MLA: the
// latent down/up projections and their norms), RoPE, the causal attention
// core over sequences of parallel.sequence_length, and the residual add.
// `layer`: the layer whose window applies (model.attention.sliding_window);
// -1 prices a layer without one.
ComputeCost attention_cost(const WorkloadSpec& w, int layer = -1);

// Keys a query attends to on `layer`, the mean over a causal sequence of
// parallel.sequence_length S: (S + 1) / 2, or with a window W < S
// (W (W + 1) / 2 + (S - W) W) / S. A decode step's token attends to its
// cache and itself (serving.kv_length + 1), at most W keys.
double attention_context(const WorkloadSpec& w, int layer);

// The MoE block around its experts: RMSNorm, the router's GEMM (FP32, as
// DeepSeek-V3 and Megatron keep it) and its score function and top-k, the
// permutation of the routed copies, their weighted un-permutation, and
// the residual add.
ComputeCost gate_cost(const WorkloadSpec& w);

// One SwiGLU FFN of `ffn` channels on `rows` rows (`groups` experts of
// `rows` each): the gate/up GEMM (rows x 2ffn x hidden), the SwiGLU (reads
// 2ffn, writes ffn per row) and the down GEMM (rows x hidden x ffn).
// `groups` 0: dense GEMMs. A clamped SwiGLU (GPT-OSS) is never fused: its
// seven eager kernels move 3x the plain one's two (15 against 5 row
// widths per row), counted as 3x its bytes.
ComputeCost swiglu_cost(double rows, std::int64_t hidden, std::int64_t ffn, Dtype gemm, double groups = 0,
                        Activation activation = Activation::kSwiglu);

ComputeCost dense_ffn_cost(const WorkloadSpec& w);
ComputeCost shared_expert_cost(const WorkloadSpec& w);
// What memory.recompute = "selective" (DeepSeek-V3's recipe) runs again in
// one layer's backward, as forward operators: the block's two RMSNorms,
// MLA's latent norms and up-projections (q_b, kv_b GEMMs), and the SwiGLU
// of the routed copies and shared experts (or the dense FFN).
ComputeCost selective_recompute_cost(const WorkloadSpec& w, int layer);

// What memory.recompute's module list (Megatron's recompute_modules) runs
// again in one layer's backward, as forward operators: layernorm the
// block's RMSNorms (and MLA's latent norms), mla_up_proj MLA's q_b and kv_b
// GEMMs, core_attn the attention core, mlp a dense layer's FFN,
// shared_experts the shared experts' FFN, moe_act the routed copies' SwiGLU.
ComputeCost module_recompute_cost(const WorkloadSpec& w, int layer);

// The final RMSNorm, the output head (tokens x vocab x hidden) and the
// cross-entropy loss over the vocabulary (FP32 logits); after the last layer.
ComputeCost output_head_cost(const WorkloadSpec& w);

// A serving step's head: the final RMSNorm, the output head and the
// sampler's read of the FP32 logits, on every decode token or on each
// prompt's last token (prefill); no loss, no backward.
ComputeCost serving_head_cost(const WorkloadSpec& w);

// Bytes one token leaves in one layer's KV cache: MLA's latent and rotary
// key (kv_lora_rank + qk_rope_head_dim), GQA's keys and values (2 x
// kv_heads x head_dim), at serving.kv_cache's element size (BF16 outside
// serving); FP8 MLA as FlashMLA stores it: the latent in FP8 with an FP32
// scale per scale_block channels, the rotary key in BF16.
double kv_cache_bytes_per_token(const WorkloadSpec& w);

// An MTP module's projection of [hidden; embedding] to hidden: 2 x tokens x 2h x h.
ComputeCost mtp_projection_cost(const WorkloadSpec& w);

// One rank's grouped expert GEMMs: a SwiGLU per local expert on its rows
// rounded up to precision.expert_alignment, as grouped GEMMs over the
// experts with work at their mean rows. `tokens` points at the rank's
// experts_per_rank counts.
ComputeCost expert_gemm_cost(const WorkloadSpec& w, const std::int32_t* tokens, int experts_per_rank);

// Parameters every rank holds a replica of (embedding, head, attention,
// gates, shared experts, dense FFNs), and each rank's routed-expert ones.
double dense_params(const ModelSpec& m);
double expert_params_per_rank(const WorkloadSpec& w);
// The same per pipeline stage: one layer's replicated parameters
// (attention, and a dense FFN or the gate and shared experts), the input
// embedding's (the output head has as many), and the routed-expert ones of
// `moe_layers` layers.
double dense_layer_params(const ModelSpec& m, int layer);
double embedding_params(const ModelSpec& m);
double expert_params_per_rank(const WorkloadSpec& w, int moe_layers);

// AdamW on `params` parameters (seed 002): read the gradient (gradient
// dtype) and FP32 param, m, v; write FP32 param, m, v; one fused kernel,
// memory-bound (its 15 FLOPs per parameter are counted, not priced).
ComputeCost optimizer_cost(double params, Dtype gradient);

}  // namespace epsim::workloads
