// The order in which each pipeline stage runs the forward and backward
// passes of its model chunks over the micro-batches of one step: Megatron-
// Core's 1F1B (PipeDream-Flush) and interleaved 1F1B schedules. Plain
// arithmetic; the task graph chains each stage's passes in this order and
// the bubbles emerge from the replay (docs/layout.md).
#pragma once

#include <vector>

#include "workloads/workload_spec.hpp"

namespace epsim::workloads {

// One pass of one model chunk (global index, chunk c on stage c % pp) over
// one micro-batch.
struct PipelinePass {
  bool forward = true;
  int micro_batch = 0;
  int chunk = 0;
  bool operator==(const PipelinePass& o) const {
    return forward == o.forward && micro_batch == o.micro_batch && chunk == o.chunk;
  }
};

// Per stage, its passes in the order it runs them. 1F1B: stage s runs
// min(pp - s - 1, m) warm-up forwards, then alternates one forward and one
// backward, then drains the remaining backwards. Interleaved (vpp > 1, m a
// multiple of pp): Megatron's order over the m x vpp virtual micro-batches
// (micro-batches in groups of pp, each group through chunk 0, then chunk 1,
// ...), with (pp - s - 1) x 2 + (vpp - 1) x pp warm-up forwards.
std::vector<std::vector<PipelinePass>> pipeline_order(PipelineSchedule schedule, int pp, int vpp, int micro_batches);

}  // namespace epsim::workloads
