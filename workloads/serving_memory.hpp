// What one rank holds in HBM during a serving step (docs/serving.md):
// weights for inference (no gradients, no optimizer state), the KV cache of
// its sequences and the step's transient buffers, as named terms like the
// training step's (memory_fit.hpp), and the largest batch that fits.
#pragma once

#include <cstdint>

#include "workloads/memory_fit.hpp"
#include "workloads/workload_spec.hpp"

namespace epsim::workloads {

// The terms of a rank of serving workload `w` (w.serving must be set).
MemoryBreakdown serving_memory_per_rank(const WorkloadSpec& w);

// The rank's weights (the breakdown's dense and expert weight terms), bytes.
double serving_weight_bytes(const WorkloadSpec& w);

// The largest serving.batch (a multiple of serving.micro_batches) whose
// rank fits `capacity_bytes`; 0 when not even the weights and one
// micro-batch's sequences fit.
std::int64_t largest_serving_batch(const WorkloadSpec& w, double capacity_bytes);

}  // namespace epsim::workloads
