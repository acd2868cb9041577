// Per-kernel FLOP and byte formulas.
#include "workloads/layer_costs.hpp"

#include <algorithm>
#include <cmath>
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

// A forward operator list's backward, operator by operator: GEMMs by
// gemm_backward, the attention core by attention_backward, and each
// memory-bound kernel by `memory_backward` (the same order reversed).
Operators backward_of(const Operators& forward, const Operators& memory_backward) {
  Operators out = memory_backward;
  for (auto it = forward.rbegin(); it != forward.rend(); ++it) {
    if (it->op_class == OpClass::kGemm || it->op_class == OpClass::kGroupedGemm) {
      for (const Operator& o : gemm_backward(*it)) out.push_back(o);
    } else if (it->op_class == OpClass::kAttention) {
      out.push_back(attention_backward(*it));
    }
  }
  return out;
}

// RMSNorm over `rows` x `width`: forward reads and writes the row; backward
// reads the input and the gradient and writes one.
Operator norm(double rows, double width) { return memory_op(OpClass::kNorm, rows * width * 2 * kActivationBytes); }
Operator norm_backward(double rows, double width) {
  return memory_op(OpClass::kNorm, rows * width * 3 * kActivationBytes, 1, true);
}
// A residual add: reads two rows, writes one; its backward passes the gradient on (nothing moves).
Operator residual_add(double rows, double width) {
  return memory_op(OpClass::kElementwise, rows * width * 3 * kActivationBytes);
}
// RoPE over `channels` rotary channels per token, forward and backward alike.
Operator rope(double rows, double channels, bool backward) {
  return memory_op(OpClass::kElementwise, rows * channels * 2 * kActivationBytes, 1, backward);
}

}  // namespace

ComputeCost::ComputeCost(Operators forward, Operators backward_ops)
    : flops(total_flops(forward)), hbm_bytes(total_bytes(forward)), ops(std::move(forward)),
      backward(std::move(backward_ops)) {}

ComputeCost& ComputeCost::operator+=(const ComputeCost& o) {
  flops += o.flops;
  hbm_bytes += o.hbm_bytes;
  ops.insert(ops.end(), o.ops.begin(), o.ops.end());
  backward.insert(backward.end(), o.backward.begin(), o.backward.end());
  return *this;
}


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
  const bool windowed = layer >= 0 && w.model.attention.windowed(layer);
  if (w.decoding()) {  // each query over the cache, the token before it and itself (a window caps it)
    const ServingSpec& sv = *w.serving;
    const double keys = static_cast<double>(sv.kv_length) + 1.0 + sv.mtp_tokens / 2.0;
    return windowed ? std::min(keys, static_cast<double>(w.model.attention.sliding_window)) : keys;
  }
  const ServingSpec* sv = w.serving ? &*w.serving : nullptr;
  if (sv && (sv->prefix_hit > 0 || sv->prefill_steps() > 1)) {
    // A prompt's computed positions [prefix, prompt) each attend to
    // themselves and every position before them, cached or computed in an
    // earlier chunk: the mean is the same whichever step computes them.
    const double computed = static_cast<double>(sv->computed_prompt_tokens());
    const double prefix = static_cast<double>(sv->prompt_length) - computed;
    if (!windowed) return prefix + (computed + 1.0) / 2.0;
    const double window = w.model.attention.sliding_window;
    const auto keys_before = [&](double n) {  // sum over positions p < n of min(p + 1, window)
      return n <= window ? n * (n + 1.0) / 2.0 : window * (window + 1.0) / 2.0 + (n - window) * window;
    };
    return (keys_before(prefix + computed) - keys_before(prefix)) / computed;
  }
  const double s = static_cast<double>(w.parallel.sequence_length);
  const double window = layer >= 0 && w.model.attention.windowed(layer) ? w.model.attention.sliding_window : s;
  if (window >= s) return (s + 1.0) / 2.0;
  return (window * (window + 1.0) / 2.0 + (s - window) * window) / s;
}

