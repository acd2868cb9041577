// The task graph as JSON, for `epsim workload show --json` and for tools
// that read the graph without linking epsim.
#pragma once

#include <ostream>

#include "workloads/task_graph.hpp"

namespace epsim::workloads {

// Writes {"ranks", "ranks_per_node", "tasks": [...], "traffic": [...]}.
// Per-rank arrays are written in full; traffic matrices as row-major
// "tokens" and "node_tokens" arrays. Field names follow task_graph.hpp.
void write_task_graph_json(std::ostream& out, const TaskGraph& graph);

}  // namespace epsim::workloads
