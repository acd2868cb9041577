// Text and JSON report of seed 002's step budget (training and inference tables).
#include <fmt/format.h>

#include "ledgers/format.hpp"
#include "ledgers/report.hpp"

namespace epsim::ledgers {

namespace {
const char* const kSource = "seed 002 step_budget";
const char* const kWeights = "L*(2*d^2 + 2*d*kv + 3*d*ffn), kv = kv_heads*head_dim (GQA)";
const char* const kForwardFlops = "2*s*W + 4*s^2*d*L (QK^T and PV, full s x s) + 5*s^2*heads*L (softmax), heads = d/head_dim";
const char* const kForwardBytes = "2*W (BF16 weights read once) + 3*2*L*s*(d + ffn) (three s x d and three s x ffn BF16 tensors per layer)";
const char* const kBackward = "2 x forward (FLOPs and bytes)";
const char* const kOptimizer = "AdamW: 15*params FLOPs; 26*params bytes (read grad 2 + param/m/v 12, write param/m/v 12)";
const char* const kComm = "ring all-reduce 2*(N-1)/N * 2*params bytes (BF16 gradients)";
const char* const kDecode = "FLOPs 2*W + 4*s*d*L; bytes 2*W + 2*2*L*s*kv (K and V caches of length s)";
const char* const kBound = "memory time = bytes / bandwidth; compute time = FLOPs / peak; bound = max of the two; share = bound / table sum";

const char* label(const std::string& name) {
  if (name == "forward") return "forward (all layers)";
  if (name == "backward") return "backward (all layers)";
  if (name == "prefill") return "prefill (all layers)";
  if (name == "decode") return "decode (per token)";
  return name.c_str();
}

void append_table(std::string& out, const std::vector<Phase>& table) {
  out += fmt::format("{:<22} {:>12} {:>11} {:>11} {:>12} {:>12} {:>6}\n", "phase", "ops", "bytes",
                     "memory time", "compute time", "bound", "share");
  for (const Phase& p : table) {
    out += fmt::format("{:<22} {:>12} {:>11} {:>11} {:>12} {:>12} {:>6}\n", label(p.name),
                       fixed(p.flops / 1e9, 1) + " GF", fixed(p.bytes / 1e9, 2) + " GB",
                       duration_text(p.memory_time_s), duration_text(p.compute_time_s),
                       duration_text(p.bound_s), fixed(p.share * 100.0, 1) + "%");
  }
}

Json phases_json(const std::vector<Phase>& table) {
  Json rows = Json::array();
  for (const Phase& p : table) {
    rows.push_back({{"phase", p.name}, {"flops", p.flops}, {"bytes", p.bytes},
                    {"memory_time_s", p.memory_time_s}, {"compute_time_s", p.compute_time_s},
                    {"bound_s", p.bound_s}, {"share", p.share}});
  }
  return rows;
}
}  // namespace

std::string render_text(const StepBudget& b) {
  const StepBudgetOptions& o = b.options;
  std::string rule(104, '=');
  std::string thin(104, '-');
  std::string out;
  out += fmt::format("== {}: where a dense decoder's training step and inference spend time ==\n", kSource);
  out += fmt::format(" L={}, d={}, ffn={}, params={}, world N={}, head_dim={}, kv_heads={}; peak {} TFLOPS, bandwidth {} GB/s\n",
                     o.layers, o.hidden, o.ffn, fmt::format("{:g}", o.params), o.world, o.head_dim,
                     o.kv_heads, fmt::format("{:g}", o.peak_tflops), fmt::format("{:g}", o.bandwidth_gbps));
  out += rule + "\n";
  out += fmt::format("training step (seq_len={}, batch=1)\n", o.seq_len);
  out += thin + "\n";
  append_table(out, b.training);
  out += rule + "\n";
  out += "inference\n" + thin + "\n";
  append_table(out, b.inference);
  out += rule + "\n";
  out += fmt::format(" weights W = {} = {}\n", fmt::format("{:.0f}", b.layer_weight_params), kWeights);
  out += fmt::format(" forward FLOPs = {}\n", kForwardFlops);
  out += fmt::format(" forward bytes = {}\n", kForwardBytes);
  out += fmt::format(" backward = {}\n", kBackward);
  out += fmt::format(" optimizer = {}\n", kOptimizer);
  out += fmt::format(" communication = {}\n", kComm);
  out += fmt::format(" prefill = forward; decode {}\n", kDecode);
  out += fmt::format(" {}\n", kBound);
  return out;
}

Json to_json(const StepBudget& b) {
  const StepBudgetOptions& o = b.options;
  Json j;
  j["source"] = kSource;
  j["config"] = {{"seq_len", o.seq_len}, {"batch", 1}, {"layers", o.layers}, {"hidden", o.hidden},
                 {"ffn", o.ffn}, {"params", o.params}, {"world", o.world},
                 {"peak_tflops", o.peak_tflops}, {"bandwidth_gbps", o.bandwidth_gbps},
                 {"head_dim", o.head_dim}, {"kv_heads", o.kv_heads}};
  j["layer_weight_params"] = b.layer_weight_params;
  j["training"] = phases_json(b.training);
  j["inference"] = phases_json(b.inference);
  j["formulas"] = {{"weights", kWeights}, {"forward_flops", kForwardFlops},
                   {"forward_bytes", kForwardBytes}, {"backward", kBackward},
                   {"optimizer", kOptimizer}, {"communication", kComm}, {"decode", kDecode},
                   {"bound", kBound}};
  return j;
}

}  // namespace epsim::ledgers