double kv_cache_bytes_per_token(const WorkloadSpec& w) {
  const AttentionSpec& a = w.model.attention;
  const bool fp8 = w.serving && w.serving->kv_cache == Dtype::kFp8;
  const double element = fp8 ? 1.0 : kActivationBytes;
  // FP8 MLA keeps the rotary key in BF16 and one FP32 scale per block of the
  // latent (FlashMLA's format: 512 + 16 + 128 = 656 B per token).
  if (a.kind == AttentionKind::kMla && fp8)
    return a.kv_lora_rank + std::ceil(static_cast<double>(a.kv_lora_rank) / w.precision.scale_block) * 4.0 +
           a.qk_rope_head_dim * kActivationBytes;
  if (a.kind == AttentionKind::kMla) return (a.kv_lora_rank + a.qk_rope_head_dim) * element;
  return 2.0 * a.kv_heads * a.head_dim * element;
}

namespace {
// MLA's projections from the hidden state: the query's (through its latent
// and norm when q_lora_rank > 0) and the joint key-value latent and rotary
// key with the latent's norm; the norms' backward kernels into `b`.
void mla_projections(Operators& f, Operators& b, double t, const AttentionSpec& a, double h, Dtype d) {
  const double heads = a.heads;
  if (a.q_lora_rank > 0) {
    f.push_back(gemm(t, a.q_lora_rank, h, d));
    f.push_back(norm(t, a.q_lora_rank));
    b.push_back(norm_backward(t, a.q_lora_rank));
    f.push_back(gemm(t, heads * qk_dim(a), a.q_lora_rank, d));
  } else {
    f.push_back(gemm(t, heads * qk_dim(a), h, d));
  }
  f.push_back(gemm(t, a.kv_lora_rank + a.qk_rope_head_dim, h, d));
  f.push_back(norm(t, a.kv_lora_rank));
  b.push_back(norm_backward(t, a.kv_lora_rank));
}

// A decode step's attention (docs/serving.md): one query per sequence.
// GQA reads each sequence's cached keys and values. MLA runs absorbed,
// as DeepSeek serves it (FlashMLA): the query's no-RoPE part is taken into
// the latent space by W_UK (a batched GEMM per head), every head attends
// over the cached latent and rotary key (576 channels, read once for all
// heads), and W_UV takes the latent output back per head before the
// output projection.
ComputeCost decode_attention_cost(const WorkloadSpec& w, int layer) {
  const ModelSpec& m = w.model;
  const AttentionSpec& a = m.attention;
  const double t = tokens(w), h = static_cast<double>(m.hidden), heads = a.heads;
  const Dtype d = w.precision.gemm == Dtype::kFp8 ? Dtype::kFp8 : Dtype::kBf16;
  const double context = attention_context(w, layer);
  Operators f{norm(t, h)};
  Operator core;
  if (a.kind == AttentionKind::kGqa) {
    f.push_back(gemm(t, (heads + 2.0 * a.kv_heads) * a.head_dim, h, d));
    f.push_back(rope(t, a.head_dim * (heads + a.kv_heads), false));
    core = attention_core(t, heads, a.head_dim, a.head_dim, context);
  } else {
    Operators no_backward;
    mla_projections(f, no_backward, t, a, h, d);
    f.push_back(rope(t, a.qk_rope_head_dim * (heads + 1.0), false));
    f.push_back(gemm(t, a.kv_lora_rank, a.qk_nope_head_dim, Dtype::kBf16, heads));  // W_UK absorbed into q
    core = attention_core(t, heads, a.kv_lora_rank + a.qk_rope_head_dim, a.kv_lora_rank, context);
  }
  // The cache dominates what the core moves: every key and value once per sequence.
  core.bytes += t / static_cast<double>(w.serving->step_tokens()) * context * kv_cache_bytes_per_token(w);
  core.decode = true;
  f.push_back(core);
  if (a.kind == AttentionKind::kMla)
    f.push_back(gemm(t, a.v_head_dim, a.kv_lora_rank, Dtype::kBf16, heads));  // W_UV on the latent output
  f.push_back(gemm(t, h, heads * v_dim(a), d));
  f.push_back(residual_add(t, h));
  return ComputeCost(f, {});
}
}  // namespace

