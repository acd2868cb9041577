// Which dispatch/combine kernels a software stack runs: a property of the
// framework, not of the fabric (docs/stacks.md). The replay takes it from
// the platform's hosts (property dispatch_kernel), the stack puts it there.
#pragma once

#include <array>

namespace epsim::topology {

// The dispatch/combine kernels a framework runs (docs/stacks.md):
//   deepep-normal       DeepEP's normal kernels (HybridEP alike): a token goes once to each
//                       destination node, relayed over the scale-up fabric to its ranks
//                       there, where the scale-out is slower (else straight to each rank);
//   alltoall            the framework's all-to-all collective (NCCL, HCCL; Megatron's
//                       "alltoall" dispatcher): one copy per (token, selected expert),
//                       straight to its rank, no deduplication;
//   deepep-low-latency  DeepEP's low-latency kernels: one RDMA write per selection.
enum class DispatchKernel { kDeepEpNormal, kAlltoall, kDeepEpLowLatency };
inline constexpr std::array<const char*, 3> kDispatchKernelNames = {"deepep-normal", "alltoall",
                                                                    "deepep-low-latency"};

}  // namespace epsim::topology
