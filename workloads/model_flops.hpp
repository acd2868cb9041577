// Model FLOPs of a training step, counted as MFU counts them: what the
// model needs, not what the simulated kernels run (no expert-row padding,
// no recomputation, no optimizer). Per token, forward x 3 for forward plus
// backward: 6 x the matmul parameters a token passes through plus 3 x the
// causal attention core (docs/simulator.md).
#pragma once

#include "workloads/workload_spec.hpp"

namespace epsim::workloads {

struct ModelFlops {
  // Matmul parameters one token passes through: per layer the attention
  // projections and either the dense FFN or the router, the shared experts
  // and top_k routed experts; plus the output head. The embedding lookup
  // is not a matmul and is not counted.
  double active_params = 0;
  // Forward FLOPs per token of the attention cores, all layers: QK^T and PV
  // at 2 FLOPs per multiply-add over (S+1)/2 keys on average (causal).
  double attention_core_flops = 0;
  double per_token() const { return 6.0 * active_params + 3.0 * attention_core_flops; }
  // A serving step's: the forward alone.
  double forward_per_token() const { return 2.0 * active_params + attention_core_flops; }
};

ModelFlops model_flops(const WorkloadSpec& w);

}  // namespace epsim::workloads