ComputeCost attention_cost(const WorkloadSpec& w, int layer) {
  if (w.decoding()) return decode_attention_cost(w, layer);
  const ModelSpec& m = w.model;
  const AttentionSpec& a = m.attention;
  const double t = tokens(w), h = static_cast<double>(m.hidden), heads = a.heads;
  const Dtype d = w.precision.gemm == Dtype::kFp8 ? Dtype::kFp8 : Dtype::kBf16;
  // Attention's GEMMs run in BF16 unless the step runs FP8 GEMMs (DeepSeek-V3's recipe does).
  Operators f{norm(t, h)};
  Operators b{norm_backward(t, h)};
  double rope_channels = 0;
  if (a.kind == AttentionKind::kGqa) {
    f.push_back(gemm(t, (heads + 2.0 * a.kv_heads) * a.head_dim, h, d));  // fused QKV
    rope_channels = a.head_dim * (heads + a.kv_heads);
  } else {
    mla_projections(f, b, t, a, h, d);
    f.push_back(gemm(t, heads * (a.qk_nope_head_dim + a.v_head_dim), a.kv_lora_rank, d));
    rope_channels = a.qk_rope_head_dim * (heads + 1.0);  // the rotary query heads and the shared rotary key
  }
  f.push_back(rope(t, rope_channels, false));
  b.push_back(rope(t, rope_channels, true));
  f.push_back(attention_core(t, heads, qk_dim(a), v_dim(a), attention_context(w, layer)));
  f.push_back(gemm(t, h, heads * v_dim(a), d));  // output projection
  f.push_back(residual_add(t, h));
  return ComputeCost(f, backward_of(f, b));
}

ComputeCost gate_cost(const WorkloadSpec& w) {
  const double t = tokens(w), h = static_cast<double>(w.model.hidden), e = w.model.experts;
  const double k = w.model.top_k;
  const double copies = t * k * dispatch_bytes_per_token(w);  // the routed copies in the dispatch format
  Operators f{norm(t, h), gemm(t, e, h, Dtype::kFp32)};
  // Score function and top-k: read the FP32 logits, write k weights and indices per token.
  f.push_back(router_op(t * e * 4.0 + t * k * 8.0));
  f.push_back(memory_op(OpClass::kGather, 2.0 * copies));  // permute: read and write each copy
  // Un-permute: the k weighted outputs of each token added into its row.
  f.push_back(memory_op(OpClass::kScatterAdd, (t * k * h + t * h) * 2.0 * kActivationBytes));
  f.push_back(residual_add(t, h));
  Operators b{
      // Un-permute's backward: gather each copy's gradient, times its weight, and the weights' gradients.
      memory_op(OpClass::kGather, 2.0 * t * k * h * kActivationBytes),
      memory_op(OpClass::kElementwise, 3.0 * t * k * h * kActivationBytes, 1, true),
      // Permute's backward: the copies' gradients added back into their tokens' rows.
      memory_op(OpClass::kScatterAdd, (t * k * h + t * h) * 2.0 * kActivationBytes),
      router_op(2.0 * t * e * 4.0, true),
      norm_backward(t, h)};
  return ComputeCost(f, backward_of(f, b));
}

namespace {
// A SwiGLU over `rows` x `f` channels (its gated half), forward or backward.
Operator activation_op(double rows, double f, Activation activation, bool backward) {
  const double widths = backward ? 5.0 : 3.0;  // forward: read 2f, write f; backward: read 2f + f, write 2f
  const bool plain = activation == Activation::kSwiglu;
  Operator o = memory_op(OpClass::kActivation, rows * widths * f * kActivationBytes * (plain ? 1.0 : 3.0),
                         plain ? 2 : 7, backward);
  o.fusable = plain;
  return o;
}
}  // namespace

