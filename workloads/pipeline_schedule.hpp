// The order in which each pipeline stage runs the forward and backward
// passes of its model chunks over the micro-batches of one step: Megatron-
// Core's 1F1B (PipeDream-Flush) and interleaved 1F1B schedules, and
// DeepSeek-V3's bidirectional DualPipe. Plain
// arithmetic; the task graph chains each stage's passes in this order and
// the bubbles emerge from the replay (docs/layout.md).
#pragma once

#include <optional>
#include <vector>

#include "workloads/workload_spec.hpp"

namespace epsim::workloads {

// One pass of one model chunk over one micro-batch. Chunk numbering: 1F1B
// and interleaved, chunk c holds the c-th slice of the layers and sits on
// stage c % pp; DualPipe, chunk d x pp + k is slice k of pp (as 1F1B's) in
// direction d: direction 0 runs it on stage k, direction 1 on stage
// pp - 1 - k, so each stage holds slices s and pp - 1 - s.
struct PipelinePass {
  bool forward = true;
  int micro_batch = 0;
  int chunk = 0;
  // DualPipe's F&B or Megatron's overlapped 1F1B: this pass and the
  // stage's next one (a forward and a backward of two micro-batches) run
  // as one overlapped pair.
  bool paired = false;
  bool operator==(const PipelinePass& o) const {
    return forward == o.forward && micro_batch == o.micro_batch && chunk == o.chunk && paired == o.paired;
  }
};

// Per stage, its passes in the order it runs them. 1F1B: stage s runs
// min(pp - s - 1, m) warm-up forwards, then alternates one forward and one
// backward, then drains the remaining backwards. Interleaved (vpp > 1, m a
// multiple of pp): Megatron's order over the m x vpp virtual micro-batches
// (micro-batches in groups of pp, each group through chunk 0, then chunk 1,
// ...), with (pp - s - 1) x 2 + (vpp - 1) x pp warm-up forwards.
// DualPipe (pp even, m even and >= 2 pp): micro-batches 0..m/2-1 enter at
// stage 0 (direction 0), m/2..m-1 at stage pp-1 (direction 1), in the
// eight phases of deepseek-ai/DualPipe's step() with h = min(s, pp-1-s):
// 2(pp/2-h-1) forwards, h+1 forward pairs, pp/2-h-1 (B, F), m/2-pp+h+1
// twice an F&B pair, pp/2-h-1 (B, F&B), h+1 backward pairs, pp/2-h-1
// backwards. epsim does not split a backward into its input and weight
// halves, so the zero-bubble W passes of DualPipe are inside each B; and
// every steady-state pair is overlapped (DualPipe's code runs the middle
// stages' first pair one after the other, saving one F of bubble), so the
// bubble is the published (pp/2 - 1)(F&B + B - 3W) with W = 0 (tested).
// With Megatron's 1F1B all-to-all overlap (`a2a_overlap`, 1F1B on one
// stage or interleaved): one more warm-up forward, and each steady-state
// forward is paired with the backward after it (Megatron-Core's
// combined_forward_backward_helper; one stage: F0, F1&B0, ..., B(m-1)).
std::vector<std::vector<PipelinePass>> pipeline_order(PipelineSchedule schedule, int pp, int vpp, int micro_batches,
                                                      bool a2a_overlap);

// The steady state of a schedule, for the replay's reduction (docs/simulator.md,
// "Exact reductions"): with `first` micro-batches every stage runs at least
// one steady-state iteration, and each further `delta` micro-batches add
// one more to every stage without changing the warm-up or the cool-down.
// Measured on identical micro-batches (tests/app/test_step_replay.cpp: the
// step is linear in the micro-batches from there on, to rounding): 1F1B
// first 2 pp, delta 2; interleaved delta pp (its order goes in groups of
// pp), first pp x (2 + stage 0's warm-up of 2(pp-1) + (vpp-1) pp forwards
// in groups of vpp x pp, rounded up); DualPipe first 2 pp + 2 (one above its
// least), delta 2 (one more F&B pair per direction). One stage is 1F1B at
// pp = 1: first 2, delta 2 (each micro-batch's forward and backward after
// the one before: the step grows by one micro-batch's time from the first
// on). The 1F1B all-to-all overlap's extra warm-up forward counts in the
// interleaved warm-up; one stage, first 4, delta 2 (from F1&B0 on the
// pairs repeat). Unset for GPipe and when replaying first and first + delta
// micro-batches would cost as much as the `micro_batches` themselves.
struct SteadyState {
  int first = 0;
  int delta = 0;
};
std::optional<SteadyState> steady_state(PipelineSchedule schedule, int pp, int vpp, int micro_batches,
                                       bool a2a_overlap);

// The stage that runs chunk c, and the chunk's slice of the layers (its
// position along its direction): c % pp, c for 1F1B and interleaved.
int chunk_stage(PipelineSchedule schedule, int pp, int chunk);
int chunk_position(PipelineSchedule schedule, int pp, int chunk);
// Model chunks of the step: pp x vpp, or 2 pp under DualPipe.
int pipeline_chunks(PipelineSchedule schedule, int pp, int vpp);

}  // namespace epsim::workloads
