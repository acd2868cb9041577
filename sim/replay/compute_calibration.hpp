// The platform's kernel-efficiency model applied to a task graph: each
// compute task's amounts are rescaled so that, alone on its NPU, it takes
// its calibrated time instead of the plain roofline. Pure: no SimGrid.
//
// Per rank, with e the kernel class's efficiency at the task's GEMM rows
// (ComputeSpec: max x M / (M + half_rows)), e_hbm the elementwise share of
// the HBM bandwidth (the optimizer's own for the optimizer):
//   t = max(F / (e x peak), B / (e_hbm x bw)) + B_elementwise / (e_hbm x bw)
//       + kernels x launch_overhead
// and F, B are scaled by t / max(F / peak, B / bw) (B alone set to t x bw
// when the task had no amounts), so the replay's roofline activity and the
// bound both take t, and which side binds is unchanged (docs/platform.md).
#pragma once

#include <optional>

#include "sim/platform/placement.hpp"
#include "sim/platform/platform_facts.hpp"
#include "topology/cluster_spec.hpp"
#include "workloads/task_graph.hpp"

namespace epsim::sim {

// The efficiency class of a compute task kind, for reports and docs.
enum class KernelClass { kDenseGemm, kGroupedGemm, kAttention, kOptimizer };
KernelClass kernel_class(workloads::TaskKind kind);

// Seconds rank `rank`'s part of compute task `task` takes alone under `model`
// on `npu` (`fallback`: the workload's precision.gemm_fallback).
double calibrated_time_s(const workloads::Task& task, int rank, const topology::ComputeSpec& model,
                         const NpuFacts& npu, std::optional<workloads::Dtype> fallback);

// Compute task `t` (of a graph of `ranks` ranks) rescaled in place as
// calibrate_compute does; collectives are left as they are.
void calibrate_task(workloads::Task& t, int ranks, const topology::ComputeSpec& model, const PlatformFacts& platform,
                    const Placement& placement, std::optional<workloads::Dtype> fallback);

// `graph` with every compute task's flops and hbm_bytes rescaled to its
// calibrated time on the NPU of each rank. The identity for the default
// ComputeSpec on tasks without elementwise bytes.
workloads::TaskGraph calibrate_compute(const workloads::TaskGraph& graph, const topology::ComputeSpec& model,
                                       const PlatformFacts& platform, const Placement& placement,
                                       std::optional<workloads::Dtype> fallback);

}  // namespace epsim::sim
