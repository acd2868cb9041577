// Per-rank memory of a serving step (docs/serving.md has each formula).
#include "workloads/serving_memory.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "workloads/layer_costs.hpp"

namespace epsim::workloads {

namespace {

constexpr double kActivationBytes = 2;  // BF16 rows between kernels
constexpr double kLogitBytes = 4;       // FP32 logits for the sampler

// The terms that do not grow with the batch: the weights, GEMM weights in
// precision.gemm (FP8: one byte; its block scales are 1/4096 of that),
// the embedding and output head in BF16, each TP rank its 1/tp.
void add_weights(const WorkloadSpec& w, MemoryBreakdown& b) {
  const ModelSpec& m = w.model;
  const double tp = w.parallel.tp;
  const double gemm = dtype_bytes(w.precision.gemm);
  const double vocab_params = 2.0 * embedding_params(m);
  const double layer_params = dense_params(m) - vocab_params;
  b.terms.push_back({"dense weights", (layer_params * gemm + vocab_params * kActivationBytes) / tp,
                     fmt::format("({:.3g} layer params x {} B + {:.3g} embedding and head params x 2 B) / tp {}",
                                 layer_params, gemm, vocab_params, w.parallel.tp)});
  const double experts = expert_params_per_rank(w);
  b.terms.push_back({"expert weights", experts * gemm,
                     fmt::format("{:.3g} params ({} slots per rank) x {} B", experts, w.expert_slots_per_rank(), gemm)});
}

// Those that do, for `batch` sequences per rank.
void add_batch_terms(const WorkloadSpec& w, std::int64_t batch, MemoryBreakdown& b) {
  const ModelSpec& m = w.model;
  const ServingSpec& s = *w.serving;
  const double tp = w.parallel.tp;
  const double h = static_cast<double>(m.hidden);
  const bool prefill = s.phase == ServingPhase::kPrefill;
  const double cached = static_cast<double>(s.cached_tokens());
  // MLA's latent is one per token for all heads: every TP rank keeps it whole.
  const double kv_split = m.attention.kind == AttentionKind::kMla ? 1.0 : std::min<double>(tp, m.attention.kv_heads);
  const double per_token = kv_cache_bytes_per_token(w) / kv_split;
  const int cache_layers = m.layers + (prefill ? 0 : s.mtp_tokens);  // a drafting MTP module keeps its own
  b.terms.push_back({"KV cache", static_cast<double>(batch) * cached * cache_layers * per_token,
                     fmt::format("{} sequences x {:.0f} tokens x {} layers x {:.0f} B", batch, cached, cache_layers,
                                 per_token)});
  const double tokens = static_cast<double>(batch) * static_cast<double>(s.step_tokens()) / tp;
  const double micro_tokens = tokens / s.micro_batches;
  b.terms.push_back({"activations", tokens * 2.0 * h * kActivationBytes,
                     fmt::format("{:.0f} tokens x 2 rows (residual stream, block input) x {} x 2 B", tokens, m.hidden)});
  const double copies = tokens * m.top_k;
  const double wire = dispatch_bytes_per_token(w) + combine_bytes_per_token(w);
  b.terms.push_back({"dispatch/combine buffers", copies * wire,
                     fmt::format("{:.0f} tokens x top_k {} x ({:.0f} + {:.0f}) B", tokens, m.top_k,
                                 dispatch_bytes_per_token(w), combine_bytes_per_token(w))});
  const double ffn = static_cast<double>(m.expert_ffn);
  b.terms.push_back({"expert activations", micro_tokens * m.top_k * 3.0 * ffn * kActivationBytes,
                     fmt::format("{:.0f} tokens of one micro-batch x top_k {} x 3 x {} x 2 B", micro_tokens, m.top_k,
                                 m.expert_ffn)});
  const double rows = prefill ? static_cast<double>(batch) : tokens;
  b.terms.push_back({"output logits", rows * static_cast<double>(m.vocab) / tp * kLogitBytes,
                     fmt::format("{:.0f} rows x {} / tp x 4 B", rows, m.vocab)});
}

MemoryBreakdown breakdown(const WorkloadSpec& w, std::int64_t batch) {
  MemoryBreakdown b;
  b.dense_layers = w.model.dense_layers;
  b.moe_layers = w.model.moe_layers();
  b.in_flight_micro_batches = w.serving->micro_batches;
  add_weights(w, b);
  add_batch_terms(w, batch, b);
  return b;
}

}  // namespace

MemoryBreakdown serving_memory_per_rank(const WorkloadSpec& w) { return breakdown(w, w.serving->batch); }

double serving_weight_bytes(const WorkloadSpec& w) {
  MemoryBreakdown b;
  add_weights(w, b);
  return b.total_bytes();
}

std::int64_t largest_serving_batch(const WorkloadSpec& w, double capacity_bytes) {
  const std::int64_t step = w.serving->micro_batches;
  // Every batch term is linear in the batch: one step's worth tells the slope.
  const double fixed = breakdown(w, 0).total_bytes();
  const double per_step = breakdown(w, step).total_bytes() - fixed;
  if (!(per_step > 0) || capacity_bytes < fixed + per_step) return 0;
  return static_cast<std::int64_t>(std::floor((capacity_bytes - fixed) / per_step)) * step;
}

}  // namespace epsim::workloads
