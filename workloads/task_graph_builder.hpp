// Builds the SPMD task graph of one training step: forward per layer and
// micro-batch, the output head, backward in reverse, gradient sync and the
// optimizer. Task contents and formulas: docs/workload.md.
#pragma once

#include "workloads/routing_stream.hpp"
#include "workloads/task_graph.hpp"
#include "workloads/workload_spec.hpp"

namespace epsim::workloads {

// The step for `w` with the routing drawn in `routing` (which must come
// from sample_routing(w)). Every micro-batch is its own dependency chain,
// so a simulator may overlap one micro-batch's all-to-alls with another's
// compute; tasks are listed layer by layer, micro-batches interleaved.
// TaskGraph::traffic[moe_layer * micro_batches + micro_batch] is the
// sampled traffic of that MoE layer and micro-batch.
TaskGraph build_task_graph(const WorkloadSpec& w, const RoutingSample& routing);

// Sets the amounts of every task of routing job `job` (Task::routing) and
// traffic[job] from `routing`, for a graph built from
// RoutingStream::placeholder() while the routing was being drawn: once
// every job is in, the graph equals the one built from the whole sample.
void fill_routing(TaskGraph& graph, const WorkloadSpec& w, int job, LayerRouting routing);

// Samples the routing, then builds the graph.
TaskGraph build_task_graph(const WorkloadSpec& w);

}  // namespace epsim::workloads
