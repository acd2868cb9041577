// Collectives as plans: sequences of phases of point-to-point transfers
// between NPUs. Plans are plain data; replay turns them into SimGrid
// activities at the chosen granularity, and bounds price them.
#pragma once

#include <string>
#include <vector>

#include "sim/platform/placement.hpp"
#include "sim/platform/platform_facts.hpp"
#include "workloads/task_graph.hpp"

namespace epsim::sim {

// How an alltoallv (dispatch/combine) becomes activities; see docs/simulator.md.
enum class Granularity {
  kPerFlow,       // one transfer per (src, dst) rank pair: exact max-min sharing between flows
  kAggregated,    // one parallel task for the whole collective: all flows progress at one rate
  kHierarchical,  // DeepEP-style: per (source, destination node) to the same local index, then
                  // forwarding inside the node; one parallel task per phase
};

enum class AllReduceAlgorithm {
  kRing,          // 2(g-1) steps of bytes/g to the next rank of the group
  kHierarchical,  // ring reduce-scatter in the node, ring all-reduce across nodes, ring all-gather in the node
};

const char* to_string(Granularity g);
const char* to_string(AllReduceAlgorithm a);

struct Transfer {
  int src_npu = 0;
  int dst_npu = 0;
  double bytes = 0;
};

// `steps` identical rounds of `transfers`, one after the other.
struct CollectivePhase {
  std::string name;  // "alltoallv", "inter-node", "intra-node", "ring", ...
  std::vector<Transfer> transfers;
  int steps = 1;
  bool per_transfer = false;  // true: one activity per transfer; false: one parallel task per round
  bool per_step = true;       // false: the steps run as one round carrying steps x the bytes (latency paid once)
};

struct CollectivePlan {
  std::vector<CollectivePhase> phases;  // run one after the other
  std::vector<int> participants;        // NPU indices, ascending
};

// Dispatch or combine (task.transpose) as planned transfers. Tokens a rank
// routes to its own experts do not move. Throws InputError when the traffic
// matrix does not match the placement.
CollectivePlan plan_alltoallv(const workloads::Task& task, const workloads::TrafficMatrix& traffic,
                              const Placement& placement, Granularity granularity);

// A gradient all-reduce: each group all-reduces task.bytes per rank. With
// `exact_steps`, every ring step is its own round (latency per step);
// otherwise each phase is one round. Groups must have equal sizes (InputError).
CollectivePlan plan_all_reduce(const workloads::Task& task, const Placement& placement, AllReduceAlgorithm algorithm,
                               bool exact_steps);

// The duration of one round of `phase` alone on an idle platform, as the
// engine computes it: latency (the largest route latency for a parallel
// task; per transfer otherwise) plus the transfer time at the bottleneck.
struct RoundCost {
  double latency_s = 0;
  double transfer_s = 0;  // time the bytes need once latency is paid
  double total_s() const { return latency_s + transfer_s; }
};
RoundCost round_cost(const CollectivePhase& phase, const PlatformFacts& platform);

// Lower bound on the plan's duration: the sum over phases of rounds x round cost.
double plan_bound_s(const CollectivePlan& plan, const PlatformFacts& platform);

// Bytes each link carries over the whole plan, added to `link_bytes` (size = links).
void add_link_bytes(const CollectivePlan& plan, const PlatformFacts& platform, std::vector<double>& link_bytes);

}  // namespace epsim::sim
