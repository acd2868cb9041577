// Replays a task graph on the loaded SimGrid platform: per NPU a compute
// stream and communication streams; a task starts when its dependencies are
// done and its stream is free. Returns what happened as a Timeline.
#pragma once

#include <functional>
#include <optional>
#include <string>

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
  // What dispatch/combine do; unset: default_algorithm(platform, placement).
  std::optional<AlltoallAlgorithm> algorithm;
  // A decode step's latency-bound all-to-alls: with DeepEP's kernels and no
  // algorithm given, its low-latency ones (DeepSeek decodes with them).
  bool decode = false;
  // How finely they are timed; unset: per-flow up to 8 ranks, aggregated
  // beyond. Per-flow is refused beyond kMaxPerFlowRanks (see resolve()).
  std::optional<Fidelity> fidelity;
  // Hierarchical dispatch/combine: chunks its two stages are pipelined in
  // (1: the intra-node stage starts when the whole network stage ends).
  int pipeline_chunks = AlltoallvOptions{}.pipeline_chunks;
  // Group collectives (gradient sync, TP); resolve() turns kHierarchical
  // into kMesh on a full-mesh node fabric (node_fabric_is_mesh()).
  AllReduceAlgorithm all_reduce = AllReduceAlgorithm::kHierarchical;
  // Low-latency dispatch/combine: its RDMA rate over the NIC link's; unset:
  // the platform's (NpuFacts::low_latency_nic_share of the first rank's NPU).
  std::optional<double> low_latency_nic_share;
  // The same inside a node; unset: NpuFacts::low_latency_node_share.
  std::optional<double> low_latency_node_share;
  // What dispatch/combine kernels cost beyond their bytes; unset: the
  // platform's (NpuFacts::kernels of the first rank's NPU).
  std::optional<KernelCosts> kernels;
  // Ring steps as separate rounds (latency per step); unset: only with per-flow.
  std::optional<bool> exact_ring_steps;
  // Run a compute task as one parallel task for all ranks that start it at
  // the same instant with identical amounts; unset: when more than 8 ranks.
  std::optional<bool> fuse_identical_compute;
  // Aggregated dispatch/combine rounds carry solver stand-ins
  // (solver_transfers()) while no other collective loads their links: the
  // same times with far fewer SimGrid constraints. false: every round
  // carries its own transfers (tests compare the two).
  bool solver_stand_ins = true;
  // A compute part whose NPUs nothing else loads (no collective round's
  // transfers or held compute, no other kernel) runs outside SimGrid's
  // solver, timed by the rate the solver gives a lone activity; it becomes
  // a SimGrid activity with its remaining work when something starts to
  // share its NPU. The same times (to rounding) at a fraction of the
  // solver's work. false: every part is a SimGrid activity (tests compare
  // the two).
  bool alone_kernels = true;
  bool record_link_spans = true;  // needed for trace counters; costs memory at large EP
  // The workload's precision.gemm_fallback: the dtype whose peak a compute
  // kernel runs at when its NPU lacks the kernel's dtype; unset: such a
  // kernel is an error (check_compute_dtypes()).
  std::optional<workloads::Dtype> compute_fallback;
  // Called every few thousand ended activities while the replay runs: its
  // simulated time (s) and the share of (task, rank) parts done, in [0, 1].
  std::function<void(double sim_s, double done)> on_progress;
};

// Hierarchical where the placement spans several nodes and the route to
// the same local index in the next node has a lower bottleneck bandwidth
// than the route to the next NPU in the node (a scale-out tier under a
// faster scale-up fabric); direct otherwise: one node, one rank per node,
// or a scale-up fabric spanning nodes (a supernode), where relaying would
// only send every token over the same port twice.
AlltoallAlgorithm default_algorithm(const PlatformFacts& platform, const Placement& placement);

// Per-flow timing starts one activity per rank pair and collective; at 32
// ranks (992 flows per collective) a DeepSeek-V3 step did not finish in
// 150 s, so resolve() refuses it beyond this.
constexpr int kMaxPerFlowRanks = 16;

// Why per-flow fidelity is refused for `ranks` ranks, or "" when it is not.
std::string per_flow_refusal(int ranks);

// Options with every default resolved for this platform and placement.
// Throws InputError (key "fidelity") for per-flow beyond kMaxPerFlowRanks
// ranks and (key "pipeline_chunks") for fewer than 1 chunk.
ReplayOptions resolve(const ReplayOptions& options, const PlatformFacts& platform, const Placement& placement);

// The dispatch/combine options of resolved replay options.
AlltoallvOptions alltoallv_options(const ReplayOptions& resolved);

// Runs the engine until the graph completes; times in the Timeline count
// from the call (the engine's clock may have run before: a process may
// replay several graphs on one engine, as `epsim validate` does). Link
// latencies are 0 in SimGrid while it runs (the replay pays them, see
// PendingExec) and restored after. Resolves `options` itself.
// The graph must come from workloads::build_task_graph for placement's ranks:
// a graph breaking that contract (ids, dependencies, per-rank vectors,
// traffic indices) or a replay that stalls is a bug, InternalError. A SimGrid
// failure mid-run is std::runtime_error naming the task.
// With `plan_bounds`: per task, the plan_bound_s of each collective's plan
// as the replay made it (-1 for compute tasks), for step_bounds() to reuse.
// With `before_task`: called once per task before the replay first reads
// anything of it but its dependencies and groups, which may fill in the
// task's amounts in `graph` (simulate()'s RoutingFeed).
using TaskGate = std::function<void(workloads::TaskId)>;
Timeline replay(SimEngine& engine, const LoadedPlatform& platform, const Placement& placement,
                const workloads::TaskGraph& graph, const ReplayOptions& options,
                std::vector<double>* plan_bounds = nullptr, const TaskGate& before_task = {});

}  // namespace epsim::sim
