// Replays a task graph on the loaded SimGrid platform: per NPU a compute
// stream and communication streams; a task starts when its dependencies are
// done and its stream is free. Returns what happened as a Timeline.
#pragma once

#include <optional>

#include "sim/replay/collectives.hpp"
#include "sim/platform/npu_platform.hpp"
#include "sim/platform/placement.hpp"
#include "sim/platform/sim_engine.hpp"
#include "sim/replay/timeline.hpp"
#include "workloads/task_graph.hpp"

namespace epsim::sim {

enum class Schedule {
  kSerial,   // one in-order stream per NPU: no overlap at all
  kOverlap,  // compute stream (lowest-id ready task first) + EP comm stream + DP comm stream
};
const char* to_string(Schedule s);

struct ReplayOptions {
  Schedule schedule = Schedule::kOverlap;
  // Dispatch/combine granularity; unset: default_granularity(ranks).
  std::optional<Granularity> granularity;
  AllReduceAlgorithm all_reduce = AllReduceAlgorithm::kHierarchical;
  // Ring steps as separate rounds (latency per step); unset: only with kPerFlow.
  std::optional<bool> exact_ring_steps;
  // Run a compute task as one parallel task for all ranks that start it at
  // the same instant with identical amounts; unset: when more than 8 ranks.
  std::optional<bool> fuse_identical_compute;
  bool record_link_spans = true;  // needed for trace counters; costs memory at large EP
};

// per-flow up to 8 ranks, aggregated up to 32, hierarchical beyond (docs/simulator.md).
Granularity default_granularity(int ranks);

// Options with every default resolved for `ranks` ranks.
ReplayOptions resolve(const ReplayOptions& options, int ranks);

// Runs the engine until the graph completes. Call once per SimEngine.
// Throws InputError for a graph that does not fit the platform, and
// std::runtime_error naming the task for a SimGrid failure mid-run.
Timeline replay(SimEngine& engine, const LoadedPlatform& platform, const Placement& placement,
                const workloads::TaskGraph& graph, const ReplayOptions& options);

}  // namespace epsim::sim
