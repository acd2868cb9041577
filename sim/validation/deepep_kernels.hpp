// DeepEP's normal dispatch and combine kernels, timed by the replay itself:
// a task graph of one dispatch and one combine, run as the hierarchical
// alltoallv `epsim run` uses (plan_alltoallv, the replay's pipelined
// rounds), so that validation and runs share one communication model.
#pragma once

#include "sim/platform/npu_platform.hpp"
#include "sim/platform/sim_engine.hpp"
#include "sim/replay/replay.hpp"
#include "sim/validation/deepep_bytes.hpp"
#include "workloads/task_graph.hpp"

namespace epsim::sim {

// Dispatch (task 0) of `traffic` at dispatch_moved bytes per token, then
// combine (task 1, transposed) at combine_moved, nothing else.
workloads::TaskGraph deepep_kernel_graph(const workloads::TrafficMatrix& traffic, const DeepEpTokenBytes& token_bytes);

// How DeepEP's kernels run: normal is hierarchical (in one node that is the
// direct exchange), every round one parallel task, the two stages
// pipelined in `pipeline_chunks` chunks; `flat` normal (a supernode: every
// rank one hop from every other through the switch) is the direct
// exchange at every EP; low-latency is the replay's low-latency alltoallv
// (one round, one message per selection). Combine ends with its reduction
// (collectives.hpp) in each.
ReplayOptions deepep_replay_options(int pipeline_chunks, DeepEpKernel kernel = DeepEpKernel::kNormal,
                                    bool flat = false);

struct DeepEpTimes {
  double dispatch_s = 0;  // kernel time: first byte sent to last byte received, all ranks
  double combine_s = 0;
};

// The kernel times of deepep_kernel_graph(traffic, token_bytes) replayed
// with deepep_replay_options(pipeline_chunks) on the first traffic.ranks
// NPUs (traffic.ranks_per_node per node). May be called again on the same
// engine (e.g. after changing link bandwidths). Throws InputError when the
// ranks do not fit the platform.
DeepEpTimes time_deepep_kernels(SimEngine& engine, const LoadedPlatform& platform,
                                const workloads::TrafficMatrix& traffic, const DeepEpTokenBytes& token_bytes,
                                int pipeline_chunks, DeepEpKernel kernel = DeepEpKernel::kNormal, bool flat = false);

// Bytes that cross the network and the links inside nodes per rank in
// dispatch (normal: network = the plan's inter-node stage, the rest
// intra-node; flat: every message is scale-up, network 0; low-latency:
// messages between nodes and inside one, at the NIC's own rate), means
// over ranks; combine moves the same tokens back at combine_moved.
struct DeepEpMovedTokens {
  double network_tokens_per_rank = 0;
  double intra_node_tokens_per_rank = 0;
};
DeepEpMovedTokens deepep_moved_tokens(const workloads::TrafficMatrix& traffic, const PlatformFacts& platform,
                                      DeepEpKernel kernel = DeepEpKernel::kNormal, bool flat = false);

}  // namespace epsim::sim
