// Seed 001 (comm_ledger.py): dispatch/combine bytes per rank of one MoE
// layer for EP 8..128, with payloads counted as DeepEP-Ascend's test does.
#pragma once

#include <cstdint>
#include <vector>

#include "core/moe_formulas.hpp"

namespace epsim::ledgers {

// The seed's command-line options, with its defaults.
struct CommLedgerOptions {
  std::int64_t hidden = 7168;    // --hidden: model width (elements)
  std::int64_t topk = 6;         // --topk: experts per token
  std::int64_t experts = 256;    // --experts: routed experts in the layer
  std::int64_t tokens = 16384;   // --tokens: tokens per rank (T)
  std::int64_t layers = 1;       // --layers: how many layers the summary aggregates
  bool bf16_dispatch = false;    // --bf16-dispatch: BF16 hidden, no scale factors
};

// Bytes of one token's payload (tests/ep/test_ep.py:404-406 count_bytes).
struct TokenPayload {
  std::int64_t hidden_bytes = 0;       // hidden x 1 (FP8) or x 2 (BF16 dispatch)
  std::int64_t scale_bytes = 0;        // ceil(hidden/128) x 4: one FP32 scale per 128 elements; 0 in BF16
  std::int64_t index_bytes = 0;        // topk x 8 (int64 expert indices)
  std::int64_t weight_bytes = 0;       // topk x 4 (float32 gate weights)
  std::int64_t hidden_bytes_bf16 = 0;  // hidden x 2: combine's input is BF16
  std::int64_t dispatch_bytes = 0;     // hidden + scale + index + weight
  std::int64_t combine_bytes = 0;      // hidden_bf16 + weight
};

// One EP size's row of the table.
struct CommLedgerRow {
  std::int64_t ep = 0;                 // ranks R
  std::int64_t experts_per_rank = 0;   // experts / R
  double distinct_ranks = 0.0;         // R(1-(1-1/R)^k)
  double recv_tokens = 0.0;            // T x distinct_ranks (by symmetry)
  double dispatch_bytes = 0.0;         // recv_tokens x dispatch payload
  double combine_bytes = 0.0;          // recv_tokens x combine payload
};

struct CommLedger {
  CommLedgerOptions options;
  TokenPayload payload;
  std::vector<CommLedgerRow> rows;     // EP 8, 16, 32, 64, 128
  double mean_rank_bytes = 0.0;        // mean over rows of dispatch + combine
  double layers_rank_bytes = 0.0;      // mean_rank_bytes x layers
  double layers_all_rows_bytes = 0.0;  // layers_rank_bytes x rows.size() (the seed's "across ranks" total)
};

// The EP sizes of the seed's table.
inline constexpr std::int64_t kCommLedgerEpSizes[] = {8, 16, 32, 64, 128};

// Expected number of distinct ranks a token's top-k experts land on, under
// uniform routing over `ranks` ranks: R(1-(1-1/R)^k) (core/moe_formulas.hpp).
using epsim::expected_distinct_ranks;

// Per-token payload as DeepEP-Ascend's test counts it.
TokenPayload token_payload(const CommLedgerOptions& options);

// The whole ledger. Throws InputError naming the option for non-positive
// sizes, --topk > --experts, --experts not divisible by every EP size, or
// byte counts that would overflow 64 bits.
CommLedger comm_ledger(const CommLedgerOptions& options);

}  // namespace epsim::ledgers
