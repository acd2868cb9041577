// Seed 000 (train_step_budget): one MoE layer's training-step ledger.
#include "ledgers/train_step.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/checked_math.hpp"
#include "core/error.hpp"
#include "ledgers/checks.hpp"
#include "ledgers/comm_ledger.hpp"

namespace epsim::ledgers {

namespace {
void validate(const TrainStepOptions& o) {
  require_positive(o.tokens, "tokens");
  require_positive(o.hidden, "hidden");
  require_positive(o.topk, "topk");
  require_positive(o.experts, "experts");
  require_positive(o.ffn, "ffn");
  require_positive(o.dispatch_bytes, "dispatch_bytes");
  require_positive(o.combine_bytes, "combine_bytes");
  require_positive(o.expert_align, "expert_align");
  if (o.topk > o.experts) {
    throw parameter_error("topk", fmt::format("must be <= experts ({}), got {}", o.experts, o.topk));
  }
  for (std::int64_t ep : kDedupEpSizes) {
    if (o.experts % ep != 0) {
      throw parameter_error("experts", fmt::format("must be divisible by every EP size of the table "
                                                  "(8..128), got {} (not divisible by {})",
                                                  o.experts, ep));
    }
  }
  // Largest counts: T x k x d x max(bytes) (per-rank bytes, since distinct <= k),
  // 6 x T x k x ffn x d (GEMM FLOPs) and 3 x d x ffn x bytes (weights).
  std::int64_t rows = checked_product({o.tokens, o.topk}, "tokens", "GEMM rows T x k");
  std::int64_t bytes = std::max(o.dispatch_bytes, o.combine_bytes);
  checked_product({rows, o.hidden, bytes}, "tokens", "per-rank bytes");
  std::int64_t activations = checked_product({rows, o.hidden, 2, o.dispatch_bytes}, "tokens", "GEMM bytes");
  checked_product({6, rows, o.ffn, o.hidden}, "ffn", "GEMM FLOPs");
  std::int64_t weights = checked_product({3, o.hidden, o.ffn, o.dispatch_bytes}, "ffn", "expert weight bytes");
  if (!checked_add(activations, weights)) {
    throw parameter_error("tokens", "too large: the GEMM bytes would overflow a 64-bit count");
  }
  std::int64_t combine = checked_product({o.topk, o.hidden, o.combine_bytes}, "combine_bytes", "combine payload");
  if (!checked_add(combine, checked_product({o.topk, 4}, "topk", "combine payload"))) {
    throw parameter_error("combine_bytes", "too large: the combine payload would overflow a 64-bit count");
  }
}

RankTotalRow rank_totals(const TrainStepOptions& o, std::int64_t ep, double dispatch_Bps,
                         double combine_Bps) {
  RankTotalRow row;
  row.ep = ep;
  row.distinct_ranks = expected_distinct_ranks(ep, o.topk);
  row.recv_tokens = static_cast<double>(o.tokens) * row.distinct_ranks;
  double d = static_cast<double>(o.hidden);
  row.dispatch_bytes = row.recv_tokens * d * static_cast<double>(o.dispatch_bytes);
  row.combine_bytes = row.recv_tokens * d * static_cast<double>(o.combine_bytes);
  row.dispatch_Bps = dispatch_Bps;
  row.combine_Bps = combine_Bps;
  row.dispatch_time_s = row.dispatch_bytes / dispatch_Bps;
  row.combine_time_s = row.combine_bytes / combine_Bps;
  return row;
}
}  // namespace

TrainStep train_step(const TrainStepOptions& options, const TrainStepDevice& device) {
  validate(options);
  const TrainStepOptions& o = options;
  TrainStep s;
  s.options = o;
  s.device = device;

  s.dispatch_payload_bytes = o.topk * o.hidden * o.dispatch_bytes;
  s.combine_weight_bytes = o.topk * 4;
  s.combine_payload_bytes = o.topk * o.hidden * o.combine_bytes + s.combine_weight_bytes;

  for (std::int64_t ep : kDedupEpSizes) {
    double distinct = expected_distinct_ranks(ep, o.topk);
    s.dedup.push_back({ep, distinct, distinct / static_cast<double>(o.topk)});
  }
  s.growth_8_to_128 = s.dedup.back().distinct_ranks / s.dedup.front().distinct_ranks - 1.0;

  s.totals.push_back(rank_totals(o, 8, device.ep8_dispatch_Bps, device.ep8_combine_Bps));
  s.totals.push_back(rank_totals(o, 128, device.ep128_dispatch_Bps, device.ep128_combine_Bps));

  s.gemm_rows = o.tokens * o.topk;
  s.gemm_flops = s.gemm_count * 2 * s.gemm_rows * o.ffn * o.hidden;
  s.gemm_bytes = (2 * s.gemm_rows * o.hidden + 3 * o.hidden * o.ffn) * o.dispatch_bytes;
  s.intensity_flop_per_byte =
      static_cast<double>(s.gemm_flops) / static_cast<double>(s.gemm_bytes);
  s.balance_fp8_flop_per_byte = device.peak_fp8_flops / device.onchip_Bps;
  s.balance_bf16_flop_per_byte = device.peak_bf16_flops / device.onchip_Bps;

  s.onchip_over_crosscard = device.onchip_Bps / device.crosscard_Bps;
  return s;
}

}  // namespace epsim::ledgers
