// Collectives as plans: sequences of phases of point-to-point transfers
// between NPUs. Plans are plain data; replay turns them into SimGrid
// activities at the chosen fidelity, and bounds price them.
#pragma once

#include <string>
#include <vector>

#include "sim/platform/placement.hpp"
#include "sim/platform/platform_facts.hpp"
#include "workloads/task_graph.hpp"

namespace epsim::sim {

// What the system does for an alltoallv (dispatch/combine); see docs/simulator.md.
enum class AlltoallAlgorithm {
  kDirect,        // every (src, dst) rank pair exchanges its tokens directly
  kHierarchical,  // DeepEP-style: per (source, destination node) to the rank with the source's local
                  // index there, then forwarding inside the node; the two stages pipelined in chunks
  kLowLatency,    // DeepEP-style low-latency: one message per (token, selected expert) straight to the
                  // expert's rank, no deduplication, no relay; across nodes at the NIC's low-latency rate
};

// How finely the simulator times a phase; see docs/simulator.md.
enum class Fidelity {
  kPerFlow,     // one activity per transfer: exact max-min sharing between flows
  kAggregated,  // one parallel task per round of a phase: all its flows progress at one rate
};

// How group collectives (all-reduce, reduce-scatter, all-gather) run.
enum class AllReduceAlgorithm {
  kRing,          // all-reduce: 2(g-1) steps of bytes/g to the next rank of the group (the others: g-1)
  kHierarchical,  // ring reduce-scatter in the node, ring all-reduce across nodes, ring all-gather in the node
  // Hierarchical on a full-mesh node fabric (HCCL's mesh algorithms): in the
  // node each rank exchanges its 1/L shard with every peer at once, one
  // round per pass over all L-1 links; across nodes a ring, as hierarchical.
  kMesh,
};

const char* to_string(AlltoallAlgorithm a);
const char* to_string(Fidelity f);
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
  // Paid with the latency (once per round that pays it): a normal
  // dispatch/combine kernel's per-peer cost x the most peers any rank sends
  // to or receives from in the phase, plus its launch cost on its first
  // phase (KernelCosts; 0 elsewhere).
  double setup_s = 0;
  // Once its latency is paid, a round lasts at least floor_s x its share:
  // the time a normal kernel's cores take to copy the busiest NPU's bytes
  // at its copy rate (KernelCosts; 0 elsewhere). A control phase's duration.
  double floor_s = 0;
  // The low-latency kernel's control path (launch + peers x cost), beside
  // its copies: no transfers, one round of floor_s from the collective's
  // start; the collective ends no earlier (plan_steps()).
  bool control = false;
};

struct CollectivePlan {
  // pipeline_chunks == 1: phases run one after the other, each round paying
  // its latency. > 1 (two phases of one step each): the phases are the
  // stages of a pipeline, each cut into that many equal chunks run back to
  // back, chunk c of the second stage starting when chunk c of the first
  // has ended, and each stage paying its latency once, before its first
  // chunk (later chunks' latency hides behind earlier chunks' bytes, as
  // kernels keep several chunks in flight). plan_steps() says how that
  // runs with four activities instead of 2 x chunks. Phases after the two
  // stages (combine's reduction) run once the pipeline has ended.
  std::vector<CollectivePhase> phases;
  std::vector<int> participants;  // NPU indices, ascending
  int pipeline_chunks = 1;
  // The collective library's cost per call (KernelCosts' collective_launch
  // and collective_peer_cost: NCCL's launch and protocol setup), paid once
  // before the first round: plan_steps() delays its first step by it.
  double launch_s = 0;
};

struct AlltoallvOptions {
  AlltoallAlgorithm algorithm = AlltoallAlgorithm::kDirect;
  Fidelity fidelity = Fidelity::kAggregated;
  // Hierarchical only: chunks the two stages are cut into (1 = no
  // pipelining). DeepEP moves 6..36 tokens per chunk per channel and peer
  // (Buffer.get_dispatch_config), i.e. tens of chunks per peer; 32 leaves a
  // pipeline fill of 1/32 of a stage.
  int pipeline_chunks = 32;
  // Low-latency only: the rate its per-selection writes reach over the rate
  // of the links they cross (scaleout.low_latency_efficiency / nic_efficiency
  // between nodes; the node fabric's or supernode port's share inside one):
  // a transfer carries its bytes / this share on its route.
  double low_latency_nic_share = 1;
  double low_latency_node_share = 1;
  // What the dispatch/combine kernels cost beyond their bytes (the
  // platform's [kernels]): launch and per-peer costs before a normal
  // kernel's copies (setup_s), its copy rates (floor_s), one message per
  // selection, the low-latency control path (a control phase).
  KernelCosts kernels = {};
};

