// Reading compute measurement files and predicting their rows.
#include "app/compute_validation.hpp"

#include <cmath>

#include <fmt/format.h>

#include "app/end_to_end.hpp"
#include "core/physical_ranges.hpp"
#include "core/toml_reader.hpp"
#include "sim/replay/compute_calibration.hpp"
#include "topology/cluster_spec.hpp"

namespace epsim::app {

namespace {

using workloads::OpClass;

const std::vector<std::string> kOps = {"gemm",   "grouped_gemm", "attention", "elementwise", "norm",     "activation",
                                       "gather", "scatter_add",  "router",    "loss",        "optimizer"};

OpClass memory_class(const std::string& op) {
  for (int c = static_cast<int>(OpClass::kElementwise); c <= static_cast<int>(OpClass::kOptimizer); ++c)
    if (op == workloads::to_string(static_cast<OpClass>(c))) return static_cast<OpClass>(c);
  return OpClass::kElementwise;
}

ComputeRow read_row(TableReader t) {
  ComputeRow r;
  r.at = t.location("name");
  r.name = t.string("name");
  const std::string op = t.choice("op", kOps);
  const std::string pass = t.choice_or("pass", "forward", {"forward", "forward_backward"});
  const std::string dtype = t.choice_or("dtype", "bf16", {"bf16", "fp8"});
  const workloads::Dtype d = dtype == "fp8" ? workloads::Dtype::kFp8 : workloads::Dtype::kBf16;
  r.calibration = t.boolean_or("calibration", false);
  r.measured_s = t.number("seconds", 1e-9, 1e3);
  if (op == "gemm" || op == "grouped_gemm") {
    const double m = t.number("m", 1, 1e9), n = t.number("n", 1, 1e9), k = t.number("k", 1, 1e9);
    const double groups = op == "grouped_gemm" ? t.number("groups", 1, 1e6) : 0;
    r.ops = {workloads::gemm(m, n, k, d, groups)};
    r.what = fmt::format("{} {} {}{}x{}x{}", op, dtype, groups > 0 ? fmt::format("{}x", groups) : "", m, n, k);
  } else if (op == "attention") {
    const double heads = t.number("heads", 1, 1e5), dqk = t.number("d_qk", 1, 1e5), dv = t.number("d_v", 1, 1e5);
    const double seq = t.number("seq", 1, 1e8);
    const workloads::Operator core = workloads::attention_core(seq, heads, dqk, dv, (seq + 1) / 2);
    r.ops = {core};
    if (pass == "forward_backward") r.ops.push_back(workloads::attention_backward(core));
    r.what = fmt::format("attention {}x{}/{} causal {} {}", heads, dqk, dv, seq, pass);
  } else {
    if (pass != "forward") t.fail("pass", "a memory-bound row is a forward kernel (pass = \"forward\")");
    r.ops = {workloads::memory_op(memory_class(op), t.number("bytes", 1, 1e15))};
    r.what = fmt::format("{} {:.1f} MB", op, r.ops.front().bytes / 1e6);
    if (op == "router" && t.has("m")) {  // the scores GEMM before the score function and top-k
      r.ops.insert(r.ops.begin(), workloads::gemm(t.number("m", 1, 1e9), t.number("n", 1, 1e9), t.number("k", 1, 1e9), d));
      r.what += " + scores GEMM";
    }
  }
  t.finish();
  return r;
}

}  // namespace

ComputeFile load_compute_file(const std::string& path) {
  const toml::table doc = load_toml_file(path);
  TableReader root(doc, "");
  ComputeFile f;
  f.path = path;
  const std::int64_t schema = root.integer("schema", 1);
  if (schema != 1) root.fail("schema", fmt::format("unsupported schema version {} (this epsim reads 1)", schema));
  root.choice("kind", {"compute"});
  f.source = root.string_or("source", "");
  f.platform = measurement_input_file(root, "platform", PresetKind::kPlatform, path);
  if (auto t = root.optional_table("platform_set")) f.platform_set = read_assignments(*t, "");
  const toml::node* rows = root.node("row");
  if (!rows || !rows->is_array_of_tables() || rows->as_array()->empty())
    root.fail("row", "expected [[row]] tables, at least one");
  const toml::array& a = *rows->as_array();
  for (std::size_t i = 0; i < a.size(); ++i) f.rows.push_back(read_row(TableReader(*a.get(i)->as_table(), fmt::format("row[{}]", i))));
  root.finish();
  return f;
}

int ComputeValidation::predictions() const {
  int n = 0;
  for (const ComputeRowResult& r : rows) n += r.calibration ? 0 : 1;
  return n;
}

int ComputeValidation::outside_band() const {
  int n = 0;
  for (const ComputeRowResult& r : rows) n += !r.calibration && std::abs(r.error) > band ? 1 : 0;
  return n;
}

ComputeValidation validate_compute(const ComputeFile& f) {
  topology::ClusterSpec spec;
  try {
    spec = topology::load_cluster_spec(f.platform, assignment_texts(f.platform_set));
  } catch (const FileError&) {
    throw;
  } catch (const InputError& e) {
    rethrow_at_assignment(e, f.platform_set);
  }
  // The NPU's figures as its platform XML carries them (npu_platform.cpp:
  // FP32 at the BF16 peak), without opening a SimGrid engine for one NPU.
  sim::NpuFacts npu;
  npu.name = spec.npu.model;
  npu.flops_bf16_per_s = spec.npu.flops_bf16;
  npu.flops_fp8_per_s = spec.npu.flops_fp8;
  npu.flops_int8_per_s = spec.npu.flops_int8;
  npu.flops_fp32_per_s = spec.npu.flops_bf16;
  npu.hbm_bandwidth_Bps = spec.npu.hbm_bandwidth_Bps;
  ComputeValidation v;
  v.path = f.path;
  v.source = f.source;
  v.platform = f.platform;
  v.stack = spec.stack.name.empty() ? "roofline" : spec.stack.name;
  v.npu = spec.npu.model;
  for (const ComputeRow& row : f.rows) {
    workloads::Task t;
    t.kind = workloads::TaskKind::kDenseFfn;
    t.ops = row.ops;
    t.flops = {workloads::total_flops(row.ops)};
    t.hbm_bytes = {workloads::total_bytes(row.ops)};
    ComputeRowResult r;
    r.name = row.name;
    r.what = row.what;
    r.measured_s = row.measured_s;
    r.predicted_s = sim::calibrated_time_s(t, 0, spec.stack, npu, std::nullopt);
    r.error = r.predicted_s / r.measured_s - 1;
    r.calibration = row.calibration;
    v.rows.push_back(r);
  }
  return v;
}

std::string format_compute_validation(const ComputeValidation& v) {
  std::string out = fmt::format("epsim validate: compute table, {}\n  source     {}\n  priced by  stack {} on {} ({})\n",
                                v.path, v.source, v.stack, v.npu, v.platform);
  out += fmt::format("  {:<26} {:<40} {:>12} {:>12} {:>9}\n", "row", "operator", "measured us", "predicted us",
                     "error");
  for (const ComputeRowResult& r : v.rows)
    out += fmt::format("  {:<26} {:<40} {:>12.2f} {:>12.2f} {:>+8.1f} %{}\n", r.name, r.what, r.measured_s * 1e6,
                       r.predicted_s * 1e6, 100 * r.error, r.calibration ? "  (calibration)" : "");
  out += fmt::format("{} of {} predicted rows within +-{:.0f} % (error = predicted / measured - 1, on time)\n",
                     v.predictions() - v.outside_band(), v.predictions(), 100 * v.band);
  return out;
}

}  // namespace epsim::app
