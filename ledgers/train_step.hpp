// Seed 000 (train_step_budget): the five sections of one MoE layer's
// training-step ledger: payload, dedup, per-rank totals with time bounds,
// expert GEMM FLOPs and intensity, and the three resource classes.
#pragma once

#include <cstdint>
#include <vector>

namespace epsim::ledgers {

// The seed's command-line options, with its defaults (DeepEP-Ascend README
// measurement conditions; --ffn is the seed's demonstration value).
struct TrainStepOptions {
  std::int64_t tokens = 16384;      // --tokens: tokens per rank (T)
  std::int64_t hidden = 7168;       // --hidden: d
  std::int64_t topk = 6;            // --topk: k
  std::int64_t experts = 256;       // --experts
  std::int64_t ffn = 2048;          // --ffn: expert intermediate size
  std::int64_t dispatch_bytes = 1;  // --dispatch-bytes: bytes per element (FP8)
  std::int64_t combine_bytes = 2;   // --combine-bytes: bytes per element (BF16)
  std::int64_t expert_align = 128;  // --expert-align: rows per expert round up to this (text only)
};

// Figures the seed prints without stating them; derived in docs/bounds.md.
struct TrainStepDevice {
  // §③: measured dispatch/combine bandwidths (DeepEP-Ascend README) that
  // reproduce the seed's 1381/2986 us (EP8) and 2159/4973 us (EP128).
  double ep8_dispatch_Bps = 375.0e9;
  double ep8_combine_Bps = 346.9e9;
  double ep128_dispatch_Bps = 320.0e9;
  double ep128_combine_Bps = 277.9e9;
  // §④/§⑤: on-chip bandwidth (the source-model constant of §⑤) and the
  // peaks that give the printed balance points 247 / 124 FLOP/byte over it.
  double onchip_Bps = 3500.0e9;
  double peak_fp8_flops = 866.0e12;
  double peak_bf16_flops = 433.0e12;
  // §⑤: cross-card bandwidth (vendor measurement).
  double crosscard_Bps = 374.0e9;
};

// §②: one EP size of the dedup table.
struct DedupRow {
  std::int64_t ep = 0;
  double distinct_ranks = 0.0;  // R(1-(1-1/R)^k)
  double ratio_to_k = 0.0;      // distinct_ranks / k
};

// §③: one EP size's per-rank totals (口径 C) and time lower bounds.
struct RankTotalRow {
  std::int64_t ep = 0;
  double distinct_ranks = 0.0;
  double recv_tokens = 0.0;     // T x distinct_ranks
  double dispatch_bytes = 0.0;  // recv_tokens x d x dispatch_bytes
  double combine_bytes = 0.0;   // recv_tokens x d x combine_bytes
  double dispatch_Bps = 0.0;
  double combine_Bps = 0.0;
  double dispatch_time_s = 0.0;  // dispatch_bytes / dispatch_Bps
  double combine_time_s = 0.0;   // combine_bytes / combine_Bps
};

struct TrainStep {
  TrainStepOptions options;
  TrainStepDevice device;
  // §① payload per token per direction (口径 A).
  std::int64_t dispatch_payload_bytes = 0;  // k x d x dispatch_bytes
  std::int64_t combine_weight_bytes = 0;    // k x 4 (float32 gate weights)
  std::int64_t combine_payload_bytes = 0;   // k x d x combine_bytes + k x 4
  // §② dedup.
  std::vector<DedupRow> dedup;              // EP 8, 16, 32, 64, 128
  double growth_8_to_128 = 0.0;             // distinct(128) / distinct(8) - 1
  // §③ per-rank totals.
  std::vector<RankTotalRow> totals;         // EP 8 and 128 (where bandwidths are measured)
  // §④ expert GEMMs on this rank for this layer.
  std::int64_t gemm_rows = 0;               // M = T x k (not deduplicated: an upper bound)
  std::int64_t gemm_count = 3;              // gate, up, down
  std::int64_t gemm_flops = 0;              // 3 x 2 x M x ffn x d
  std::int64_t gemm_bytes = 0;              // (2 x M x d + 3 x d x ffn) x dispatch_bytes
  double intensity_flop_per_byte = 0.0;     // gemm_flops / gemm_bytes
  double balance_fp8_flop_per_byte = 0.0;   // peak_fp8 / onchip
  double balance_bf16_flop_per_byte = 0.0;  // peak_bf16 / onchip
  // §⑤ the one cross-class ratio.
  double onchip_over_crosscard = 0.0;       // onchip_Bps / crosscard_Bps
};

// The EP sizes of the §② table and of §③.
inline constexpr std::int64_t kDedupEpSizes[] = {8, 16, 32, 64, 128};

// The whole ledger at `device`. Throws InputError naming the option for
// non-positive sizes, --topk > --experts, --experts not divisible by 128
// (the largest EP) or counts that would overflow 64 bits.
TrainStep train_step(const TrainStepOptions& options, const TrainStepDevice& device = {});

}  // namespace epsim::ledgers
