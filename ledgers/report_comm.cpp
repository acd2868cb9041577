// Text and JSON report of seed 001's comm ledger.
#include <fmt/format.h>

#include "ledgers/format.hpp"
#include "ledgers/report.hpp"

namespace epsim::ledgers {

namespace {
const char* const kSource = "seed 001 comm_ledger.py";
const char* const kPayloadSource = "DeepEP-Ascend tests/ep/test_ep.py:404-406 count_bytes";
const char* const kDispatchFp8 =
    "hidden*1 (FP8) + ceil(hidden/128)*4 (one FP32 scale per 128 elements) + topk*8 (int64 index) + topk*4 (fp32 weight)";
const char* const kDispatchBf16 = "hidden*2 (BF16) + topk*8 (int64 index) + topk*4 (fp32 weight)";
const char* const kCombine = "hidden*2 (BF16) + topk*4 (fp32 weight)";
const char* const kDistinct = "R*(1-(1-1/R)^topk), uniform routing";
const char* const kRecv = "T*distinct (by symmetry)";
const char* const kRankBytes = "recv tokens * payload, 1024-based units";
const char* const kMean = "mean over the EP rows of (dispatch + combine) * layers";
const char* const kAllRows = "mean per rank * layers * number of EP rows (the seed's 'across ranks' total)";
}  // namespace

std::string render_text(const CommLedger& l) {
  const CommLedgerOptions& o = l.options;
  const TokenPayload& p = l.payload;
  std::string out;
  out += fmt::format("== {}: dispatch / combine bytes per rank of one MoE layer ==\n", kSource);
  out += fmt::format("per-token payload (counted as {})\n", kPayloadSource);
  out += fmt::format(" hidden={}, topk={}, experts={}, T={}, layers={}\n", o.hidden, o.topk,
                     o.experts, o.tokens, o.layers);
  out += fmt::format(" dispatch: {} B/token (hidden {} + sf {} + idx {} + w {})\n",
                     grouped(p.dispatch_bytes), grouped(p.hidden_bytes), p.scale_bytes,
                     p.index_bytes, p.weight_bytes);
  out += fmt::format("           = {}\n", o.bf16_dispatch ? kDispatchBf16 : kDispatchFp8);
  out += fmt::format(" combine : {} B/token (bf16 hidden {} + w {})\n", grouped(p.combine_bytes),
                     grouped(p.hidden_bytes_bf16), p.weight_bytes);
  out += fmt::format("           = {}\n\n", kCombine);
  // The seed's column widths, so rows match its output character for character.
  out += fmt::format("{:>4} {:>9} {:>12} {:>15} {:>14} {:>14}\n", "EP", "experts/R",
                     "distinct R", "recv tokens/R", "dispatch/rank", "combine/rank");
  for (const CommLedgerRow& r : l.rows) {
    out += fmt::format("{:>4} {:>9} {:>12} {:>15} {:>14} {:>14}\n", r.ep, r.experts_per_rank,
                       fixed(r.distinct_ranks, 3), grouped(r.recv_tokens, 0),
                       human_1024(r.dispatch_bytes), human_1024(r.combine_bytes));
  }
  out += fmt::format(" experts/R = experts / R ranks; distinct R = {}; recv tokens/R = {};\n", kDistinct, kRecv);
  out += fmt::format(" dispatch, combine per rank = {}\n\n", kRankBytes);
  out += fmt::format(" over {} layer(s): per rank about {} = {};\n", o.layers,
                     human_1024(l.layers_rank_bytes), kMean);
  out += fmt::format(" summed over the EP rows about {} = {}\n", human_1024(l.layers_all_rows_bytes),
                     kAllRows);
  out += " an upper-bound estimate under uniform routing, not measured traffic\n";
  return out;
}

Json to_json(const CommLedger& l) {
  const CommLedgerOptions& o = l.options;
  const TokenPayload& p = l.payload;
  Json j;
  j["source"] = kSource;
  // Key names follow the seed's own --json output.
  j["config"] = {{"hidden", o.hidden},       {"num_topk", o.topk},
                 {"num_experts", o.experts}, {"tokens_per_rank", o.tokens},
                 {"layers", o.layers},       {"bf16_dispatch", o.bf16_dispatch}};
  j["payload"] = {{"source", kPayloadSource},
                  {"hidden_bytes_fp8", p.hidden_bytes},
                  {"sf_bytes", p.scale_bytes},
                  {"indices_bytes", p.index_bytes},
                  {"weights_bytes", p.weight_bytes},
                  {"hidden_bytes_bf16", p.hidden_bytes_bf16},
                  {"dispatch_bytes", p.dispatch_bytes},
                  {"combine_bytes", p.combine_bytes},
                  {"dispatch_formula", o.bf16_dispatch ? kDispatchBf16 : kDispatchFp8},
                  {"combine_formula", kCombine}};
  Json rows = Json::array();
  for (const CommLedgerRow& r : l.rows) {
    rows.push_back({{"num_ranks", r.ep},
                    {"experts_per_rank", r.experts_per_rank},
                    {"expected_distinct_ranks", r.distinct_ranks},
                    {"recv_tokens_per_rank", r.recv_tokens},
                    {"dispatch_bytes_per_rank", r.dispatch_bytes},
                    {"combine_bytes_per_rank", r.combine_bytes},
                    {"payload_dispatch", p.dispatch_bytes},
                    {"payload_combine", p.combine_bytes}});
  }
  j["rows"] = rows;
  j["row_formulas"] = {{"expected_distinct_ranks", kDistinct},
                       {"recv_tokens_per_rank", kRecv},
                       {"bytes_per_rank", kRankBytes}};
  j["summary"] = {{"mean_rank_bytes", l.mean_rank_bytes},
                  {"layers_rank_bytes", l.layers_rank_bytes},
                  {"layers_all_rows_bytes", l.layers_all_rows_bytes},
                  {"layers_rank_formula", kMean},
                  {"layers_all_rows_formula", kAllRows}};
  return j;
}

}  // namespace epsim::ledgers
