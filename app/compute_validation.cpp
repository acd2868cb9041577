// Reading compute measurement files and predicting their rows.
#include "app/compute_validation.hpp"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/end_to_end.hpp"
#include "core/physical_ranges.hpp"
#include "core/toml_reader.hpp"
#include "sim/replay/compute_calibration.hpp"
#include "sim/replay/measured_pricing.hpp"
#include "topology/cluster_spec.hpp"
#include "topology/measured_kernels.hpp"

namespace epsim::app {

namespace {

using workloads::OpClass;

// The row's shape as the report prints it.
std::string shape_text(const topology::MeasuredKernel& r, const workloads::Operators& ops) {
  if (r.op == "gemm" || r.op == "grouped_gemm")
    return fmt::format("{} {} {}{}x{}x{}", r.op, r.dtype, r.groups > 0 ? fmt::format("{}x", r.groups) : "", r.m, r.n,
                       r.k);
  if (r.op == "attention") return fmt::format("attention {}x{}/{} causal {} {}", r.heads, r.d_qk, r.d_v, r.seq, r.pass);
  return fmt::format("{} {:.1f} MB{}", r.op, ops.back().bytes / 1e6, r.m > 0 ? " + scores GEMM" : "");
}

}  // namespace

ComputeFile load_compute_file(const std::string& path) {
  const toml::table doc = load_toml_file(path);
  TableReader root(doc, "");
  ComputeFile f;
  f.path = path;
  f.source = topology::read_compute_header(root);
  f.platform = measurement_input_file(root, "platform", PresetKind::kPlatform, path);
  if (auto t = root.optional_table("platform_set")) f.platform_set = read_assignments(*t, "");
  for (const topology::MeasuredKernel& k : topology::read_measured_kernels(root)) {
    ComputeRow r;
    r.name = k.name;
    r.at = k.at;
    r.ops = sim::measured_operators(k);
    r.what = shape_text(k, r.ops);
    r.measured_s = k.seconds;
    r.calibration = k.calibration;
    f.rows.push_back(std::move(r));
  }
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

ComputeValidation validate_compute(const ComputeFile& f, const std::vector<std::string>& overrides,
                                   const std::string& stack) {
  topology::ClusterSpec spec;
  std::vector<std::string> assignments = assignment_texts(f.platform_set);
  assignments.insert(assignments.end(), overrides.begin(), overrides.end());
  std::string calibrated_stack;
  try {
    spec = topology::load_cluster_spec(f.platform, assignments, stack);
    // The file's own choice, before --set and --stack.
    calibrated_stack = stack.empty() && overrides.empty()
                           ? spec.stack.name
                           : topology::load_cluster_spec(f.platform, assignment_texts(f.platform_set)).stack.name;
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
  v.calibrated_stack = calibrated_stack.empty() ? "roofline" : calibrated_stack;
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
    r.calibration = row.calibration && v.stack == v.calibrated_stack;
    v.rows.push_back(r);
  }
  return v;
}

std::string format_compute_validation(const ComputeValidation& v) {
  std::string out = fmt::format("epsim validate: compute table, {}\n  source     {}\n  priced by  stack {} on {} ({})\n",
                                v.path, v.source, v.stack, v.npu, v.platform);
  if (v.stack != v.calibrated_stack)
    out += fmt::format("  calibration none: the rows the file marks calibrated {}; every row predicts {}\n",
                       v.calibrated_stack, v.stack);
  out += fmt::format("  {:<26} {:<40} {:>12} {:>12} {:>9}\n", "row", "operator", "measured us", "predicted us",
                     "error");
  for (const ComputeRowResult& r : v.rows)
    out += fmt::format("  {:<26} {:<40} {:>12.2f} {:>12.2f} {:>+8.1f} %{}\n", r.name, r.what, r.measured_s * 1e6,
                       r.predicted_s * 1e6, 100 * r.error, r.calibration ? "  (calibration)" : "");
  out += fmt::format("{} of {} predicted rows within +-{:.0f} % (error = predicted / measured - 1, on time)\n",
                     v.predictions() - v.outside_band(), v.predictions(), 100 * v.band);
  return out;
}

std::string format_compute_check(const ComputeValidation& v) {
  return v.passed() ? fmt::format("check: passed (every predicted row within +-{:.0f} %)\n", 100 * v.band)
                    : fmt::format("check: failed ({} of {} predicted rows outside +-{:.0f} %)\n", v.outside_band(),
                                  v.predictions(), 100 * v.band);
}

std::string format_compute_validation_json(const ComputeValidation& v) {
  nlohmann::ordered_json j;
  j["file"] = v.path;
  j["source"] = v.source;
  j["platform"] = v.platform;
  j["npu"] = v.npu;
  j["stack"] = v.stack;
  j["calibrated_stack"] = v.calibrated_stack;
  j["band"] = v.band;
  j["rows"] = nlohmann::ordered_json::array();
  for (const ComputeRowResult& r : v.rows)
    j["rows"].push_back({{"name", r.name},
                         {"operator", r.what},
                         {"measured_s", r.measured_s},
                         {"predicted_s", r.predicted_s},
                         {"error", r.error},
                         {"calibration", r.calibration}});
  j["predictions"] = v.predictions();
  j["within_band"] = v.predictions() - v.outside_band();
  j["passed"] = v.passed();
  return j.dump(2) + "\n";
}

}  // namespace epsim::app
