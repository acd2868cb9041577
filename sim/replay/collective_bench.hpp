// One collective alone on a platform, timed by the replay itself: a task
// graph of that one collective, replayed as `epsim run` replays its
// dispatch and gradient sync (plan_alltoallv, plan_group_collective), so
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
#include "workloads/workload_spec.hpp"

namespace epsim::sim {

enum class CollectiveOp {
  kAllToAll,       // every rank sends bytes/n to every rank (itself included: that part does not move)
  kAllToAllv,      // a dispatch of a sampled routing (alltoallv_graph)
  kAllReduce,      // every rank all-reduces a buffer of `bytes`
  kReduceScatter,  // every rank holds `bytes` and ends with bytes/n of the sum
  kAllGather,      // every rank holds bytes/n and ends with all `bytes`
};
// nccl-tests' names: "alltoall", "alltoallv", "allreduce", "reducescatter", "allgather".
const char* to_string(CollectiveOp op);

// nccl-tests' bus-bandwidth factor for `ranks` ranks (its docs/PERFORMANCE.md):
// all-reduce 2(n-1)/n; reduce-scatter, all-gather and all-to-all (n-1)/n
// (alltoallv as all-to-all).
double bus_factor(CollectiveOp op, int ranks);
// The factor as a formula: "2(n-1)/n" or "(n-1)/n".
const char* bus_factor_formula(CollectiveOp op);

// The one-task graph of `op` (any but kAllToAllv) over `ranks` ranks,
// `ranks_per_node` per node, `bytes` per rank as nccl-tests counts its size
// S: the bytes each rank sends in total (all-to-all), the buffer (all-reduce),
// the whole array, n x each rank's share (reduce-scatter, all-gather).
// All-to-all is a dispatch whose traffic is one "token" of bytes / ranks per
// (source, destination) pair; the others one group of all ranks.
workloads::TaskGraph collective_graph(CollectiveOp op, int ranks, int ranks_per_node, double bytes);

// The one-task graph of a dispatch of `traffic` at `bytes_per_token` per
// (token, destination rank).
workloads::TaskGraph alltoallv_graph(const workloads::TrafficMatrix& traffic, double bytes_per_token);

// A routing for an alltoallv: the first MoE layer's traffic of `w` drawn
// by the workload's routing sampler (one micro-batch, one DP replica), and
// the workload's dispatch bytes per token.
struct SampledAlltoallv {
  workloads::TrafficMatrix traffic;
  double bytes_per_token = 0;
  std::int64_t tokens_per_rank = 0;
};
SampledAlltoallv sample_alltoallv(workloads::WorkloadSpec w);

struct CollectiveTiming {
  double bytes = 0;    // S, per rank (alltoallv: the mean over ranks of what each sends, itself included)
  double time_s = 0;   // first byte sent to last byte received, all ranks
  double bound_s = 0;  // plan_bound_s: latency + bytes at each round's bottleneck, phases in sequence
  double algbw_Bps = 0;  // S / time
  double busbw_Bps = 0;  // algbw x bus_factor
  double moved_bytes = 0;  // bytes the plan's transfers carry between NPUs, all ranks and steps
  std::string algorithm;  // what ran: direct/hierarchical (all-to-all), ring/hierarchical (the others)
  std::string fidelity;
  std::int64_t activities = 0;  // SimGrid activities started
};

// Replays collective_graph(op, ranks, ranks_per_node, bytes) on the first
// `ranks` NPUs with `options` (resolved for the platform and placement as
// run resolves them). May be called again on the same engine (each call's
// times count from its start). Throws InputError when the ranks do not fit.
CollectiveTiming time_collective(SimEngine& engine, const LoadedPlatform& platform, CollectiveOp op, int ranks,
                                 int ranks_per_node, double bytes, const ReplayOptions& options);

// The same for a one-task graph of collective_graph() or alltoallv_graph();
// `op` names it for the bus factor, and for alltoallv S is the mean bytes
// per rank of its traffic (itself included), as all-to-all's S counts them.
CollectiveTiming time_collective_graph(SimEngine& engine, const LoadedPlatform& platform, CollectiveOp op,
                                       const workloads::TaskGraph& graph, const ReplayOptions& options);

}  // namespace epsim::sim
