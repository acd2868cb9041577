// Kernel classes and the rescaling of compute amounts to calibrated times.
#include "sim/replay/compute_calibration.hpp"

#include <algorithm>

#include "sim/replay/compute_precision.hpp"

namespace epsim::sim {

using workloads::TaskKind;

KernelClass kernel_class(TaskKind kind) {
  switch (kind) {
    case TaskKind::kAttention: return KernelClass::kAttention;
    case TaskKind::kExpertGemm: return KernelClass::kGroupedGemm;
    case TaskKind::kOptimizer: return KernelClass::kOptimizer;
    default: return KernelClass::kDenseGemm;
  }
}

namespace {

double at(const std::vector<double>& v, int rank) {
  return v.empty() ? 0.0 : v[static_cast<std::size_t>(rank)];
}

// Seconds per FLOP at the peak's scale of `task` on `rank`: 1 / efficiency,
// or for a GEMM class with known shapes the FLOP-weighted mean of 1 /
// efficiency over its GEMMs (each at the task's rows); 1 for the optimizer
// (memory-bound). Attention: its efficiency at the rows and its core's
// channels per head.
double inverse_efficiency(const workloads::Task& task, int rank, const topology::ComputeSpec& m) {
  const double rows = at(task.gemm_rows, rank);
  auto gemms = [&](const topology::KernelClassEfficiency& e) {
    if (task.gemm_shapes.empty() || (e.half_n == 0 && e.half_k == 0)) return 1.0 / e.at(rows);
    double sum = 0;
    for (const workloads::GemmShape& g : task.gemm_shapes) sum += g.share / e.at(rows, g.n, g.k);
    return sum;
  };
  switch (kernel_class(task.kind)) {
    case KernelClass::kAttention:
      return 1.0 / (m.attention.at(rows) * topology::KernelClassEfficiency::factor(task.head_dim, m.attention.half_dim));
    case KernelClass::kGroupedGemm: return gemms(m.grouped_gemm);
    case KernelClass::kDenseGemm: return gemms(m.dense_gemm);
    case KernelClass::kOptimizer: return 1.0;
  }
  return 1.0;
}

}  // namespace

double calibrated_time_s(const workloads::Task& task, int rank, const topology::ComputeSpec& m, const NpuFacts& npu,
                         std::optional<workloads::Dtype> fallback) {
  const double peak = peak_flops_per_s(npu, effective_dtype(npu, task.dtype, fallback));
  const double hbm = npu.hbm_bandwidth_Bps * (kernel_class(task.kind) == KernelClass::kOptimizer ? m.optimizer : m.elementwise);
  const double flops = task.flops[static_cast<std::size_t>(rank)];
  const double bytes = task.hbm_bytes[static_cast<std::size_t>(rank)];
  const double ew = at(task.elementwise_bytes, rank);
  if (!(flops > 0) && !(bytes > 0) && !(ew > 0)) return 0;  // no work on this rank: nothing launched
  return std::max(flops * inverse_efficiency(task, rank, m) / peak, bytes / hbm) + ew / hbm +
         task.kernels * m.launch_overhead_s;
}

void calibrate_task(workloads::Task& t, int ranks, const topology::ComputeSpec& model, const PlatformFacts& platform,
                    const Placement& placement, std::optional<workloads::Dtype> fallback) {
  if (t.is_collective()) return;
  for (int r = 0; r < ranks; ++r) {
    const NpuFacts& npu = platform.npus[static_cast<std::size_t>(placement.npu_of_rank[r])];
    const double target = calibrated_time_s(t, r, model, npu, fallback);
    const std::size_t i = static_cast<std::size_t>(r);
    const double peak = peak_flops_per_s(npu, effective_dtype(npu, t.dtype, fallback));
    const double roofline = std::max(t.flops[i] / peak, t.hbm_bytes[i] / npu.hbm_bandwidth_Bps);
    if (roofline > 0) {
      t.flops[i] *= target / roofline;
      t.hbm_bytes[i] *= target / roofline;
    } else {
      t.hbm_bytes[i] = target * npu.hbm_bandwidth_Bps;  // only memory-bound kernels
    }
  }
  // The amounts now hold them; a second calibration must not count them again.
  t.elementwise_bytes.clear();
  t.gemm_rows.clear();
  t.gemm_shapes.clear();
  t.head_dim = 0;
  t.kernels = 0;
}

workloads::TaskGraph calibrate_compute(const workloads::TaskGraph& graph, const topology::ComputeSpec& model,
                                       const PlatformFacts& platform, const Placement& placement,
                                       std::optional<workloads::Dtype> fallback) {
  workloads::TaskGraph out = graph;
  for (workloads::Task& t : out.tasks) calibrate_task(t, out.ranks, model, platform, placement, fallback);
  return out;
}

}  // namespace epsim::sim
