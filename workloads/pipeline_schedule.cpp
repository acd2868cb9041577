// 1F1B and interleaved 1F1B pass orders, as Megatron-Core's
// forward_backward_pipelining_{without,with}_interleaving order them.
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

}  // namespace

std::vector<std::vector<PipelinePass>> pipeline_order(PipelineSchedule schedule, int pp, int vpp, int micro_batches) {
  if (schedule != PipelineSchedule::kInterleaved) vpp = 1;
  std::vector<std::vector<PipelinePass>> out(static_cast<std::size_t>(pp));
  const int total = micro_batches * vpp;
  for (int s = 0; s < pp; ++s) {
    const int warmup = std::min(total, vpp == 1 ? pp - s - 1 : (pp - s - 1) * 2 + (vpp - 1) * pp);
    auto& order = out[static_cast<std::size_t>(s)];
    int f = 0, b = 0;
    while (f < warmup) order.push_back(virtual_pass(f++, true, s, pp, vpp));
    while (f < total) {
      order.push_back(virtual_pass(f++, true, s, pp, vpp));
      order.push_back(virtual_pass(b++, false, s, pp, vpp));
    }
    while (b < total) order.push_back(virtual_pass(b++, false, s, pp, vpp));
  }
  return out;
}

}  // namespace epsim::workloads
