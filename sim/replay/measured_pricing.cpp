// Pricing by measured kernels: the nearest rows' ratios over the model.
#include "sim/replay/measured_pricing.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace epsim::sim {

using workloads::Dtype;
using workloads::OpClass;
using workloads::Operator;

namespace {

Dtype row_dtype(const topology::MeasuredKernel& r) { return r.dtype == "fp8" ? Dtype::kFp8 : Dtype::kBf16; }

OpClass memory_class(const std::string& op) {
  for (int c = static_cast<int>(OpClass::kElementwise); c <= static_cast<int>(OpClass::kOptimizer); ++c)
    if (op == workloads::to_string(static_cast<OpClass>(c))) return static_cast<OpClass>(c);
  return OpClass::kElementwise;
}

// A row's kind as an operator's: its class and dtype (memory and attention rows: BF16).
struct Kind {
  OpClass op_class;
  Dtype dtype;
  bool operator<(const Kind& o) const { return std::tie(op_class, dtype) < std::tie(o.op_class, o.dtype); }
};

// A point of a kind's shape space (logs) and the ratio measured there.
struct Point {
  std::vector<double> at;
  double log_ratio = 0;
};

std::vector<double> shape_of(const Operator& op) {
  const auto ln = [](double x) { return std::log(std::max(x, 1.0)); };  // an empty dimension sits at 1, never -inf
  switch (op.op_class) {
    case OpClass::kGemm: return {ln(op.m), ln(op.n), ln(op.k)};
    case OpClass::kGroupedGemm: return {ln(op.m), ln(op.n), ln(op.k), ln(op.groups)};
    case OpClass::kAttention:
    case OpClass::kAttentionBackward:  // by head width, context and size (heads x tokens)
      return {ln(op.head_dim), ln(op.context), ln(op.flops)};
    default: return {ln(op.bytes)};
  }
}

double total(const workloads::Operators& ops, const ModelTime& model) {
  double t = 0;
  for (const Operator& o : ops) t += model(o);
  return t;
}

// Each row's point in its kind's space, the ratio of its measured time to
// the model's (a backward from forward_backward rows: less the measured
// forward of the same shape where there is one, else the ratio of the pair).
std::map<Kind, std::vector<Point>> points_of(const std::vector<topology::MeasuredKernel>& rows, const ModelTime& model) {
  std::map<Kind, std::vector<Point>> out;
  std::map<std::tuple<double, double, double, double>, double> forward_s;  // attention forward rows by shape
  for (const topology::MeasuredKernel& r : rows)
    if (r.op == "attention" && r.pass == "forward") forward_s[{r.heads, r.d_qk, r.d_v, r.seq}] = r.seconds;
  for (const topology::MeasuredKernel& r : rows) {
    const workloads::Operators ops = measured_operators(r);
    const Operator& main = ops.back();  // the memory kernel after a router's scores GEMM; the backward of a pair
    double ratio = r.seconds / total(ops, model);
    Kind kind{main.op_class, main.op_class == OpClass::kGemm || main.op_class == OpClass::kGroupedGemm
                                 ? row_dtype(r)
                                 : Dtype::kBf16};
    if (main.op_class == OpClass::kAttentionBackward) {
      const auto f = forward_s.find({r.heads, r.d_qk, r.d_v, r.seq});
      if (f != forward_s.end() && r.seconds > f->second) ratio = (r.seconds - f->second) / model(main);
    }
    if (!(ratio > 0) || !std::isfinite(ratio)) continue;
    out[kind].push_back({shape_of(main), std::log(ratio)});
  }
  return out;
}

double interpolate(const std::vector<Point>& points, const std::vector<double>& at) {
  std::vector<std::pair<double, double>> by_distance;  // squared distance, log ratio
  for (const Point& p : points) {
    double d2 = 0;
    for (std::size_t i = 0; i < at.size(); ++i) d2 += (at[i] - p.at[i]) * (at[i] - p.at[i]);
    by_distance.push_back({d2, p.log_ratio});
  }
  std::sort(by_distance.begin(), by_distance.end());
  if (by_distance.front().first < 1e-18) {  // a measured shape: its rows' geometric mean
    double sum = 0;
    int n = 0;
    for (; n < static_cast<int>(by_distance.size()) && by_distance[n].first < 1e-18; ++n) sum += by_distance[n].second;
    return std::exp(sum / n);
  }
  double w = 0, sum = 0;
  for (std::size_t i = 0; i < by_distance.size() && i < 4; ++i) {
    w += 1 / by_distance[i].first;
    sum += by_distance[i].second / by_distance[i].first;
  }
  return std::exp(sum / w);
}

}  // namespace

workloads::Operators measured_operators(const topology::MeasuredKernel& r) {
  const Dtype d = row_dtype(r);
  if (r.op == "gemm" || r.op == "grouped_gemm") return {workloads::gemm(r.m, r.n, r.k, d, r.groups)};
  if (r.op == "attention") {
    const Operator core = workloads::attention_core(r.seq, r.heads, r.d_qk, r.d_v, (r.seq + 1) / 2);
    if (r.pass == "forward_backward") return {core, workloads::attention_backward(core)};
    return {core};
  }
  workloads::Operators ops;
  if (r.m > 0) ops.push_back(workloads::gemm(r.m, r.n, r.k, d));  // a router's scores GEMM
  ops.push_back(r.op == "router" ? workloads::router_op(r.bytes) : workloads::memory_op(memory_class(r.op), r.bytes));
  return ops;
}

double measured_factor(const Operator& op, Dtype dtype, const topology::StackSpec& stack, const NpuFacts& npu,
                       const ModelTime& model) {
  if (stack.measured.empty() || op.backward) return 1;
  const bool gemm = op.op_class == OpClass::kGemm || op.op_class == OpClass::kGroupedGemm;
  if (gemm && dtype != Dtype::kBf16 && dtype != Dtype::kFp8) return 1;
  // The rows' ratios depend on the stack and the NPU only: computed once per
  // pair (the key holds the figures they are priced by, so a stack changed
  // by --set in the same process is priced anew).
  using Key = std::tuple<const topology::StackSpec*, std::string, std::size_t, std::vector<double>>;
  thread_local std::map<Key, std::map<Kind, std::vector<Point>>> cache;
  std::vector<double> figures = {npu.flops_bf16_per_s, npu.flops_fp8_per_s, npu.hbm_bandwidth_Bps, stack.gemm_memory,
                                 stack.gemm_fixed_s, stack.grouped_fixed_s, stack.launch_s, stack.fp8_cast_bytes};
  for (const topology::GemmEfficiency& e : {stack.gemm_bf16, stack.gemm_fp8, stack.grouped_bf16, stack.grouped_fp8})
    figures.insert(figures.end(), {e.max, e.half_rows, e.half_n, e.half_k, e.memory, e.per_expert_launch ? 1.0 : 0.0});
  for (const topology::AttentionEfficiency& e : {stack.attention, stack.attention_backward})
    figures.insert(figures.end(), {e.max, e.half_dim, e.half_context});
  figures.insert(figures.end(), stack.memory.begin(), stack.memory.end());
  const Key key{&stack, stack.name + "|" + stack.source, stack.measured.size(), std::move(figures)};
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, points_of(stack.measured, model)).first;
  const auto points = it->second.find(Kind{op.op_class, gemm ? dtype : Dtype::kBf16});
  if (points == it->second.end() || points->second.empty()) return 1;
  return interpolate(points->second, shape_of(op));
}

}  // namespace epsim::sim
