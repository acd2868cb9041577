// 1F1B and interleaved 1F1B pass orders, as Megatron-Core's
// forward_backward_pipelining_{without,with}_interleaving order them, and
// DualPipe's, as the eight phases of deepseek-ai/DualPipe's step() order it.
#include "workloads/pipeline_schedule.hpp"

#include <algorithm>

namespace epsim::workloads {

namespace {

// The k-th forward (or backward) pass of stage s among its m x vpp virtual
// micro-batches: micro-batches go in groups of pp, each group through all of
// the stage's chunks (backward: the chunks in reverse).
PipelinePass virtual_pass(int k, bool forward, int s, int pp, int vpp) {
  const int group = k / (pp * vpp), in_group = k % (pp * vpp);
  int local_chunk = in_group / pp;
  if (!forward) local_chunk = vpp - 1 - local_chunk;
  return {forward, group * pp + in_group % pp, local_chunk * pp + s};
}

// Stage s's DualPipe passes. Its local phase 0 is the direction whose
// micro-batches reach it first along its half of the pipeline (direction
// 0 on the first half of the stages, 1 on the second), phase 1 the other.
std::vector<PipelinePass> dualpipe_stage(int s, int pp, int micro_batches) {
  const int half = pp / 2, h = std::min(s, pp - 1 - s), per_direction = micro_batches / 2;
  const int flip = s >= half ? 1 : 0;
  int forwards[2] = {0, 0}, backwards[2] = {0, 0};  // passes listed so far, per direction
  std::vector<PipelinePass> order;
  const auto pass = [&](bool forward, int phase, bool paired) {
    const int d = phase ^ flip;
    const int position = d == 0 ? s : pp - 1 - s;
    int& n = forward ? forwards[d] : backwards[d];
    order.push_back({forward, d * per_direction + n++, d * pp + position, paired});
  };
  const auto f = [&](int phase) { pass(true, phase, false); };
  const auto b = [&](int phase) { pass(false, phase, false); };
  const auto fb = [&](int forward_phase) {  // F of one phase overlapped with B of the other
    pass(true, forward_phase, true);
    pass(false, 1 - forward_phase, false);
  };
  for (int i = 0; i < 2 * (half - h - 1); ++i) f(0);
  for (int i = 0; i < h + 1; ++i) f(0), f(1);
  for (int i = 0; i < half - h - 1; ++i) b(1), f(1);
  for (int i = 0; i < per_direction - pp + h + 1; ++i) fb(0), fb(1);
  for (int i = 0; i < half - h - 1; ++i) b(1), fb(1);
  for (int i = 0; i < h + 1; ++i) b(1), b(0);
  for (int i = 0; i < half - h - 1; ++i) b(0);
  return order;
}

}  // namespace

int pipeline_chunks(PipelineSchedule schedule, int pp, int vpp) {
  if (schedule == PipelineSchedule::kDualPipe) return 2 * pp;
  return pp * (schedule == PipelineSchedule::kInterleaved ? vpp : 1);
}

int chunk_stage(PipelineSchedule schedule, int pp, int chunk) {
  if (schedule == PipelineSchedule::kDualPipe && chunk >= pp) return 2 * pp - 1 - chunk;
  return chunk % pp;
}

int chunk_position(PipelineSchedule schedule, int pp, int chunk) {
  return schedule == PipelineSchedule::kDualPipe ? chunk % pp : chunk;
}

std::vector<std::vector<PipelinePass>> pipeline_order(PipelineSchedule schedule, int pp, int vpp, int micro_batches,
                                                      bool a2a_overlap) {
  if (schedule == PipelineSchedule::kDualPipe) {
    std::vector<std::vector<PipelinePass>> out;
    for (int s = 0; s < pp; ++s) out.push_back(dualpipe_stage(s, pp, micro_batches));
    return out;
  }
  if (schedule != PipelineSchedule::kInterleaved) vpp = 1;
  std::vector<std::vector<PipelinePass>> out(static_cast<std::size_t>(pp));
  const int total = micro_batches * vpp;
  for (int s = 0; s < pp; ++s) {
    const int overlap = a2a_overlap ? 1 : 0;
    const int warmup = std::min(total, (vpp == 1 ? pp - s - 1 : (pp - s - 1) * 2 + (vpp - 1) * pp) + overlap);
    auto& order = out[static_cast<std::size_t>(s)];
    int f = 0, b = 0;
    while (f < warmup) order.push_back(virtual_pass(f++, true, s, pp, vpp));
    while (f < total) {
      PipelinePass forward = virtual_pass(f++, true, s, pp, vpp);
      forward.paired = a2a_overlap;
      order.push_back(forward);
      order.push_back(virtual_pass(b++, false, s, pp, vpp));
    }
    while (b < total) order.push_back(virtual_pass(b++, false, s, pp, vpp));
  }
  return out;
}

std::optional<SteadyState> steady_state(PipelineSchedule schedule, int pp, int vpp, int micro_batches,
                                       bool a2a_overlap) {
  // One stage runs 1F1B at pp = 1 (micro-batches one after another, the
  // gradient sync beside the last one's backward): 1F1B's 2 pp and 2 hold.
  SteadyState s;
  const int overlap = a2a_overlap ? 1 : 0;
  // Stage 0's interleaved warm-up, in groups of pp micro-batches through all vpp chunks (rounded up).
  const int warm_up_groups = (2 * (pp - 1) + (vpp - 1) * pp + overlap + vpp * pp - 1) / (vpp * pp);
  switch (schedule) {
    case PipelineSchedule::kOneFOneB: s = {2 * pp + 2 * overlap, 2}; break;
    case PipelineSchedule::kInterleaved: s = {(2 + warm_up_groups) * pp, pp}; break;
    case PipelineSchedule::kDualPipe: s = {2 * pp + 2, 2}; break;
    case PipelineSchedule::kGpipe: return std::nullopt;
  }
  if (2 * s.first + s.delta >= micro_batches) return std::nullopt;
  return s;
}

}  // namespace epsim::workloads