// Dispatch or combine (task.transpose) as planned transfers. Tokens a rank
// routes to its own experts do not move. Low-latency (and the direct
// exchange with kernels.per_selection) sends each source
// rank's traffic.selections_per_rank selections, split over destinations
// in proportion to its tokens for them (traffic.tokens counts a token once
// per destination rank). Dispatch and combine tasks carry options.kernels'
// costs (docs/simulator.md, "Kernel mechanisms"). A combine (TaskKind::kCombine) ends with its
// reduction: a phase "combine reduction" of HBM loopback transfers, at
// each token's owner the inputs it reads (one per (token, destination
// rank), its own included; low-latency: one per selection) plus one output
// per token (traffic.tokens_per_rank), at task.bytes_per_token. Throws InputError when pipeline_chunks < 1 or
// when low-latency meets traffic without selection counts, and
// InternalError when the traffic matrix does not match the placement (our
// builder makes them match).
CollectivePlan plan_alltoallv(const workloads::Task& task, const workloads::TrafficMatrix& traffic,
                              const Placement& placement, const AlltoallvOptions& options);

// The plan of any collective of `graph`: an all-reduce, or an alltoallv
// over its traffic's ranks (Task::groups[0] when set). A pipeline
// point-to-point transfer always goes direct: relaying it through a node's
// peers would only add hops. Every collective the library runs (group
// collectives, pipeline transfers, the framework's all-to-all; not
// DeepEP's kernels, which carry their own costs) pays the library's cost
// per call, launch_s: alltoallv.kernels' collective_launch, and for an
// exchange (all-to-all, pipeline transfer) its most peers x
// collective_peer_cost.
CollectivePlan plan_collective(const workloads::Task& task, const workloads::TaskGraph& graph,
                               const Placement& placement, AllReduceAlgorithm all_reduce, bool exact_ring_steps,
                               AlltoallvOptions alltoallv);

// A gradient all-reduce: each group all-reduces task.bytes per rank (mesh:
// the mesh reduce-scatter, then the mesh all-gather, below). With
// `exact_steps`, every ring step is its own round (latency per step);
// otherwise each phase is one round. Groups must have equal sizes and distinct
// ranks (InternalError otherwise: our builder makes them so).
CollectivePlan plan_all_reduce(const workloads::Task& task, const Placement& placement, AllReduceAlgorithm algorithm,
                               bool exact_steps);

// A reduce-scatter: each group's ranks hold task.bytes (S, the whole array
// as nccl-tests counts it) and each ends with its S/g, summed over the
// group. Ring: g-1 steps of S/g. Hierarchical (groups spanning several
// nodes with the same count on each, else a ring): a ring in the node
// (per_node-1 steps of S/per_node), then rings across nodes between ranks
// of one local index (nodes-1 steps of S/g). Mesh: the in-node part is one
// round in which every member sends S/per_node to each other member of its
// node (a group inside one node: S/g to each peer, one round); across nodes
// as hierarchical. Checks as plan_all_reduce.
CollectivePlan plan_reduce_scatter(const workloads::Task& task, const Placement& placement,
                                   AllReduceAlgorithm algorithm, bool exact_steps);

// An all-gather: each rank holds S/g and ends with all S (nccl-tests' S).
// Ring: g-1 steps of S/g. Hierarchical: rings across nodes first (nodes-1
// steps of S/g), then in the node (per_node-1 steps of S/per_node). Mesh:
// the in-node part one round of S/per_node to every peer of the node.
CollectivePlan plan_all_gather(const workloads::Task& task, const Placement& placement, AllReduceAlgorithm algorithm,
                               bool exact_steps);