ComputeCost swiglu_cost(double rows, std::int64_t hidden, std::int64_t ffn, Dtype dtype, double groups,
                        Activation activation) {
  if (rows <= 0) return {};
  const double h = static_cast<double>(hidden), f = static_cast<double>(ffn);
  const double all_rows = rows * (groups > 0 ? groups : 1);
  Operators fwd{gemm(rows, 2.0 * f, h, dtype, groups), activation_op(all_rows, f, activation, false),
                gemm(rows, h, f, dtype, groups)};
  Operators b{activation_op(all_rows, f, activation, true)};
  return ComputeCost(fwd, backward_of(fwd, b));
}

namespace {
ComputeCost with_norm_and_residual(ComputeCost c, double t, double h) {
  c.ops.insert(c.ops.begin(), norm(t, h));
  c.ops.push_back(residual_add(t, h));
  c.backward.push_back(norm_backward(t, h));
  return ComputeCost(c.ops, c.backward);
}
}  // namespace

ComputeCost dense_ffn_cost(const WorkloadSpec& w) {
  const double t = tokens(w);
  return with_norm_and_residual(
      swiglu_cost(t, w.model.hidden, w.model.dense_ffn, w.precision.gemm, 0, w.model.activation), t,
      static_cast<double>(w.model.hidden));
}

ComputeCost shared_expert_cost(const WorkloadSpec& w) {
  ComputeCost c;
  for (int i = 0; i < w.model.shared_experts; ++i)
    c += swiglu_cost(tokens(w), w.model.hidden, w.model.shared_expert_ffn, w.precision.gemm, 0, w.model.activation);
  return c;
}

ComputeCost selective_recompute_cost(const WorkloadSpec& w, int layer) {
  const ModelSpec& m = w.model;
  const AttentionSpec& a = m.attention;
  const double t = tokens(w), h = static_cast<double>(m.hidden);
  const Dtype d = w.precision.gemm == Dtype::kFp8 ? Dtype::kFp8 : Dtype::kBf16;
  Operators f{norm(t, h), norm(t, h)};
  if (a.kind == AttentionKind::kMla) {
    f.push_back(norm(t, a.q_lora_rank));
    f.push_back(norm(t, a.kv_lora_rank));
    f.push_back(gemm(t, double(a.heads) * qk_dim(a), a.q_lora_rank, d));
    f.push_back(gemm(t, double(a.heads) * (a.qk_nope_head_dim + a.v_head_dim), a.kv_lora_rank, d));
  }
  // The SwiGLUs: the routed copies' (at the tokens' k selections) and the
  // shared experts', or the dense FFN's.
  const double activations = m.is_moe(layer) ? t * m.top_k * static_cast<double>(m.expert_ffn) +
                                                   t * m.shared_experts * static_cast<double>(m.shared_expert_ffn)
                                             : t * static_cast<double>(m.dense_ffn);
  f.push_back(activation_op(activations, 1.0, m.activation, false));
  return ComputeCost(f, {});
}

