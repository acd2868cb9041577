// Text and JSON report of seed 000's train-step ledger (five sections).
#include <fmt/format.h>

#include "ledgers/format.hpp"
#include "ledgers/report.hpp"

namespace epsim::ledgers {

namespace {
const char* const kSource = "seed 000 train_step_budget";
const char* const kDefaultsSource = "DeepEP-Ascend README measurement conditions (--ffn: the seed's demonstration value)";
const char* const kDistinct = "R*(1-(1-1/R)^k), uniform routing";
const char* const kTotals = "T*distinct*d*b per rank, the rank's own tokens included";
const char* const kTime = "bytes / measured bandwidth (DeepEP-Ascend README), a pure-transfer lower bound";
const char* const kFlops = "3 GEMMs (gate, up, down) * 2*M*N*K, M = T*k rows (not deduplicated: an upper bound), N = ffn, K = d";
const char* const kBytes = "(2*M*d + 3*d*ffn) * dispatch-bytes: read the M x d input, write the M x d output, read three d x ffn weights";
const char* const kBalance = "peak / on-chip bandwidth (derived in docs/bounds.md)";
const char* const kAlign = "real rows = M * ratio to k, rounded up per expert to --expert-align (口径 B); not computed here";
const char* const kOnchip = "on-chip bandwidth: a source-model constant";
const char* const kCrosscard = "cross-card bandwidth: a vendor measurement";
const char* const kCompute = "compute: peak FLOPS (derived so the balance points match, docs/bounds.md)";

double to_gbps(double bps) { return bps / 1e9; }
double to_tflops(double flops) { return flops / 1e12; }
}  // namespace

std::string render_text(const TrainStep& s) {
  const TrainStepOptions& o = s.options;
  const TrainStepDevice& dev = s.device;
  std::string out;
  out += fmt::format("== {}: one MoE layer's training-step ledger (classifies, measures nothing) ==\n", kSource);
  out += fmt::format(" T={}, d={}, k={}, experts={}, ffn={}, dispatch {} B, combine {} B, align {}; defaults: {}\n",
                     o.tokens, o.hidden, o.topk, o.experts, o.ffn, o.dispatch_bytes,
                     o.combine_bytes, o.expert_align, kDefaultsSource);
  out += "① payload per token per direction (口径 A: k*d*b)\n";
  out += fmt::format(" dispatch {}*{}*{} = {} B = {} KB (1024-based)\n", o.topk, o.hidden,
                     o.dispatch_bytes, s.dispatch_payload_bytes,
                     fixed(static_cast<double>(s.dispatch_payload_bytes) / 1024.0, 1));
  out += fmt::format(" combine {}*{}*{} + k*4 = {} B = {} KB (plus {} B of fp32 gate weights)\n",
                     o.topk, o.hidden, o.combine_bytes, s.combine_payload_bytes,
                     fixed(static_cast<double>(s.combine_payload_bytes) / 1024.0, 1),
                     s.combine_weight_bytes);
  out += fmt::format("② dedup: expected distinct target ranks per token = {}\n", kDistinct);
  out += fmt::format(" {:>4} {:>14} {:>10}\n", "EP R", "distinct_ranks", "ratio to k");
  for (const DedupRow& r : s.dedup) {
    out += fmt::format(" {:>4} {:>14} {:>10}\n", r.ep, fixed(r.distinct_ranks, 2),
                       fixed(r.ratio_to_k * 100.0, 1) + "%");
  }
  out += fmt::format(" EP8 -> EP128: cross-device bytes grow {}% ({} -> {}) = distinct(128)/distinct(8) - 1\n",
                     fixed(s.growth_8_to_128 * 100.0, 0), fixed(s.dedup.front().distinct_ranks, 2),
                     fixed(s.dedup.back().distinct_ranks, 2));
  out += fmt::format("③ per-rank totals (口径 C: {}); time = {}\n", kTotals, kTime);
  out += fmt::format(" {:>4} {:>22} {:>22}\n", "EP", "dispatch", "combine");
  for (const RankTotalRow& r : s.totals) {
    out += fmt::format(" {:>4} {:>22} {:>22}  at {} / {} GB/s\n", r.ep,
                       fixed(r.dispatch_bytes / 1e9, 3) + " GB / " + fixed(r.dispatch_time_s * 1e6, 0) + " us",
                       fixed(r.combine_bytes / 1e9, 3) + " GB / " + fixed(r.combine_time_s * 1e6, 0) + " us",
                       fixed(to_gbps(r.dispatch_Bps), 1), fixed(to_gbps(r.combine_Bps), 1));
  }
  out += "④ expert GEMMs on this rank for this layer (2*M*N*K)\n";
  out += fmt::format(" total {} FLOP = {} TFLOP = {}\n", fmt::format("{:.3e}", static_cast<double>(s.gemm_flops)),
                     fixed(to_tflops(static_cast<double>(s.gemm_flops)), 2), kFlops);
  out += fmt::format("   M = {}, exact {} FLOP\n", s.gemm_rows, s.gemm_flops);
  out += fmt::format(" arithmetic intensity {} FLOP/byte = FLOP / {} B, bytes = {}\n",
                     fixed(s.intensity_flop_per_byte, 1), s.gemm_bytes, kBytes);
  out += fmt::format(" balance point fp8: {} / bf16: {} FLOP/byte = {}: {} / {} TFLOPS over {} GB/s\n",
                     fixed(s.balance_fp8_flop_per_byte, 0), fixed(s.balance_bf16_flop_per_byte, 0),
                     kBalance, fixed(to_tflops(dev.peak_fp8_flops), 0),
                     fixed(to_tflops(dev.peak_bf16_flops), 0), fixed(to_gbps(dev.onchip_Bps), 0));
  out += fmt::format(" {}\n", kAlign);
  out += "⑤ the three resource classes and where their figures come from\n";
  out += fmt::format(" {}: fp8 {} / bf16 {} TFLOPS\n", kCompute, fixed(to_tflops(dev.peak_fp8_flops), 0),
                     fixed(to_tflops(dev.peak_bf16_flops), 0));
  out += fmt::format(" {}: {} GB/s\n", kOnchip, fixed(to_gbps(dev.onchip_Bps), 0));
  out += fmt::format(" {}: {} GB/s\n", kCrosscard, fixed(to_gbps(dev.crosscard_Bps), 0));
  out += fmt::format(" the one cross-class division: {} / {} ≈ {} -> one cross-card move ≈ ten on-card moves (order of magnitude only)\n",
                     fixed(to_gbps(dev.onchip_Bps), 0), fixed(to_gbps(dev.crosscard_Bps), 0),
                     fixed(s.onchip_over_crosscard, 1));
  return out;
}

Json to_json(const TrainStep& s) {
  const TrainStepOptions& o = s.options;
  const TrainStepDevice& dev = s.device;
  Json j;
  j["source"] = kSource;
  j["config"] = {{"tokens", o.tokens}, {"hidden", o.hidden}, {"topk", o.topk},
                 {"experts", o.experts}, {"ffn", o.ffn}, {"dispatch_bytes", o.dispatch_bytes},
                 {"combine_bytes", o.combine_bytes}, {"expert_align", o.expert_align},
                 {"defaults_source", kDefaultsSource}};
  j["payload"] = {{"dispatch_bytes", s.dispatch_payload_bytes},
                  {"combine_bytes", s.combine_payload_bytes},
                  {"combine_weight_bytes", s.combine_weight_bytes},
                  {"formula", "k*d*b (+ k*4 for combine); KB are 1024-based"}};
  Json dedup = Json::array();
  for (const DedupRow& r : s.dedup) {
    dedup.push_back({{"ep", r.ep}, {"distinct_ranks", r.distinct_ranks}, {"ratio_to_k", r.ratio_to_k}});
  }
  j["dedup"] = {{"rows", dedup}, {"formula", kDistinct}, {"growth_8_to_128", s.growth_8_to_128}};
  Json totals = Json::array();
  for (const RankTotalRow& r : s.totals) {
    totals.push_back({{"ep", r.ep}, {"distinct_ranks", r.distinct_ranks},
                      {"recv_tokens", r.recv_tokens}, {"dispatch_bytes", r.dispatch_bytes},
                      {"combine_bytes", r.combine_bytes}, {"dispatch_Bps", r.dispatch_Bps},
                      {"combine_Bps", r.combine_Bps}, {"dispatch_time_s", r.dispatch_time_s},
                      {"combine_time_s", r.combine_time_s}});
  }
  j["rank_totals"] = {{"rows", totals}, {"bytes_formula", kTotals}, {"time_formula", kTime}};
  j["expert_gemm"] = {{"rows_M", s.gemm_rows}, {"gemm_count", s.gemm_count},
                      {"flops", s.gemm_flops}, {"bytes", s.gemm_bytes},
                      {"intensity_flop_per_byte", s.intensity_flop_per_byte},
                      {"balance_fp8_flop_per_byte", s.balance_fp8_flop_per_byte},
                      {"balance_bf16_flop_per_byte", s.balance_bf16_flop_per_byte},
                      {"flops_formula", kFlops}, {"bytes_formula", kBytes},
                      {"balance_formula", kBalance}, {"alignment_note", kAlign}};
  j["resources"] = {{"peak_fp8_flops", dev.peak_fp8_flops}, {"peak_bf16_flops", dev.peak_bf16_flops},
                    {"onchip_Bps", dev.onchip_Bps}, {"crosscard_Bps", dev.crosscard_Bps},
                    {"onchip_over_crosscard", s.onchip_over_crosscard},
                    {"compute_source", kCompute}, {"onchip_source", kOnchip},
                    {"crosscard_source", kCrosscard}};
  return j;
}

}  // namespace epsim::ledgers
