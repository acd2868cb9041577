// The rules a layout and its batch obey beyond its rank groups
// (parallel_layout.hpp's), each stated once: the workload loader reports
// them at the keys a workload gives, and `epsim plan` skips the layouts
// that break them before loading any (app/plan_candidates.cpp).
#pragma once

#include <cstdint>
#include <optional>

#include "workloads/parallel_layout.hpp"
#include "workloads/workload_spec.hpp"

namespace epsim::workloads {

// Micro-batches per step the loader accepts.
inline constexpr int kMaxMicroBatches = 1024;

// An EP group fills whole nodes: ranks_per_node divides ep (key "ranks_per_node").
std::optional<LayoutProblem> check_ep_fills_nodes(int ep, int ranks_per_node);

// The global batch is micro_batch x dp sequences times a number of
// micro-batches in [1, kMaxMicroBatches] (key "global_batch").
std::optional<LayoutProblem> check_global_batch(std::int64_t global_batch, std::int64_t micro_batch, int dp);

// What the schedule asks of the micro-batches per step: DualPipe an even
// pp and an even number, at least 2 x pp (half enter at each end);
// interleaved a multiple of pp. Key "pp", or "micro_batches" for the batch
// (the loader names the batch key the workload gave).
std::optional<LayoutProblem> check_schedule_batch(PipelineSchedule schedule, int pp, std::int64_t micro_batches);

}  // namespace epsim::workloads
