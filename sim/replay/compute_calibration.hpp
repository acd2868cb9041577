// A software stack's prices applied to a task graph: each compute task's
// operators are priced on the NPU of each rank (docs/operators.md), and its
// amounts rescaled so that, alone on its NPU, it takes that time instead of
// the plain roofline. Pure: no SimGrid.
//
// Per operator, with e its class's efficiency at its shape:
//   GEMM:      max(F / (e x peak[dtype]), B / (gemm_memory x bw))
//   attention: F / (e x peak[bf16])
//   memory:    B / (share[class] x bw)
// plus launch per kernel; a task takes the sum over its operators at its
// rank's share, but never less than its kernels' host issue time, and a
// MoE layer's forward gate adds the stack's host sync. F, B are then
// scaled by t / max(F / peak, B / bw) (B alone set to t x bw when the task
// had no amounts), so the replay's roofline activity and the bound both
// take t, and which side binds is unchanged.
#pragma once

#include <optional>

#include "sim/platform/placement.hpp"
#include "sim/platform/platform_facts.hpp"
#include "topology/stack_spec.hpp"
#include "workloads/task_graph.hpp"

namespace epsim::sim {

// Seconds one operator takes alone on `npu` under `stack` (`fallback`: the
// workload's precision.gemm_fallback), launch included.
double operator_time_s(const workloads::Operator& op, const topology::StackSpec& stack, const NpuFacts& npu,
                       std::optional<workloads::Dtype> fallback);

// Seconds rank `rank`'s part of compute task `task` takes alone.
double calibrated_time_s(const workloads::Task& task, int rank, const topology::StackSpec& stack,
                         const NpuFacts& npu, std::optional<workloads::Dtype> fallback);

// Compute task `t` (of a graph of `ranks` ranks) rescaled in place as
// calibrate_compute does; collectives are left as they are.
void calibrate_task(workloads::Task& t, int ranks, const topology::StackSpec& stack, const PlatformFacts& platform,
                    const Placement& placement, std::optional<workloads::Dtype> fallback);

// `graph` with every compute task's flops and hbm_bytes rescaled to its
// priced time on the NPU of each rank.
workloads::TaskGraph calibrate_compute(const workloads::TaskGraph& graph, const topology::StackSpec& stack,
                                       const PlatformFacts& platform, const Placement& placement,
                                       std::optional<workloads::Dtype> fallback);

}  // namespace epsim::sim
