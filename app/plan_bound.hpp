// A lower bound on a layout's step time without simulating it, for the
// plan's pruning: a candidate whose bound is slower than the best step
// simulated so far cannot win (docs/plan.md, "The bound"). Only the model
// FLOPs every rank must run at its NPU's highest peak and the pipeline's
// fill and drain: no communication, no memory-bound kernel, no padding, so
// the replay's own bound (and its step) is never below it.
#pragma once

#include "workloads/workload_spec.hpp"

namespace epsim::app {

// Seconds. `peak_flops`: the NPU's highest dense peak over the dtypes its
// GEMMs may run at (FLOP/s, > 0). Per model chunk c and micro-batch, a
// rank runs the chunk's model FLOPs (6 x matmul parameters per token plus
// 3 x the attention core, as MFU counts them, the output head on the last
// slice; full recomputation adds the forward again) over the rank's tokens
// (micro_batch x sequence_length / tp), a third forward, two thirds
// backward. A stage s runs its chunks' passes of every micro-batch one
// after the other (W_s); before its first pass the forward of every chunk
// ahead of one of its own must have run, and after its last pass the
// backward of every chunk ahead of one of its own still runs (each the
// smallest such chain over the stage's chunks and, for DualPipe, the two
// directions). The bound is max over s of W_s + both chains.
double plan_step_bound_s(const workloads::WorkloadSpec& w, double peak_flops);

}  // namespace epsim::app
