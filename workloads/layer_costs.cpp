// Per-kernel FLOP and byte formulas.
#include "workloads/layer_costs.hpp"

#include <vector>

#include "core/moe_formulas.hpp"
#include "workloads/routing_sampler.hpp"

namespace epsim::workloads {

namespace {

constexpr double kActivationBytes = 2;  // BF16 activations between kernels

double tokens(const WorkloadSpec& w) { return static_cast<double>(w.parallel.tokens_per_micro_batch); }

// Channels of the attention core: query/key width and value width per head.
double qk_dim(const AttentionSpec& a) {
  return a.kind == AttentionKind::kMla ? a.qk_nope_head_dim + a.qk_rope_head_dim : a.head_dim;
}
double v_dim(const AttentionSpec& a) { return a.kind == AttentionKind::kMla ? a.v_head_dim : a.head_dim; }

// Sum over projections of (input + output) channels: what reading each
// projection's input and writing its output costs per token.
double projection_io_channels(const ModelSpec& m) {
  const AttentionSpec& a = m.attention;
  const double h = static_cast<double>(m.hidden);
  const double heads = a.heads;
  if (a.kind == AttentionKind::kGqa) {
    const double q = heads * a.head_dim, kv = 2.0 * a.kv_heads * a.head_dim;
    return (h + q + kv) + (q + h);
  }
  const double q_out = heads * qk_dim(a);
  const double q = a.q_lora_rank > 0 ? (h + a.q_lora_rank) + (a.q_lora_rank + q_out) : h + q_out;
  const double kv = (h + a.kv_lora_rank + a.qk_rope_head_dim) +
                    (a.kv_lora_rank + heads * (a.qk_nope_head_dim + a.v_head_dim));
  const double o = heads * a.v_head_dim + h;
  return q + kv + o;
}

}  // namespace

double attention_params(const ModelSpec& m) {
  const AttentionSpec& a = m.attention;
  const double h = static_cast<double>(m.hidden);
  const double heads = a.heads;
  if (a.kind == AttentionKind::kGqa) {
    return h * heads * a.head_dim + 2.0 * h * a.kv_heads * a.head_dim + heads * a.head_dim * h;
  }
  const double q = a.q_lora_rank > 0 ? h * a.q_lora_rank + double(a.q_lora_rank) * heads * qk_dim(a)
                                     : h * heads * qk_dim(a);
  const double kv = h * (a.kv_lora_rank + a.qk_rope_head_dim) +
                    double(a.kv_lora_rank) * heads * (a.qk_nope_head_dim + a.v_head_dim);
  const double o = heads * a.v_head_dim * h;
  return q + kv + o;
}

double attention_context(const WorkloadSpec& w, int layer) {
  const double s = static_cast<double>(w.parallel.sequence_length);
  const double window = layer >= 0 && w.model.attention.windowed(layer) ? w.model.attention.sliding_window : s;
  if (window >= s) return (s + 1.0) / 2.0;
  return (window * (window + 1.0) / 2.0 + (s - window) * window) / s;
}

ComputeCost attention_cost(const WorkloadSpec& w, int layer) {
  const ModelSpec& m = w.model;
  const AttentionSpec& a = m.attention;
  const double t = tokens(w);
  const double wbytes = dtype_bytes(w.precision.gemm);
  // Causal core: a token at position i attends to i+1 keys, (S+1)/2 on average
  // (fewer under a sliding window); QK^T and PV are 2 FLOPs per multiply-add each.
  const double context = attention_context(w, layer);
  const double core_flops = t * context * 2.0 * a.heads * (qk_dim(a) + v_dim(a));
  ComputeCost c;
  c.flops = 2.0 * t * attention_params(m) + core_flops;
  c.head_dim = qk_dim(a);
  // Flash-style core: Q, K, V read once, O written once.
  const double core_channels = a.heads * (2.0 * qk_dim(a) + 2.0 * v_dim(a));
  c.hbm_bytes = attention_params(m) * wbytes + t * (projection_io_channels(m) + core_channels) * kActivationBytes;
  c.rows = t;
  // RMSNorm (read + write h) and residual add (read 2h, write h), MLA's two
  // latent norms, RoPE on the rotary query heads and the shared rotary key.
  const double h = static_cast<double>(m.hidden);
  const double rope = a.kind == AttentionKind::kMla ? a.qk_rope_head_dim * (a.heads + 1.0)
                                                    : a.head_dim * (a.heads + a.kv_heads);
  const double latents = a.kind == AttentionKind::kMla ? a.q_lora_rank + a.kv_lora_rank : 0.0;
  c.elementwise_bytes = t * kActivationBytes * (2 * h + 3 * h + 2 * latents + 2 * rope);
  // MLA: q down, q norm, q up, kv down, kv norm, kv up, RoPE, core, output, norm, residual; GQA: no latents.
  c.kernels = a.kind == AttentionKind::kMla ? (a.q_lora_rank > 0 ? 11 : 8) : 6;
  return c;
}

ComputeCost gate_cost(const WorkloadSpec& w) {
  const double t = tokens(w), h = static_cast<double>(w.model.hidden), e = w.model.experts;
  // FP32 router weights and logits, as DeepSeek-V3 keeps the gate in FP32.
  ComputeCost c{2.0 * t * h * e, e * h * 4.0 + t * h * kActivationBytes + t * e * 4.0};
  c.rows = t;
  c.gemms = {{e, h, c.flops}};
  // RMSNorm + residual add (5h at 2 B), permute (read and write the k
  // dispatched copies), unpermute (read k BF16 outputs, write one).
  const double k = w.model.top_k;
  c.elementwise_bytes = t * (5 * h * kActivationBytes + 2 * k * dispatch_bytes_per_token(w) +
                             (k + 1) * h * kActivationBytes);
  c.kernels = 6;  // norm, router GEMM, top-k, permute, unpermute, residual
  return c;
}

ComputeCost swiglu_cost(double rows, std::int64_t hidden, std::int64_t ffn, Dtype gemm) {
  if (rows <= 0) return {};
  const double h = static_cast<double>(hidden), f = static_cast<double>(ffn), b = dtype_bytes(gemm);
  ComputeCost c;
  c.flops = 2.0 * rows * (2.0 * f) * h + 2.0 * rows * h * f;
  c.hbm_bytes = 3.0 * h * f * b + rows * ((h + f) * b + (f + h) * kActivationBytes);
  c.rows = rows;
  c.gemms = {{2.0 * f, h, 2.0 * rows * (2.0 * f) * h}, {h, f, 2.0 * rows * h * f}};  // gate/up, down
  c.kernels = 2;  // gate/up (SwiGLU in its epilogue), down
  return c;
}

ComputeCost dense_ffn_cost(const WorkloadSpec& w) {
  ComputeCost c = swiglu_cost(tokens(w), w.model.hidden, w.model.dense_ffn, w.precision.gemm);
  c.elementwise_bytes = tokens(w) * 5.0 * static_cast<double>(w.model.hidden) * kActivationBytes;  // norm + residual
  c.kernels += 2;
  return c;
}

ComputeCost shared_expert_cost(const WorkloadSpec& w) {
  ComputeCost one = swiglu_cost(tokens(w), w.model.hidden, w.model.shared_expert_ffn, w.precision.gemm);
  one.flops *= w.model.shared_experts;
  one.hbm_bytes *= w.model.shared_experts;
  one.kernels *= w.model.shared_experts;
  for (GemmShape& g : one.gemms) g.share *= w.model.shared_experts;
  return one;
}

ComputeCost selective_recompute_cost(const WorkloadSpec& w, int layer) {
  const ModelSpec& m = w.model;
  const AttentionSpec& a = m.attention;
  const double t = tokens(w), h = static_cast<double>(m.hidden);
  ComputeCost c;
  c.rows = t;
  if (a.kind == AttentionKind::kMla) {
    const double up = double(a.q_lora_rank) * a.heads * qk_dim(a) +
                      double(a.kv_lora_rank) * a.heads * (a.qk_nope_head_dim + a.v_head_dim);
    c.flops = 2.0 * t * up;
    // q_b and kv_b: DeepGEMM's (24576, 1536) and (32768, 512) shapes for DeepSeek-V3.
    c.gemms = {{double(a.heads) * qk_dim(a), double(a.q_lora_rank), 2.0 * t * a.q_lora_rank * a.heads * qk_dim(a)},
               {double(a.heads) * (a.qk_nope_head_dim + a.v_head_dim), double(a.kv_lora_rank),
                2.0 * t * a.kv_lora_rank * a.heads * (a.qk_nope_head_dim + a.v_head_dim)}};
    c.hbm_bytes = up * dtype_bytes(w.precision.gemm) +
                  t * (a.q_lora_rank + a.kv_lora_rank + a.heads * (qk_dim(a) + a.qk_nope_head_dim + a.v_head_dim)) *
                      kActivationBytes;
  }
  const double latents = a.kind == AttentionKind::kMla ? a.q_lora_rank + a.kv_lora_rank : 0.0;
  // SwiGLU: read the gate/up output (2f), write the activation (f).
  const double ffn_channels = m.is_moe(layer) ? m.top_k * static_cast<double>(m.expert_ffn) +
                                                    m.shared_experts * static_cast<double>(m.shared_expert_ffn)
                                              : static_cast<double>(m.dense_ffn);
  c.elementwise_bytes = t * kActivationBytes * (2 * 2 * h + 2 * latents + 3 * ffn_channels);
  c.kernels = a.kind == AttentionKind::kMla ? 6 : 3;  // 2 norms, SwiGLU(s); MLA: 2 latent norms, 2 up-projections
  return c;
}

ComputeCost output_head_cost(const WorkloadSpec& w) {
  const double t = tokens(w), h = static_cast<double>(w.model.hidden), v = static_cast<double>(w.model.vocab);
  ComputeCost c{2.0 * t * h * v, h * v * kActivationBytes + t * h * kActivationBytes + t * v * 4.0};
  c.rows = t;
  c.gemms = {{v, h, c.flops}};
  // Final RMSNorm, and the loss: softmax cross-entropy reads the FP32 logits and writes their gradient.
  c.elementwise_bytes = t * (2 * h * kActivationBytes + 2 * v * 4.0);
  c.kernels = 3;
  return c;
}

ComputeCost mtp_projection_cost(const WorkloadSpec& w) {
  const double t = tokens(w), h = static_cast<double>(w.model.hidden), b = dtype_bytes(w.precision.gemm);
  ComputeCost c{2.0 * t * 2.0 * h * h, 2.0 * h * h * b + t * 3.0 * h * kActivationBytes};
  c.rows = t;
  c.gemms = {{h, 2.0 * h, c.flops}};
  c.elementwise_bytes = t * kActivationBytes * 4 * h;  // the two RMSNorms before the projection
  c.kernels = 3;
  return c;
}

ComputeCost mtp_expert_cost(const WorkloadSpec& w) {
  const int experts_per_rank = w.model.experts / w.parallel.ep;
  const double selections = tokens(w) * w.model.top_k;  // per rank, spread over the EP group's experts
  const std::vector<std::int32_t> rows(static_cast<std::size_t>(experts_per_rank),
                                       static_cast<std::int32_t>(selections / experts_per_rank + 0.5));
  return expert_gemm_cost(w, rows.data(), experts_per_rank);
}

ComputeCost expert_gemm_cost(const WorkloadSpec& w, const std::int32_t* tokens_per_expert, int experts_per_rank) {
  ComputeCost total;
  int active = 0;
  for (int j = 0; j < experts_per_rank; ++j) {
    const double rows = static_cast<double>(aligned_rows(tokens_per_expert[j], w.precision.expert_alignment));
    ComputeCost c = swiglu_cost(rows, w.model.hidden, w.model.expert_ffn, w.precision.gemm);
    if (c.gemms.size() == 2) {
      if (total.gemms.empty()) total.gemms = {{c.gemms[0].n, c.gemms[0].k, 0.0}, {c.gemms[1].n, c.gemms[1].k, 0.0}};
      for (std::size_t g = 0; g < 2; ++g) total.gemms[g].share += c.gemms[g].share;
    }
    total.flops += c.flops;
    total.hbm_bytes += c.hbm_bytes;
    total.rows += rows;
    active += rows > 0 ? 1 : 0;
  }
  total.rows = active > 0 ? total.rows / active : 0;  // mean rows per expert with work
  total.kernels = 2;  // one grouped gate/up GEMM and one grouped down GEMM over the local experts
  return total;
}

double dense_layer_params(const ModelSpec& m, int layer) {
  const double h = static_cast<double>(m.hidden);
  if (!m.is_moe(layer)) return attention_params(m) + 3.0 * h * static_cast<double>(m.dense_ffn);
  return attention_params(m) + m.shared_experts * 3.0 * h * static_cast<double>(m.shared_expert_ffn) +
         static_cast<double>(m.experts) * h;  // + gate
}

double embedding_params(const ModelSpec& m) { return static_cast<double>(m.vocab) * static_cast<double>(m.hidden); }

double dense_params(const ModelSpec& m) {
  const double h = static_cast<double>(m.hidden);
  const double embedding_and_head = 2.0 * static_cast<double>(m.vocab) * h;
  const double dense_ffn = 3.0 * h * static_cast<double>(m.dense_ffn);
  const double moe_shared = m.shared_experts * 3.0 * h * static_cast<double>(m.shared_expert_ffn) +
                            static_cast<double>(m.experts) * h;  // + gate
  return embedding_and_head + m.layers * attention_params(m) + m.dense_layers * dense_ffn +
         m.moe_layers() * moe_shared;
}

double expert_params_per_rank(const WorkloadSpec& w) { return expert_params_per_rank(w, w.model.moe_layers()); }

double expert_params_per_rank(const WorkloadSpec& w, int moe_layers) {
  const ModelSpec& m = w.model;
  const double per_expert = 3.0 * static_cast<double>(m.hidden) * static_cast<double>(m.expert_ffn);
  return static_cast<double>(moe_layers) * w.expert_slots_per_rank() * per_expert;  // redundant slots hold weights too
}

ComputeCost optimizer_cost(double params, Dtype gradient) {
  ComputeCost c{params * kAdamWFlopsPerParam, params * (dtype_bytes(gradient) + kAdamWStateBytesPerParam)};
  c.kernels = 1;  // one fused multi-tensor AdamW
  return c;
}

}  // namespace epsim::workloads