ComputeCost module_recompute_cost(const WorkloadSpec& w, int layer) {
  const ModelSpec& m = w.model;
  const AttentionSpec& a = m.attention;
  const RecomputeModules& mods = w.memory.modules;
  const double t = tokens(w), h = static_cast<double>(m.hidden);
  const Dtype d = w.precision.gemm == Dtype::kFp8 ? Dtype::kFp8 : Dtype::kBf16;
  const bool mla = a.kind == AttentionKind::kMla;
  Operators f;
  if (mods.layernorm) {
    f.push_back(norm(t, h));
    f.push_back(norm(t, h));
    if (mla && a.q_lora_rank > 0) f.push_back(norm(t, a.q_lora_rank));
    if (mla) f.push_back(norm(t, a.kv_lora_rank));
  }
  if (mods.mla_up_proj && mla) {
    if (a.q_lora_rank > 0) f.push_back(gemm(t, double(a.heads) * qk_dim(a), a.q_lora_rank, d));
    f.push_back(gemm(t, double(a.heads) * (a.qk_nope_head_dim + a.v_head_dim), a.kv_lora_rank, d));
  }
  if (mods.core_attn) f.push_back(attention_core(t, a.heads, qk_dim(a), v_dim(a), attention_context(w, layer)));
  const auto append = [&](const Operators& ops) { f.insert(f.end(), ops.begin(), ops.end()); };
  if (!m.is_moe(layer)) {
    if (mods.mlp) append(dense_ffn_cost(w).ops);
  } else {
    if (mods.shared_experts && m.shared_experts > 0) append(shared_expert_cost(w).ops);
    if (mods.moe_act) f.push_back(activation_op(t * m.top_k * static_cast<double>(m.expert_ffn), 1.0, m.activation, false));
  }
  return ComputeCost(f, {});
}

ComputeCost output_head_cost(const WorkloadSpec& w) {
  const double t = tokens(w), h = static_cast<double>(w.model.hidden), v = static_cast<double>(w.model.vocab);
  // The loss: the FP32 logits' softmax (read, and the BF16 logits cast up)
  // and, in the backward, its gradient written back in BF16.
  Operators f{norm(t, h), gemm(t, v, h, Dtype::kBf16), memory_op(OpClass::kLoss, t * v * (2.0 + 4.0))};
  Operators b{memory_op(OpClass::kLoss, t * v * (4.0 + 2.0), 1, true), norm_backward(t, h)};
  return ComputeCost(f, backward_of(f, b));
}

ComputeCost serving_head_cost(const WorkloadSpec& w) {
  const double h = static_cast<double>(w.model.hidden), v = static_cast<double>(w.model.vocab);
  // Prefill samples each prompt's first output token from its last position only.
  const double rows = w.decoding() ? tokens(w) : static_cast<double>(w.parallel.micro_batch);  // decode: every draft verified
  // The sampler reads the FP32 logits once (softmax, top-p): a reduction over each row.
  Operators f{norm(rows, h), gemm(rows, v, h, Dtype::kBf16), memory_op(OpClass::kLoss, rows * v * 4.0)};
  return ComputeCost(f, {});
}

ComputeCost mtp_projection_cost(const WorkloadSpec& w) {
  const double t = tokens(w), h = static_cast<double>(w.model.hidden);
  Operators f{norm(t, h), norm(t, h), gemm(t, h, 2.0 * h, w.precision.gemm)};
  Operators b{norm_backward(t, h), norm_backward(t, h)};
  return ComputeCost(f, backward_of(f, b));
}

ComputeCost expert_gemm_cost(const WorkloadSpec& w, const std::int32_t* tokens_per_expert, int experts_per_rank) {
  double rows = 0;
  int active = 0;
  for (int j = 0; j < experts_per_rank; ++j) {
    const double r = static_cast<double>(aligned_rows(tokens_per_expert[j], w.precision.expert_alignment));
    rows += r;
    active += r > 0 ? 1 : 0;
  }
  if (active == 0) return {};
  // One grouped gate/up GEMM and one grouped down GEMM over the experts
  // with work, at their mean rows (docs/operators.md).
  return swiglu_cost(rows / active, w.model.hidden, w.model.expert_ffn, w.precision.gemm, active, w.model.activation);
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
  Operator adamw = memory_op(OpClass::kOptimizer, params * (dtype_bytes(gradient) + kAdamWStateBytesPerParam));
  adamw.flops = params * kAdamWFlopsPerParam;
  return ComputeCost({adamw}, {});
}

}  // namespace epsim::workloads
