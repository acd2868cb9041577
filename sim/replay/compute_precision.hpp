// Which peak a compute kernel runs at: the NPU's peak for the kernel's
// dtype, or, when the NPU lacks that dtype (an FP8 GEMM on a 910B), the
// workload's declared fallback. Without a fallback such a kernel is bad
// input, never silently run at another dtype's peak. Pure: no SimGrid.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/platform/placement.hpp"
#include "sim/platform/platform_facts.hpp"
#include "workloads/task_graph.hpp"

namespace epsim::sim {

// Peak FLOP/s (OP/s for int8) of `npu` in `dtype`; 0 when the NPU has none.
double peak_flops_per_s(const NpuFacts& npu, workloads::Dtype dtype);

// The dtype whose peak a `dtype` kernel runs at on `npu`: `dtype` itself when
// the NPU has it, else `fallback`. Call check_compute_dtypes() first: it
// guarantees the result has a peak.
workloads::Dtype effective_dtype(const NpuFacts& npu, workloads::Dtype dtype,
                                 std::optional<workloads::Dtype> fallback);

// One substitution the replay makes, for the report.
struct DtypeFallback {
  workloads::Dtype wanted = workloads::Dtype::kFp8;
  workloads::Dtype used = workloads::Dtype::kBf16;
  std::string host;  // the first NPU lacking `wanted`
};

// Checks that every compute task can run on the NPU of each rank. Throws
// InputError (at `platform_source`, key precision.gemm) naming the host, the
// missing dtype and the key precision.gemm_fallback when a dtype has no peak
// and no usable fallback. Returns the substitutions made, in dtype order.
std::vector<DtypeFallback> check_compute_dtypes(const PlatformFacts& platform, const Placement& placement,
                                                const workloads::TaskGraph& graph,
                                                std::optional<workloads::Dtype> fallback,
                                                const std::string& platform_source);

}  // namespace epsim::sim
