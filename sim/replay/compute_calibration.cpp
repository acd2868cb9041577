// Operator prices and the rescaling of compute amounts to them.
#include "sim/replay/compute_calibration.hpp"

#include <algorithm>
#include <cmath>

#include "sim/replay/compute_precision.hpp"
#include "sim/replay/measured_pricing.hpp"

namespace epsim::sim {

using workloads::Dtype;
using workloads::OpClass;
using workloads::TaskKind;

namespace {

// An FP8 GEMM's activation operand quantized apart from it: an amax pass and a cast.
constexpr int kFp8CastKernels = 2;

const topology::GemmEfficiency& gemm_table(const topology::StackSpec& s, OpClass c, Dtype d) {
  const bool fp8 = d == Dtype::kFp8 || d == Dtype::kInt8;
  if (c == OpClass::kGroupedGemm) return fp8 ? s.grouped_fp8 : s.grouped_bf16;
  return fp8 ? s.gemm_fp8 : s.gemm_bf16;
}

// The stack's HBM share for a memory-bound class (a fusable activation
// the stack fuses: the elementwise rate).
double memory_share(const topology::StackSpec& s, const workloads::Operator& op) {
  const OpClass cls = op.fusable && s.fused_swiglu ? OpClass::kElementwise : op.op_class;
  const auto c = static_cast<std::size_t>(static_cast<int>(cls) - static_cast<int>(OpClass::kElementwise));
  return op.backward ? s.memory_backward[c] : s.memory[c];
}

// The kernels an operator launches on this stack: one where the stack
// fuses it, one per expert for a grouped GEMM its library issues so.
int kernels_of(const workloads::Operator& op, const topology::StackSpec& s, Dtype d) {
  if (op.fusable && s.fused_swiglu) return 1;
  if (op.op_class == OpClass::kRouter && s.fused_router) return 1;
  if (op.op_class == OpClass::kGroupedGemm && gemm_table(s, op.op_class, d).per_expert_launch)
    return std::max(1, static_cast<int>(std::ceil(op.groups)));
  return op.kernels;
}

// The host's time to issue the operators' kernels: host_per_kernel each,
// an FP8 GEMM call at least the stack's host_per_fp8_gemm plus its
// operand's two quantizing kernels where the stack casts separately (each
// of a grouped GEMM's per-expert calls).
double host_time_s(const workloads::Operators& ops, const topology::StackSpec& s, const NpuFacts& npu,
                   std::optional<Dtype> fallback) {
  double t = 0;
  for (const workloads::Operator& op : ops) {
    const Dtype d = effective_dtype(npu, op.dtype, fallback);
    double per_kernel = s.host_per_kernel_s;
    const bool gemm = op.op_class == OpClass::kGemm || op.op_class == OpClass::kGroupedGemm;
    if (gemm && d == Dtype::kFp8) {
      per_kernel = std::max(per_kernel, s.host_per_fp8_gemm_s);
      if (s.fp8_cast_bytes > 0) per_kernel += kFp8CastKernels * s.host_per_kernel_s;
    }
    t += kernels_of(op, s, d) * per_kernel;
  }
  return t;
}

// The stack's closed forms alone (docs/operators.md).
double model_time_s(const workloads::Operator& op, const topology::StackSpec& stack, const NpuFacts& npu,
                    std::optional<Dtype> fallback) {
  if (!(op.flops > 0) && !(op.bytes > 0)) return 0;
  const double bw = npu.hbm_bandwidth_Bps;
  double body = 0;
  switch (op.op_class) {
    case OpClass::kGemm:
    case OpClass::kGroupedGemm: {
      const Dtype d = effective_dtype(npu, op.dtype, fallback);
      const topology::GemmEfficiency& table = gemm_table(stack, op.op_class, d);
      const double e = table.at(op.m, op.n, op.k);
      const double fixed = op.op_class == OpClass::kGroupedGemm ? stack.grouped_fixed_s : stack.gemm_fixed_s;
      const double memory = table.memory > 0 ? table.memory : stack.gemm_memory;
      body = fixed + std::max(op.flops / (e * peak_flops_per_s(npu, d)), op.bytes / (memory * bw));
      if (d == Dtype::kFp8 && stack.fp8_cast_bytes > 0)  // quantizing its activation operand
        body += stack.fp8_cast_bytes * op.m * op.k * op.groups / (stack.memory[0] * bw) +
                kFp8CastKernels * kernels_of(op, stack, d) * stack.launch_s;
      break;
    }
    case OpClass::kAttention:
    case OpClass::kAttentionBackward: {
      const bool decode = op.decode && stack.decode_attention;
      const topology::AttentionEfficiency& a = decode                                 ? *stack.decode_attention
                                               : op.op_class == OpClass::kAttention ? stack.attention
                                                                                     : stack.attention_backward;
      body = std::max(op.flops / (a.at(op.head_dim, op.context) * peak_flops_per_s(npu, Dtype::kBf16)),
                      op.bytes / ((decode ? stack.decode_attention_memory : 1.0) * bw));
      break;
    }
    default: body = op.bytes / (memory_share(stack, op) * bw); break;
  }
  return body + kernels_of(op, stack, effective_dtype(npu, op.dtype, fallback)) * stack.launch_s;
}

}  // namespace

double operator_time_s(const workloads::Operator& op, const topology::StackSpec& stack, const NpuFacts& npu,
                       std::optional<Dtype> fallback) {
  const double model = model_time_s(op, stack, npu, fallback);
  if (stack.measured.empty() || !(model > 0)) return model;
  const ModelTime priced = [&](const workloads::Operator& o) { return model_time_s(o, stack, npu, std::nullopt); };
  return model * measured_factor(op, effective_dtype(npu, op.dtype, fallback), stack, npu, priced);
}

double calibrated_time_s(const workloads::Task& task, int rank, const topology::StackSpec& stack, const NpuFacts& npu,
                         std::optional<Dtype> fallback) {
  const double share = task.share(rank);
  if (!(share > 0)) return 0;  // no work on this rank: nothing launched
  double t = 0;
  for (const workloads::Operator& op : task.ops) {
    workloads::Operator mine = op;
    mine.flops *= share;
    mine.bytes *= share;
    t += operator_time_s(mine, stack, npu, fallback);
  }
  t = std::max(t, host_time_s(task.ops, stack, npu, fallback));
  if (task.kind == TaskKind::kGate && task.phase != workloads::Phase::kBackward) t += stack.moe_host_sync_s;
  return t;
}

void calibrate_task(workloads::Task& t, int ranks, const topology::StackSpec& stack, const PlatformFacts& platform,
                    const Placement& placement, std::optional<Dtype> fallback) {
  if (t.is_collective() || t.ops.empty()) return;
  for (int r = 0; r < ranks; ++r) {
    const NpuFacts& npu = platform.npus[static_cast<std::size_t>(placement.npu_of_rank[r])];
    const double target = calibrated_time_s(t, r, stack, npu, fallback);
    const std::size_t i = static_cast<std::size_t>(r);
    const double peak = peak_flops_per_s(npu, effective_dtype(npu, t.dtype, fallback));
    const double roofline = std::max(t.flops[i] / peak, t.hbm_bytes[i] / npu.hbm_bandwidth_Bps);
    if (roofline > 0) {
      t.flops[i] *= target / roofline;
      t.hbm_bytes[i] *= target / roofline;
    } else {
      t.hbm_bytes[i] = target * npu.hbm_bandwidth_Bps;
    }
  }
  // The amounts now hold the prices; a second calibration must not count them again.
  t.ops.clear();
}

workloads::TaskGraph calibrate_compute(const workloads::TaskGraph& graph, const topology::StackSpec& stack,
                                       const PlatformFacts& platform, const Placement& placement,
                                       std::optional<Dtype> fallback) {
  workloads::TaskGraph out = graph;
  for (workloads::Task& t : out.tasks) calibrate_task(t, out.ranks, stack, platform, placement, fallback);
  return out;
}

}  // namespace epsim::sim