// The plan of a kGradAllReduce task: by task.group_op, one of the three above.
CollectivePlan plan_group_collective(const workloads::Task& task, const Placement& placement,
                                     AllReduceAlgorithm algorithm, bool exact_steps);

// Whether the node fabric under `placement` is a full mesh: every pair of
// the first node's ranks has a link on its route that no other pair's route
// uses (HCCS on an Atlas 800T A2); false for a switch (NVSwitch, UB), one
// rank per node, or a node of one NPU. resolve() (replay.hpp) turns the
// default kHierarchical into kMesh there.
bool node_fabric_is_mesh(const PlatformFacts& platform, const Placement& placement);

// Latency of the route src -> dst: the sum of its links' latencies (as SimGrid sums them).
double route_latency_s(const PlatformFacts& platform, int src, int dst);

// The duration of one round of `phase` alone on an idle platform, as the
// engine computes it: latency (the largest route latency for a parallel
// task; per transfer otherwise) plus the transfer time at the bottleneck,
// at least the phase's floor_s (its kernel's copies). A round carrying
// several steps (per_step false) pays its route latency once per step, as
// its steps would one after the other (a ring's step waits for the last).
// `share` scales every transfer's bytes (a pipeline chunk); without
// `latency` the round pays none (a pipeline chunk after the first).
struct RoundCost {
  double latency_s = 0;
  double transfer_s = 0;  // time the bytes need once latency is paid
  double total_s() const { return latency_s + transfer_s; }
};
RoundCost round_cost(const CollectivePhase& phase, const PlatformFacts& platform, double share = 1.0,
                     bool latency = true);

// round_cost of a plan's phases at any share, each phase priced once: one
// parallel task's transfer time is its bottleneck link's bytes over its
// bandwidth, linear in the share, and its latency does not depend on it.
// Per-transfer rounds (the slowest transfer alone may bind) are priced anew.
class RoundCosts {
 public:
  RoundCosts(const CollectivePlan& plan, const PlatformFacts& platform);
  RoundCost at(std::size_t phase, double share, bool latency) const;

 private:
  const CollectivePlan& plan_;
  const PlatformFacts& platform_;
  std::vector<RoundCost> unit_;
};

// What the replay runs for a plan: steps, each one round of `phase` with
// every transfer at `share` of its bytes, paying its latency or not,
// started when the steps `after` have ended. One after the other: every
// round of every phase in order. Pipelined in C chunks, with t1, t2 the
// times of one chunk of each stage alone (round_cost): the first chunk of
// stage 1; then its other C-1 chunks beside stage 2, of which, when
// t1 >= t2, the first C-1 chunks and then the last once stage 1 has ended
// (when t1 < t2 all of it: it never catches up with stage 1). On an idle
// platform whose stages use disjoint links that takes exactly what the
// chunk-by-chunk pipeline takes, L1 + t1 + max((C-1) t1 + t2, L2 + C t2),
// with 3 or 4 activities instead of 2C (docs/simulator.md). A control
// phase is one step from the start, beside all others.
struct PlanStep {
  std::size_t phase = 0;
  double share = 1;
  bool latency = true;
  std::vector<std::size_t> after;  // indices of earlier steps
  double delay_s = 0;              // waited before the round starts: the plan's launch_s on its first step
};
std::vector<PlanStep> plan_steps(const CollectivePlan& plan, const PlatformFacts& platform);
// The same with the plan's costs priced already.
std::vector<PlanStep> plan_steps(const CollectivePlan& plan, const RoundCosts& costs);

// Lower bound on the plan's duration, exact for a plan alone whose phases
// use disjoint links: the longest chain of plan_steps() at their round
// costs (one after the other: the sum of rounds x round cost; pipelined:
// the chunk-by-chunk flow shop's makespan, tested).
double plan_bound_s(const CollectivePlan& plan, const PlatformFacts& platform);
// The same for `steps` = plan_steps(plan, ...) and `costs` of plan, which the replay has made already.
double plan_bound_s(const std::vector<PlanStep>& steps, const RoundCosts& costs);

// Bytes each link carries over the whole plan, added to `link_bytes` (size = links).
void add_link_bytes(const CollectivePlan& plan, const PlatformFacts& platform, std::vector<double>& link_bytes);

}  // namespace epsim::sim
