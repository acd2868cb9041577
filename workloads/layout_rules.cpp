// The layout's batch and node rules, with the messages the loader reports.
#include "workloads/layout_rules.hpp"

#include <fmt/format.h>

namespace epsim::workloads {

std::optional<LayoutProblem> check_ep_fills_nodes(int ep, int ranks_per_node) {
  if (ep % ranks_per_node == 0) return std::nullopt;
  return LayoutProblem{"ranks_per_node", fmt::format("must divide parallel.ep ({}), got {}", ep, ranks_per_node)};
}

std::optional<LayoutProblem> check_global_batch(std::int64_t global_batch, std::int64_t micro_batch, int dp) {
  const std::int64_t per_micro_batch = micro_batch * dp;
  if (global_batch % per_micro_batch == 0 && global_batch / per_micro_batch <= kMaxMicroBatches) return std::nullopt;
  return LayoutProblem{"global_batch", fmt::format("must be micro_batch x dp = {} x {} times a number of micro-batches "
                                                   "in [1, {}], got {}",
                                                   micro_batch, dp, kMaxMicroBatches, global_batch)};
}

std::optional<LayoutProblem> check_schedule_batch(PipelineSchedule schedule, int pp, std::int64_t micro_batches) {
  if (schedule == PipelineSchedule::kDualPipe && (pp % 2 != 0 || micro_batches % 2 != 0 || micro_batches < 2 * pp))
    return LayoutProblem{pp % 2 != 0 ? "pp" : "micro_batches",
                         fmt::format("\"dualpipe\" needs an even pp (got {}) and an even number of micro-batches per "
                                     "step, at least 2 x pp = {} (got {}): half enter at each end of the pipeline",
                                     pp, 2 * pp, micro_batches)};
  if (schedule == PipelineSchedule::kInterleaved && micro_batches % pp != 0)
    return LayoutProblem{"micro_batches",
                         fmt::format("the interleaved schedule needs micro-batches per step ({}) to be a multiple of "
                                     "pp ({})",
                                     micro_batches, pp)};
  return std::nullopt;
}

}  // namespace epsim::workloads
