// One collective alone on a platform, timed by the replay itself: a task
// graph of that one collective, replayed as `epsim run` replays its
// dispatch and gradient all-reduce (plan_alltoallv, plan_all_reduce), so
// that `epsim collective` and runs share one communication model. Figures
// follow nccl-tests' definitions (docs/collective.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/platform/npu_platform.hpp"
#include "sim/platform/sim_engine.hpp"
#include "sim/replay/replay.hpp"
#include "workloads/task_graph.hpp"

namespace epsim::sim {

enum class CollectiveOp {
  kAllToAll,   // every rank sends bytes/n to every rank (itself included: that part does not move)
  kAllReduce,  // every rank all-reduces a buffer of `bytes`
};
const char* to_string(CollectiveOp op);

// nccl-tests' bus-bandwidth factor for `ranks` ranks (its docs/PERFORMANCE.md):
// all-reduce 2(n-1)/n, all-to-all (n-1)/n.
double bus_factor(CollectiveOp op, int ranks);

// The one-task graph of `op` over `ranks` ranks, `ranks_per_node` per node,
// `bytes` per rank as nccl-tests counts its buffer size S: the bytes each
// rank sends in total (all-to-all), the buffer all-reduced (all-reduce).
// All-to-all is a dispatch whose traffic is one "token" of bytes / ranks
// per (source, destination) pair.
workloads::TaskGraph collective_graph(CollectiveOp op, int ranks, int ranks_per_node, double bytes);

struct CollectiveTiming {
  double bytes = 0;    // S, per rank
  double time_s = 0;   // first byte sent to last byte received, all ranks
  double bound_s = 0;  // plan_bound_s: latency + bytes at each round's bottleneck, phases in sequence
  double algbw_Bps = 0;  // S / time
  double busbw_Bps = 0;  // algbw x bus_factor
  std::string algorithm;  // what ran: direct/hierarchical (all-to-all), ring/hierarchical (all-reduce)
  std::string fidelity;
  std::int64_t activities = 0;  // SimGrid activities started
};

// Replays collective_graph(op, ranks, ranks_per_node, bytes) on the first
// `ranks` NPUs with `options` (resolved for the platform and placement as
// run resolves them). May be called again on the same engine (each call's
// times count from its start). Throws InputError when the ranks do not fit.
CollectiveTiming time_collective(SimEngine& engine, const LoadedPlatform& platform, CollectiveOp op, int ranks,
                                 int ranks_per_node, double bytes, const ReplayOptions& options);

}  // namespace epsim::sim
