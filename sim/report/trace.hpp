// A Chrome trace (JSON) of a replay that Perfetto and chrome://tracing open:
// one process per node, one track per NPU stream (its rank in the track's
// metadata), tasks named by layer, kind, phase and micro-batch, the bytes
// and peers of every communication slice, flow arrows along the replay's
// critical path, and utilisation counters for the busiest links and HBMs.
// The trace's "otherData" lists the task kinds' labels, so that readers
// (tools/plot_timeline.py) keep no copy of them. Fixed formatting:
// identical inputs, identical bytes.
#pragma once

#include <cstddef>
#include <ostream>
#include <vector>

#include "sim/platform/placement.hpp"
#include "sim/platform/platform_facts.hpp"
#include "sim/replay/timeline.hpp"
#include "workloads/task_graph.hpp"

namespace epsim::sim {

struct TraceOptions {
  int counter_links = 32;  // utilisation counters for this many most utilised network links ...
  int counter_hbms = 8;    // ... and this many most utilised HBM links (needs Timeline::link_spans)
  // The replay's critical path (GapParts::path_intervals, first to last),
  // drawn as flow arrows from each interval to the next; empty: none.
  std::vector<std::size_t> critical_path;
};

// "L3 attention fwd mb1", "gradient sync": how tasks are named in traces.
std::string task_label(const workloads::Task& task);

void write_trace(std::ostream& out, const Timeline& timeline, const PlatformFacts& platform,
                 const Placement& placement, const workloads::TaskGraph& graph, const TraceOptions& options = {});

}  // namespace epsim::sim
