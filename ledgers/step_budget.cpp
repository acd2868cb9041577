// Seed 002 (step_budget): training-step and inference phase bounds.
#include "ledgers/step_budget.hpp"

#include <algorithm>
#include <optional>

#include "core/checked_math.hpp"
#include "core/error.hpp"
#include "ledgers/checks.hpp"

namespace epsim::ledgers {

namespace {
void validate(const StepBudgetOptions& o) {
  require_positive(o.seq_len, "seq_len");
  require_positive(o.layers, "layers");
  require_positive(o.hidden, "hidden");
  require_positive(o.ffn, "ffn");
  require_positive(o.params, "params");
  require_positive(o.world, "world");
  require_positive(o.peak_tflops, "peak_tflops");
  require_positive(o.bandwidth_gbps, "bandwidth_gbps");
  require_positive(o.head_dim, "head_dim");
  require_positive(o.kv_heads, "kv_heads");
  // The largest integer counts: the attention score FLOPs 4 s^2 d L and the
  // weights L (2d^2 + 2 d kv + 3 d ffn), doubled for the backward pass.
  std::int64_t kv = checked_product({o.kv_heads, o.head_dim}, "kv_heads", "KV width");
  checked_product({4, o.layers, o.seq_len, kv}, "kv_heads", "KV cache bytes");
  checked_product({7, o.hidden, kv, o.layers}, "kv_heads", "model weights");
  checked_product({8, o.seq_len, o.seq_len, o.hidden, o.layers}, "seq_len", "attention FLOPs");
  std::int64_t per_layer = checked_product({3, o.hidden, std::max({o.hidden, kv, o.ffn})},
                                           "hidden", "layer weights");
  std::int64_t weights = checked_product({7, per_layer, o.layers}, "layers", "model weights");
  checked_product({4, o.seq_len, weights}, "seq_len", "GEMM FLOPs");
  std::optional<std::int64_t> width = checked_add(o.hidden, o.ffn);
  if (!width) throw parameter_error("ffn", "too large: the activation bytes would overflow a 64-bit count");
  checked_product({12, o.seq_len, o.layers, *width}, "seq_len", "activation bytes");
  checked_real(o.params * kAdamWBytesPerParam * 2.0, "params", "optimizer bytes");
}

Phase make_phase(const std::string& name, double flops, double bytes, const StepBudgetOptions& o) {
  Phase p;
  p.name = name;
  p.flops = flops;
  p.bytes = bytes;
  p.memory_time_s = bytes / (o.bandwidth_gbps * 1e9);
  p.compute_time_s = flops / (o.peak_tflops * 1e12);
  p.bound_s = std::max(p.memory_time_s, p.compute_time_s);
  return p;
}

void fill_shares(std::vector<Phase>& table) {
  double total = 0.0;
  for (const Phase& p : table) total += p.bound_s;
  for (Phase& p : table) p.share = p.bound_s / total;
}
}  // namespace

StepBudget step_budget(const StepBudgetOptions& options) {
  validate(options);
  const StepBudgetOptions& o = options;
  StepBudget b;
  b.options = o;
  double s = static_cast<double>(o.seq_len);
  double L = static_cast<double>(o.layers);
  double d = static_cast<double>(o.hidden);
  double f = static_cast<double>(o.ffn);
  b.kv_width = static_cast<double>(o.kv_heads * o.head_dim);
  b.heads = d / static_cast<double>(o.head_dim);
  // q and o are d x d, k and v are d x kv (GQA), gate/up/down are d x ffn.
  b.layer_weight_params = L * (2.0 * d * d + 2.0 * d * b.kv_width + 3.0 * d * f);

  // Forward: 2MNK over every weight GEMM, QK^T and PV over the full s x s
  // score matrix (no causal halving), softmax per score; bytes: weights read
  // once plus three s x d and three s x ffn BF16 tensors per layer.
  double fwd_flops = 2.0 * s * b.layer_weight_params + 4.0 * s * s * d * L +
                     kSoftmaxFlopsPerScore * s * s * b.heads * L;
  double fwd_bytes = kBytesPerElement * b.layer_weight_params +
                     kActivationTensors * kBytesPerElement * L * s * (d + f);
  double grad_bytes = kBytesPerElement * o.params;
  double n = static_cast<double>(o.world);
  double ring_factor = 2.0 * (n - 1.0) / n;

  b.training.push_back(make_phase("forward", fwd_flops, fwd_bytes, o));
  b.training.push_back(make_phase("backward", 2.0 * fwd_flops, 2.0 * fwd_bytes, o));
  b.training.push_back(make_phase("optimizer", kAdamWFlopsPerParam * o.params,
                                  kAdamWBytesPerParam * o.params, o));
  b.training.push_back(make_phase("communication", 0.0, ring_factor * grad_bytes, o));
  fill_shares(b.training);

  // Decode: one token reads every weight and the K and V caches of length s.
  double dec_flops = 2.0 * b.layer_weight_params + 4.0 * s * d * L;
  double dec_bytes = kBytesPerElement * b.layer_weight_params +
                     2.0 * kBytesPerElement * L * s * b.kv_width;
  b.inference.push_back(make_phase("prefill", fwd_flops, fwd_bytes, o));
  b.inference.push_back(make_phase("decode", dec_flops, dec_bytes, o));
  fill_shares(b.inference);
  return b;
}

}  // namespace epsim::ledgers
