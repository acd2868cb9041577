// The MoE closed forms that both the seeds' ledgers (ledgers/) and the task
// graph (workloads/) use, defined once so the two cannot drift apart.
#pragma once

#include <cmath>
#include <cstdint>

namespace epsim {

// FP8 activations on the wire carry one FP32 scale per this many channels
// (DeepSeek-V3 / DeepEP block size; a workload may choose another).
inline constexpr std::int64_t kFp8ScaleBlock = 128;
inline constexpr std::int64_t kFp8ScaleBytes = 4;  // one FP32 scale

// Bytes of the FP32 scales of one FP8 token of `hidden` channels:
// ceil(hidden / scale_block) x 4.
inline std::int64_t fp8_scale_bytes(std::int64_t hidden, std::int64_t scale_block = kFp8ScaleBlock) {
  return (hidden + scale_block - 1) / scale_block * kFp8ScaleBytes;
}

// Routing metadata per token and selected expert: an 8-byte expert index
// (dispatch only) and a 4-byte FP32 gate weight (dispatch and combine).
inline constexpr std::int64_t kRoutingIndexBytes = 8;
inline constexpr std::int64_t kRoutingWeightBytes = 4;

// Expected distinct target ranks of one token whose k experts fall on R ranks,
// k draws with replacement: R (1 - (1 - 1/R)^k).
inline double expected_distinct_ranks(double ranks, double top_k) {
  return ranks * (1.0 - std::pow(1.0 - 1.0 / ranks, top_k));
}

// AdamW per parameter (seed 002): 15 FLOPs; reads and writes FP32 param, m
// and v (24 bytes) besides reading the gradient in its own dtype.
inline constexpr double kAdamWFlopsPerParam = 15.0;
inline constexpr double kAdamWStateBytesPerParam = 24.0;

}  // namespace epsim
