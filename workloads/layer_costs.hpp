// FLOPs and HBM bytes of each forward compute kernel, per rank and
// micro-batch, and the parameter counts behind gradient sync and the
// optimizer. Formulas are in docs/workload.md; backward = 2x forward.
#pragma once

#include <cstdint>

#include "workloads/workload_spec.hpp"

namespace epsim::workloads {

struct ComputeCost {
  double flops = 0;
  double hbm_bytes = 0;
  // For the platform's kernel-efficiency model (Task has the same fields):
  double rows = 0;               // M of the GEMMs
  double elementwise_bytes = 0;  // memory-bound kernels around the GEMMs (norms, RoPE, permute, loss)
  int kernels = 1;               // kernels launched
  // Its GEMMs, `share` holding their FLOPs (not a share yet), and the
  // attention core's channels per head (Task has the same fields).
  std::vector<GemmShape> gemms = {};
  double head_dim = 0;

  ComputeCost& operator+=(const ComputeCost& o) {  // two kernels' work run as one task (rows kept)
    flops += o.flops;
    hbm_bytes += o.hbm_bytes;
    elementwise_bytes += o.elementwise_bytes;
    kernels += o.kernels;
    gemms.insert(gemms.end(), o.gemms.begin(), o.gemms.end());
    return *this;
  }
};

// Parameters of one layer's attention (projections only; norms ignored).
double attention_params(const ModelSpec& m);

// QKV/O projections (2 x tokens x params) plus the causal attention core
// over sequences of parallel.sequence_length; elementwise: the block's
// RMSNorms (hidden and MLA latents), RoPE and residual add.
// `layer`: the layer whose window applies (model.attention.sliding_window);
// -1 prices a layer without one.
ComputeCost attention_cost(const WorkloadSpec& w, int layer = -1);

// Keys a query attends to on `layer`, the mean over a causal sequence of
// parallel.sequence_length S: (S + 1) / 2, or with a window W < S
// (W (W + 1) / 2 + (S - W) W) / S.
double attention_context(const WorkloadSpec& w, int layer);

// Router: logits over the experts plus top-k; elementwise: the MoE block's
// RMSNorm and residual add, permute and unpermute (weighted sum) of the routed copies.
ComputeCost gate_cost(const WorkloadSpec& w);

// One SwiGLU FFN of `ffn` channels on `rows` rows: gate/up GEMM
// (2 x rows x 2ffn x hidden) then down GEMM (2 x rows x hidden x ffn).
// Bytes: the weights once (in the GEMM dtype) when rows > 0, plus reading
// the input and the activated intermediate (GEMM dtype) and writing the
// intermediate and the output (BF16); the SwiGLU is fused into the gate/up
// GEMM's epilogue.
ComputeCost swiglu_cost(double rows, std::int64_t hidden, std::int64_t ffn, Dtype gemm);

ComputeCost dense_ffn_cost(const WorkloadSpec& w);
ComputeCost shared_expert_cost(const WorkloadSpec& w);
// What memory.recompute = "selective" (DeepSeek-V3's recipe) runs again in
// one layer's backward: the block's two RMSNorms, MLA's latent norms and
// up-projections (q_b, kv_b GEMMs), and the SwiGLU of the routed copies and
// shared experts (or the dense FFN). Rows stay the micro-batch's tokens.
ComputeCost selective_recompute_cost(const WorkloadSpec& w, int layer);

// The output head and loss: 2 x tokens x hidden x vocab; run after the last layer.
ComputeCost output_head_cost(const WorkloadSpec& w);

// An MTP module's projection of [hidden; embedding] to hidden: 2 x tokens x 2h x h.
ComputeCost mtp_projection_cost(const WorkloadSpec& w);
// An MTP module's routed experts on one rank at the uniform expected load:
// tokens x top_k selections per rank spread evenly over its experts.
ComputeCost mtp_expert_cost(const WorkloadSpec& w);

// One rank's grouped expert GEMM: a SwiGLU per local expert on its rows
// rounded up to precision.expert_alignment. `tokens` points at the rank's
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
// dtype) and FP32 param, m, v; write FP32 param, m, v; 15 FLOPs each.
ComputeCost optimizer_cost(double params, Dtype gradient);

}  // namespace epsim::workloads
