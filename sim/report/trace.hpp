// A Chrome trace (JSON) of a replay that Perfetto and chrome://tracing open:
// one process per node, one track per NPU stream, tasks named by layer,
// kind, phase and micro-batch, and utilisation counters for the busiest
// links and HBMs. Fixed formatting: identical inputs, identical bytes.
#pragma once

#include <ostream>

#include "sim/platform/placement.hpp"
#include "sim/platform/platform_facts.hpp"
#include "sim/replay/timeline.hpp"
#include "workloads/task_graph.hpp"

namespace epsim::sim {

struct TraceOptions {
  int counter_links = 8;  // utilisation counters for this many most utilised network links ...
  int counter_hbms = 4;   // ... and this many most utilised HBM links (needs Timeline::link_spans)
};

// "L3 attention fwd mb1", "gradient sync": how tasks are named in traces.
std::string task_label(const workloads::Task& task);

void write_trace(std::ostream& out, const Timeline& timeline, const PlatformFacts& platform,
                 const Placement& placement, const workloads::TaskGraph& graph, const TraceOptions& options = {});

}  // namespace epsim::sim
