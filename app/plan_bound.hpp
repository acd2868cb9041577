// A lower bound on a layout's step time without simulating it, for the
// plan's pruning: a candidate whose bound is slower than the best step
// simulated so far cannot win (docs/plan.md, "The bound"). Only the model
// FLOPs every rank must run, each kernel class at its NPU's peak times the
// best efficiency the platform's kernel model ever gives that class, and
// the pipeline's fill and drain: no communication, no memory-bound kernel,
// no padding, no launch overhead, so the replay's own bound (and its step)
// is never below it.
#pragma once

#include <vector>

#include "topology/cluster_spec.hpp"
#include "workloads/workload_spec.hpp"

namespace epsim::app {

// The rates the bound divides FLOPs by, FLOP/s per NPU: the peak of the
// dtype the workload's GEMMs run at (its fallback's on an NPU without it;
// never below BF16's) times the largest efficiency of each kernel class
// ([compute] dense_gemm, grouped_gemm, attention: their `max`).
struct PlanRates {
  double peak_flops = 0;  // the dtype's peak
  double attention_flops = 0;
  double dense_flops = 0;    // router, dense FFN, shared experts, output head
  double grouped_flops = 0;  // routed experts
};
PlanRates plan_rates(const topology::ClusterSpec& cluster, const workloads::PrecisionSpec& precision);

// Seconds. Per model chunk c and micro-batch, a rank runs the chunk's model
// FLOPs (6 x matmul parameters per token plus 3 x the attention core, as
// MFU counts them, the output head on the last slice; full recomputation
// adds the forward again) over the rank's tokens (micro_batch x
// sequence_length / tp), each class at its rate, a third forward, two thirds
// backward. A stage s runs its chunks' passes of every micro-batch one
// after the other (W_s); before its first pass the forward of every chunk
// ahead of one of its own must have run, and after its last pass the
// backward of every chunk ahead of one of its own still runs (each the
// smallest such chain over the stage's chunks and, for DualPipe, the two
// directions). The bound is max over s of W_s + both chains.
double plan_step_bound_s(const workloads::WorkloadSpec& w, const PlanRates& rates);

// Seconds per stage: the two chains alone, the forward of the chunks ahead
// of one of its own before its first pass and their backward after its
// last (the smallest such pair over its chunks): no stream of the stage
// (compute, NICs, links) runs its step's work outside them.
std::vector<double> plan_fill_drain_s(const workloads::WorkloadSpec& w, const PlanRates& rates);

}  // namespace epsim::app
