// Seed 001 (comm_ledger.py): dispatch/combine bytes per rank of one MoE layer.
#include "ledgers/comm_ledger.hpp"

#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "core/checked_math.hpp"
#include "core/error.hpp"
#include "ledgers/checks.hpp"

namespace epsim::ledgers {

namespace {
void validate(const CommLedgerOptions& o) {
  require_positive(o.hidden, "hidden");
  require_positive(o.topk, "topk");
  require_positive(o.experts, "experts");
  require_positive(o.tokens, "tokens");
  require_positive(o.layers, "layers");
  if (o.topk > o.experts) {
    throw parameter_error("topk", fmt::format("must be <= experts ({}), got {}", o.experts, o.topk));
  }
  for (std::int64_t ep : kCommLedgerEpSizes) {
    if (o.experts % ep != 0) {
      throw parameter_error("experts", fmt::format("must be divisible by every EP size of the table "
                                                  "(8..128), got {} (not divisible by {})",
                                                  o.experts, ep));
    }
  }
  // The largest count the ledger forms: T x R x payload x layers x rows, with
  // payload <= hidden x 2 + ceil(hidden/128) x 4 + topk x 12 < 3 hidden + 12 topk.
  std::optional<std::int64_t> payload_bound =
      checked_add(checked_product({o.hidden, 3}, "hidden", "per-token payload"),
                  checked_product({o.topk, 12}, "topk", "per-token payload"));
  if (!payload_bound) {
    throw parameter_error("hidden", "too large: the per-token payload would overflow a 64-bit count");
  }
  checked_product({o.tokens, 128, *payload_bound, 5}, "tokens", "per-rank bytes");
  checked_product({o.tokens, 128, *payload_bound, 5, o.layers}, "layers", "aggregated bytes");
}
}  // namespace

TokenPayload token_payload(const CommLedgerOptions& o) {
  TokenPayload p;
  bool fp8 = !o.bf16_dispatch;
  p.hidden_bytes = fp8 ? o.hidden : o.hidden * 2;
  p.scale_bytes = fp8 ? fp8_scale_bytes(o.hidden) : 0;
  p.index_bytes = o.topk * kRoutingIndexBytes;
  p.weight_bytes = o.topk * kRoutingWeightBytes;
  p.hidden_bytes_bf16 = o.hidden * 2;
  p.dispatch_bytes = p.hidden_bytes + p.scale_bytes + p.index_bytes + p.weight_bytes;
  p.combine_bytes = p.hidden_bytes_bf16 + p.weight_bytes;
  return p;
}

CommLedger comm_ledger(const CommLedgerOptions& options) {
  validate(options);
  CommLedger ledger;
  ledger.options = options;
  ledger.payload = token_payload(options);
  double sum = 0.0;
  for (std::int64_t ep : kCommLedgerEpSizes) {
    CommLedgerRow row;
    row.ep = ep;
    row.experts_per_rank = options.experts / ep;
    row.distinct_ranks = expected_distinct_ranks(ep, options.topk);
    row.recv_tokens = static_cast<double>(options.tokens) * row.distinct_ranks;
    row.dispatch_bytes = row.recv_tokens * static_cast<double>(ledger.payload.dispatch_bytes);
    row.combine_bytes = row.recv_tokens * static_cast<double>(ledger.payload.combine_bytes);
    // Summed in the seed's order so the mean matches it bit for bit.
    sum += row.dispatch_bytes + row.combine_bytes;
    ledger.rows.push_back(row);
  }
  double n = static_cast<double>(ledger.rows.size());
  ledger.mean_rank_bytes = sum / n;
  ledger.layers_rank_bytes = ledger.mean_rank_bytes * static_cast<double>(options.layers);
  ledger.layers_all_rows_bytes = ledger.layers_rank_bytes * n;
  return ledger;
}

}  // namespace epsim::ledgers
