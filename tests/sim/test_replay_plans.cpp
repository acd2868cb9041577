// Pure parts of the replay (no SimGrid engine): placement, collective plans
// and their idle-platform cost, as small tables.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "core/error.hpp"
#include "sim/replay/activities.hpp"
#include "sim/replay/collectives.hpp"
#include "sim/replay/replay.hpp"
#include "sim/platform/placement.hpp"
#include "sim_test_support.hpp"

using namespace epsim;
using namespace epsim::sim;

namespace {

// `nodes` x `per_node` NPUs; every route is src HBM, one 10 GB/s link (1 us), dst HBM.
PlatformFacts grid(int nodes, int per_node) {
  PlatformFacts p = testing::hbm_facts(nodes, per_node);
  const int n = nodes * per_node;
  p.routes = RouteTable(n);
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d) {
      if (s == d) {
        p.routes.set(s, d, {s}, 0);
        continue;
      }
      p.links.push_back({fmt::format("{}-{}", s, d), 1e10, 1e-6, true});
      p.routes.set(s, d, {s, static_cast<int>(p.links.size()) - 1, d}, 1e-6);
    }
  return p;
}

// Bytes per link of `transfers` over their routes (a loopback loads the HBM alone).
std::vector<double> link_load(const std::vector<Transfer>& transfers, const PlatformFacts& p) {
  std::vector<double> load(p.links.size(), 0.0);
  for (const Transfer& t : transfers) {
    auto [first, last] = p.routes.links(t.src_npu, t.dst_npu);
    for (const int* l = first; l != last; ++l) load[*l] += t.bytes;
  }
  return load;
}

double total_bytes(const CollectivePhase& phase) {
  double b = 0;
  for (const Transfer& t : phase.transfers) b += t.bytes;
  return b;
}

}  // namespace

TEST_CASE("placement puts rank r on node r / ranks_per_node and rejects jobs that do not fit") {
  PlatformFacts p = grid(2, 4);
  Placement ok = place_ranks(4, 2, p);
  CHECK(ok.npu_of_rank == std::vector<int>{0, 1, 4, 5});
  struct Bad {
    int ranks, per_node;
    const char* message;
  };
  for (const Bad& b : {Bad{8, 8, "8 ranks per node but the platform's nodes have 4 NPUs"},
                       Bad{12, 4, "need 3 nodes; the platform has 2"}, Bad{6, 4, "not a multiple of 4"}}) {
    INFO(b.message);
    CHECK_THROWS_WITH(place_ranks(b.ranks, b.per_node, p), Catch::Contains(b.message));
  }
}

TEST_CASE("alltoallv plans: direct pairs without self traffic, combine transposed, hierarchical per node") {
  PlatformFacts p = grid(2, 2);
  Placement place = place_ranks(4, 2, p);
  std::vector<std::int32_t> tokens(16);
  for (int i = 0; i < 16; ++i) tokens[i] = i + 1;  // tokens[s * 4 + d]
  workloads::TaskGraph g = testing::one_dispatch(4, 2, tokens, 10);
  const workloads::Task& dispatch = g.tasks[0];
  CollectivePlan direct = plan_alltoallv(dispatch, g.traffic[0], place, AlltoallvOptions{AlltoallAlgorithm::kDirect, Fidelity::kAggregated});
  REQUIRE(direct.phases.size() == 1);
  CHECK(direct.phases[0].transfers.size() == 12);
  CHECK(total_bytes(direct.phases[0]) == Approx(10.0 * (136 - (1 + 6 + 11 + 16))));
  workloads::Task combine = dispatch;
  combine.transpose = true;
  CollectivePlan back = plan_alltoallv(combine, g.traffic[0], place, AlltoallvOptions{AlltoallAlgorithm::kDirect, Fidelity::kPerFlow});
  CHECK(back.phases[0].per_transfer);
  // Placement is the identity here: combine moves tokens[dst * 4 + src] from src back to dst.
  for (const Transfer& t : back.phases[0].transfers) CHECK(t.bytes == 10.0 * tokens[t.dst_npu * 4 + t.src_npu]);
  CollectivePlan hier =
      plan_alltoallv(dispatch, g.traffic[0], place, AlltoallvOptions{AlltoallAlgorithm::kHierarchical, Fidelity::kAggregated});
  REQUIRE(hier.phases.size() == 2);
  CHECK(hier.pipeline_chunks == AlltoallvOptions{}.pipeline_chunks);
  CHECK(direct.pipeline_chunks == 1);
  CHECK(hier.phases[0].name == "inter-node");
  // Rank 0 (node 0, local 0) sends tokens for ranks 2 and 3 to rank 2 (node 1, local 0).
  CHECK(hier.phases[0].transfers[0].src_npu == place.npu_of_rank[0]);
  CHECK(hier.phases[0].transfers[0].dst_npu == place.npu_of_rank[2]);
  CHECK(hier.phases[0].transfers[0].bytes == Approx(10.0 * (3 + 4)));
  // Everything not staying on its rank is delivered: network bytes + forwarded bytes >= direct remote bytes.
  CHECK(total_bytes(hier.phases[0]) == Approx(10.0 * (3 + 4 + 7 + 8 + 9 + 10 + 13 + 14)));
}

TEST_CASE("all-reduce plans: ring of 2(g-1) steps of B/g; hierarchical in three phases") {
  PlatformFacts p = grid(2, 4);
  Placement place = place_ranks(8, 4, p);
  workloads::Task ar;
  ar.kind = workloads::TaskKind::kGradAllReduce;
  ar.groups = {{0, 1, 2, 3, 4, 5, 6, 7}};
  ar.bytes = 8e6;
  CollectivePlan ring = plan_all_reduce(ar, place, AllReduceAlgorithm::kRing, true);
  REQUIRE(ring.phases.size() == 1);
  CHECK(ring.phases[0].steps == 14);
  CHECK(ring.phases[0].transfers.size() == 8);
  CHECK(ring.phases[0].transfers[0].bytes == Approx(1e6));
  // One step alone: 1 us + 1 MB / 10 GB/s; 14 of them one after the other.
  CHECK(plan_bound_s(ring, p) == Approx(14 * (1e-6 + 1e6 / 1e10)));
  // As one round, the same time: each step's latency is still paid.
  CollectivePlan aggregated = plan_all_reduce(ar, place, AllReduceAlgorithm::kRing, false);
  CHECK(plan_bound_s(aggregated, p) == Approx(14 * 1e-6 + 14 * 1e6 / 1e10));
  CollectivePlan hier = plan_all_reduce(ar, place, AllReduceAlgorithm::kHierarchical, true);
  REQUIRE(hier.phases.size() == 3);
  CHECK(hier.phases[0].steps == 3);
  CHECK(hier.phases[0].transfers[0].bytes == Approx(2e6));
  CHECK(hier.phases[1].steps == 2);
  CHECK(hier.phases[1].transfers.size() == 8);  // 4 rings of 2 nodes, both directions
  CHECK(hier.phases[1].transfers[0].bytes == Approx(1e6));
  ar.groups = {{0, 1, 2}, {3, 4}};
  CHECK_THROWS_WITH(plan_all_reduce(ar, place, AllReduceAlgorithm::kRing, true), Catch::Contains("equal sizes"));
}

TEST_CASE("reduce-scatter and all-gather plans: ring of g-1 steps of S/g; hierarchical in two phases, mirrored") {
  PlatformFacts p = grid(2, 4);
  Placement place = place_ranks(8, 4, p);
  workloads::Task t;
  t.kind = workloads::TaskKind::kGradAllReduce;
  t.groups = {{0, 1, 2, 3, 4, 5, 6, 7}};
  t.bytes = 8e6;
  for (auto op : {workloads::GroupCollective::kReduceScatter, workloads::GroupCollective::kAllGather}) {
    t.group_op = op;
    CAPTURE(workloads::to_string(op));
    CollectivePlan ring = plan_group_collective(t, place, AllReduceAlgorithm::kRing, true);
    REQUIRE(ring.phases.size() == 1);
    CHECK(ring.phases[0].steps == 7);
    CHECK(ring.phases[0].transfers.size() == 8);
    CHECK(ring.phases[0].transfers[0].bytes == 1e6);
    // 7 steps of 1 us + 1 MB / 10 GB/s, or one round paying latency once.
    CHECK(plan_bound_s(ring, p) == Approx(7 * (1e-6 + 1e6 / 1e10)));
    CHECK(plan_bound_s(plan_group_collective(t, place, AllReduceAlgorithm::kRing, false), p) ==
          Approx(1e-6 + 7 * 1e6 / 1e10));
    CollectivePlan hier = plan_group_collective(t, place, AllReduceAlgorithm::kHierarchical, true);
    REQUIRE(hier.phases.size() == 2);
    // In the node: 3 steps of S/4 = 2 MB (4 per node); across nodes: 1 step of S/8 = 1 MB.
    const std::size_t in_node = op == workloads::GroupCollective::kReduceScatter ? 0 : 1;
    CHECK(hier.phases[in_node].steps == 3);
    CHECK(hier.phases[in_node].transfers.size() == 8);
    CHECK(hier.phases[in_node].transfers[0].bytes == 2e6);
    CHECK(hier.phases[1 - in_node].steps == 1);
    CHECK(hier.phases[1 - in_node].transfers.size() == 8);  // 4 rings of 2 nodes, both directions
    CHECK(hier.phases[1 - in_node].transfers[0].bytes == 1e6);
    // Each rank sends (g-1)/g x S in all, as nccl-tests' bus factor assumes: 8 ranks x 7 MB.
    double sent = 0;
    for (const CollectivePhase& phase : hier.phases)
      for (const Transfer& tr : phase.transfers) sent += tr.bytes * phase.steps;
    CHECK(sent == Approx(8 * 7e6));
  }
  t.group_op = workloads::GroupCollective::kAllReduce;
  CHECK(plan_group_collective(t, place, AllReduceAlgorithm::kRing, true).phases[0].steps == 14);
}

namespace {

// Bytes one rank sends over the whole plan, on average over its participants.
double sent_per_rank(const CollectivePlan& plan) {
  double sent = 0;
  for (const CollectivePhase& phase : plan.phases)
    for (const Transfer& tr : phase.transfers) sent += tr.bytes * phase.steps;
  return sent / static_cast<double>(plan.participants.size());
}

}  // namespace

TEST_CASE("ZeRO-1 moves the all-reduce's bytes: (n-1)/n S each for reduce-scatter and all-gather") {
  // One node of 8, and 2 nodes x 4 (hierarchical and mesh go two-level there).
  for (const auto& [nodes, per_node] : {std::pair{1, 8}, std::pair{2, 4}}) {
    PlatformFacts p = grid(nodes, per_node);
    Placement place = place_ranks(8, per_node, p);
    workloads::Task t;
    t.kind = workloads::TaskKind::kGradAllReduce;
    t.groups = {{0, 1, 2, 3, 4, 5, 6, 7}};
    t.bytes = 8e6;
    const double n = 8, S = t.bytes;
    for (auto algorithm : {AllReduceAlgorithm::kRing, AllReduceAlgorithm::kHierarchical, AllReduceAlgorithm::kMesh}) {
      CAPTURE(nodes, to_string(algorithm));
      t.group_op = workloads::GroupCollective::kReduceScatter;
      const double rs = sent_per_rank(plan_group_collective(t, place, algorithm, true));
      t.group_op = workloads::GroupCollective::kAllGather;
      const double ag = sent_per_rank(plan_group_collective(t, place, algorithm, true));
      t.group_op = workloads::GroupCollective::kAllReduce;
      const double ar = sent_per_rank(plan_group_collective(t, place, algorithm, true));
      CHECK(rs == Approx((n - 1) / n * S).epsilon(1e-12));
      CHECK(ag == Approx((n - 1) / n * S).epsilon(1e-12));
      CHECK(ar == Approx(2 * (n - 1) / n * S).epsilon(1e-12));
      CHECK(rs + ag == Approx(ar).epsilon(1e-12));
    }
  }
}

TEST_CASE("mesh plans: one round per pass in the node, every peer at once") {
  PlatformFacts p = grid(2, 4);
  Placement place = place_ranks(8, 4, p);
  workloads::Task t;
  t.kind = workloads::TaskKind::kGradAllReduce;
  t.groups = {{0, 1, 2, 3}, {4, 5, 6, 7}};  // one group per node
  t.bytes = 8e6;
  CollectivePlan ar = plan_group_collective(t, place, AllReduceAlgorithm::kMesh, true);
  REQUIRE(ar.phases.size() == 2);
  CHECK(ar.phases[0].name == "mesh reduce-scatter");
  CHECK(ar.phases[0].steps == 1);
  CHECK(ar.phases[0].transfers.size() == 2u * 4 * 3);  // every ordered pair of each node
  CHECK(ar.phases[0].transfers[0].bytes == 2e6);       // S / 4 to each peer
  // Two rounds, each latency + S/4 on every pair's own link.
  CHECK(plan_bound_s(ar, p) == Approx(2 * (1e-6 + 2e6 / 1e10)));
  // Across both nodes: mesh in the node (S/4 to each peer), ring across (S/8), mesh again.
  t.groups = {{0, 1, 2, 3, 4, 5, 6, 7}};
  CollectivePlan two = plan_group_collective(t, place, AllReduceAlgorithm::kMesh, false);
  REQUIRE(two.phases.size() == 3);
  CHECK(two.phases[0].name == "mesh reduce-scatter in node");
  CHECK(two.phases[0].transfers[0].bytes == 2e6);
  CHECK(two.phases[1].name == "all-reduce across nodes");
  CHECK(two.phases[1].transfers[0].bytes == 1e6);
  CHECK(two.phases[2].name == "mesh all-gather in node");
  // Groups with one rank per node have no in-node part: a ring, as hierarchical.
  t.groups = {{0, 4}, {1, 5}, {2, 6}, {3, 7}};
  CHECK(plan_group_collective(t, place, AllReduceAlgorithm::kMesh, true).phases[0].name == "ring");
}

TEST_CASE("a full mesh is told from a switch by the routes' own links") {
  // grid(): every ordered pair has its own link: a mesh.
  PlatformFacts mesh = grid(1, 4);
  CHECK(node_fabric_is_mesh(mesh, place_ranks(4, 4, mesh)));
  CHECK_FALSE(node_fabric_is_mesh(mesh, place_ranks(1, 1, mesh)));  // one rank per node: nothing in the node
  // A switch: NPU i's route to j crosses port i and port j, shared by all of i's pairs.
  PlatformFacts sw = grid(1, 4);
  const int ports = static_cast<int>(sw.links.size());
  for (int i = 0; i < 4; ++i) sw.links.push_back({fmt::format("port{}", i), 1e10, 1e-6, true});
  for (int s = 0; s < 4; ++s)
    for (int d = 0; d < 4; ++d)
      if (s != d) sw.routes.set(s, d, {s, ports + s, ports + d, d}, 2e-6);
  CHECK_FALSE(node_fabric_is_mesh(sw, place_ranks(4, 4, sw)));
  // A switch of 64 ports has fewer links (64 HBMs, 64 ports) than the
  // node has pairs (2,016): no pair can own one.
  PlatformFacts big = testing::hbm_facts(1, 64);
  big.routes = RouteTable(64);
  for (int i = 0; i < 64; ++i) big.links.push_back({fmt::format("port{}", i), 1e10, 1e-6, true});
  for (int s = 0; s < 64; ++s)
    for (int d = 0; d < 64; ++d)
      if (s != d) big.routes.set(s, d, {s, 64 + s, 64 + d, d}, 2e-6);
  CHECK_FALSE(node_fabric_is_mesh(big, place_ranks(64, 64, big)));
  // resolve() turns the default hierarchical into mesh on a mesh only.
  CHECK(resolve(ReplayOptions{}, mesh, place_ranks(4, 4, mesh)).all_reduce == AllReduceAlgorithm::kMesh);
  CHECK(resolve(ReplayOptions{}, sw, place_ranks(4, 4, sw)).all_reduce == AllReduceAlgorithm::kHierarchical);
  ReplayOptions ring;
  ring.all_reduce = AllReduceAlgorithm::kRing;
  CHECK(resolve(ring, mesh, place_ranks(4, 4, mesh)).all_reduce == AllReduceAlgorithm::kRing);
}

TEST_CASE("the stack's dispatch kernels choose the exchange unless --algorithm does") {
  // Two nodes of two NPUs, the scale-up ten times the scale-out: DeepEP's
  // normal kernels relay through the node, the all-to-all goes straight,
  // the low-latency kernels write each selection.
  PlatformFacts two = testing::bare_facts(2, 2);
  two.routes = RouteTable(4);
  two.links = {{"nvlink", 1e11, 1e-6, true}, {"nic", 1e10, 1e-6, true}};
  for (int s = 0; s < 4; ++s)
    for (int d = 0; d < 4; ++d)
      if (s != d) two.routes.set(s, d, {s / 2 == d / 2 ? 0 : 1}, 1e-6);
  const Placement place = place_ranks(4, 2, two);
  auto with = [&](topology::DispatchKernel k) {
    for (NpuFacts& n : two.npus) n.kernels.dispatch = k;
    return *resolve(ReplayOptions{}, two, place).algorithm;
  };
  CHECK(with(topology::DispatchKernel::kDeepEpNormal) == AlltoallAlgorithm::kHierarchical);
  CHECK(with(topology::DispatchKernel::kAlltoall) == AlltoallAlgorithm::kDirect);
  CHECK(with(topology::DispatchKernel::kDeepEpLowLatency) == AlltoallAlgorithm::kLowLatency);
  ReplayOptions given;
  given.algorithm = AlltoallAlgorithm::kHierarchical;
  CHECK(*resolve(given, two, place).algorithm == AlltoallAlgorithm::kHierarchical);
}

TEST_CASE("the collective library's cost per call: launch, + peers x cost for an exchange, none for DeepEP") {
  PlatformFacts p = grid(2, 2);
  const Placement place = place_ranks(4, 2, p);
  std::vector<std::int32_t> tokens(16, 5);
  workloads::TaskGraph g = testing::one_dispatch(4, 2, tokens, 10);
  AlltoallvOptions o{AlltoallAlgorithm::kDirect, Fidelity::kAggregated};
  const double bare_s = plan_bound_s(plan_collective(g.tasks[0], g, place, AllReduceAlgorithm::kRing, false, o), p);
  o.kernels.collective_launch_s = 10e-6;
  o.kernels.collective_peer_s = 1e-6;
  o.kernels.dispatch = topology::DispatchKernel::kAlltoall;
  // The framework's all-to-all: three peers per rank.
  const CollectivePlan a2a = plan_collective(g.tasks[0], g, place, AllReduceAlgorithm::kRing, false, o);
  CHECK(a2a.launch_s == Approx(10e-6 + 3 * 1e-6));
  CHECK(plan_bound_s(a2a, p) == Approx(bare_s + 13e-6));
  const std::vector<PlanStep> steps = plan_steps(a2a, p);
  CHECK(steps.front().delay_s == a2a.launch_s);
  // A pipeline transfer: one peer each.
  workloads::TaskGraph pp = testing::one_dispatch(4, 2, {0, 0, 5, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0}, 10);
  pp.tasks[0].kind = workloads::TaskKind::kPipelineP2p;
  CHECK(plan_collective(pp.tasks[0], pp, place, AllReduceAlgorithm::kRing, false, o).launch_s ==
        Approx(10e-6 + 1e-6));
  // A ring pays the launch alone: its steps pay their links' latency.
  workloads::Task ar;
  ar.kind = workloads::TaskKind::kTpAllReduce;
  ar.groups = {{0, 1, 2, 3}};
  ar.bytes = 4e6;
  const CollectivePlan ring = plan_collective(ar, g, place, AllReduceAlgorithm::kRing, false, o);
  CHECK(ring.launch_s == 10e-6);
  CHECK(plan_bound_s(ring, p) == Approx(10e-6 + 6 * (1e-6 + 1e6 / 1e10)));
  // DeepEP's kernels carry their own costs (the platform's [kernels]).
  o.kernels.dispatch = topology::DispatchKernel::kDeepEpNormal;
  CHECK(plan_collective(g.tasks[0], g, place, AllReduceAlgorithm::kRing, false, o).launch_s == 0);
}

TEST_CASE("per-flow fidelity is refused beyond 16 ranks, with why, and fewer than one chunk too") {
  Placement place;
  place.ranks_per_node = 8;
  for (int r = 0; r < 32; ++r) place.npu_of_rank.push_back(r);
  ReplayOptions o;
  o.algorithm = AlltoallAlgorithm::kDirect;
  o.fidelity = Fidelity::kPerFlow;
  CHECK_THROWS_WITH(resolve(o, PlatformFacts{}, place),
                    Catch::Contains("fidelity: per-flow times every rank pair as its own activity (32 x 31 per "
                                    "collective); beyond 16 ranks"));
  place.npu_of_rank.resize(16);
  CHECK(*resolve(o, PlatformFacts{}, place).fidelity == Fidelity::kPerFlow);
  o.fidelity = std::nullopt;  // default: aggregated above 8 ranks
  CHECK(*resolve(o, PlatformFacts{}, place).fidelity == Fidelity::kAggregated);
  o.pipeline_chunks = 0;
  CHECK_THROWS_WITH(resolve(o, PlatformFacts{}, place), Catch::Contains("pipeline_chunks: expected >= 1, got 0"));
}

TEST_CASE("a pipelined plan's bound is the flow shop of its chunks, latency once per stage") {
  // Two stages on disjoint links of a 2 x 2 grid (10 GB/s, 1 us per link,
  // see grid()): 4 chunks of stage 1 at t1 each, of stage 2 at t2; stage
  // latencies L1, L2 before their first chunks only.
  PlatformFacts p = grid(2, 2);
  CollectivePlan plan;
  plan.pipeline_chunks = 4;
  CollectivePhase a, b;
  a.transfers = {{0, 2, 4e6}};
  b.transfers = {{2, 3, 8e6}};
  plan.phases = {a, b};
  const double l1 = round_cost(a, p).latency_s, l2 = round_cost(b, p).latency_s;
  const double t1 = round_cost(a, p, 0.25, false).total_s(), t2 = round_cost(b, p, 0.25, false).total_s();
  CHECK(t1 == Approx(1e6 / 1e10));
  CHECK(t2 == Approx(2e6 / 1e10));
  // Stage 2 is the slower: its chunks run back to back after the first
  // chunk of stage 1 and its own latency.
  CHECK(plan_bound_s(plan, p) == Approx(l1 + t1 + l2 + 4 * t2));
  plan.pipeline_chunks = 1;
  CHECK(plan_bound_s(plan, p) == Approx(l1 + 4 * t1 + l2 + 4 * t2));
}

TEST_CASE("an aggregated round's parallel task carries one stand-in for the links only it loads") {
  // 4 NPUs, a private 10 GB/s link per ordered pair (links 4..15 in
  // (src, dst) order), transfer s -> d of (4 s + d + 1) MB: every pair link
  // is loaded by this round alone, so only the tightest, 3 -> 2 (15 MB),
  // can limit its rate.
  PlatformFacts p = grid(1, 4);
  CollectivePhase phase;
  for (int s = 0; s < 4; ++s)
    for (int d = 0; d < 4; ++d)
      if (s != d) phase.transfers.push_back({s, d, (4 * s + d + 1) * 1e6});
  const std::vector<double> hbm = link_load(phase.transfers, p);
  std::vector<bool> contended(p.links.size(), false);
  std::vector<Transfer> carried = solver_transfers(phase, p, contended);
  REQUIRE(carried.size() == 5);  // the stand-in and 4 HBM loopbacks
  CHECK(carried[0].src_npu == 3);
  CHECK(carried[0].dst_npu == 2);
  CHECK(carried[0].bytes == 15e6);
  std::vector<double> load = link_load(carried, p);
  for (int npu = 0; npu < 4; ++npu) CHECK(load[npu] == Approx(hbm[npu]).epsilon(1e-15));
  CHECK(load[4 + 3 * 3 + 2] == 15e6);
  for (int l = 4; l < 16; ++l)
    if (l != 4 + 3 * 3 + 2) CHECK(load[l] == 0);

  // A link another activity may load keeps its transfer (0 -> 1, link 4).
  contended[4] = true;
  carried = solver_transfers(phase, p, contended);
  REQUIRE(carried.size() == 6);
  CHECK(carried[0].src_npu == 0);
  CHECK(carried[0].dst_npu == 1);
  CHECK(carried[0].bytes == 2e6);
  CHECK(carried[1].bytes == 15e6);
  load = link_load(carried, p);
  for (int npu = 0; npu < 4; ++npu) CHECK(load[npu] == Approx(hbm[npu]).epsilon(1e-15));
}

TEST_CASE("a transfer sharing a link with one that stays stays too, and a stand-in needs room on its HBMs") {
  // NPUs 0 and 1 send to 2 over their own uplinks a, b (10 GB/s) and a
  // shared link s (40 GB/s): routes 0 -> 2 = hbm0 a s hbm2, 1 -> 2 = hbm1 b s hbm2.
  PlatformFacts p = testing::hbm_facts(1, 3);
  p.links.push_back({"a", 1e10, 1e-6, true});
  p.links.push_back({"b", 1e10, 1e-6, true});
  p.links.push_back({"s", 4e10, 1e-6, true});
  p.routes = RouteTable(3);
  for (int i = 0; i < 3; ++i) p.routes.set(i, i, {i}, 0);
  p.routes.set(0, 2, {0, 3, 5, 2}, 2e-6);
  p.routes.set(1, 2, {1, 4, 5, 2}, 2e-6);
  CollectivePhase phase;
  phase.transfers = {{0, 2, 2e6}, {1, 2, 1e6}};
  std::vector<bool> contended(p.links.size(), false);
  // Both leave; a (2 MB at 10 GB/s) is the tightest: 0 -> 2 stands for it,
  // 1's 1 MB and the rest of 2's 3 MB stay on their HBMs.
  std::vector<Transfer> carried = solver_transfers(phase, p, contended);
  REQUIRE(carried.size() == 3);
  CHECK((carried[0].src_npu == 0 && carried[0].dst_npu == 2 && carried[0].bytes == 2e6));
  CHECK((carried[1].src_npu == 1 && carried[1].dst_npu == 1 && carried[1].bytes == 1e6));
  CHECK((carried[2].src_npu == 2 && carried[2].dst_npu == 2 && carried[2].bytes == 1e6));
  // b may be loaded by another activity: 1 -> 2 stays, so s keeps its
  // bytes and 0 -> 2 stays as well.
  contended[4] = true;
  carried = solver_transfers(phase, p, contended);
  REQUIRE(carried.size() == 2);
  CHECK(carried[0].bytes == 2e6);
  CHECK(carried[1].bytes == 1e6);
  // s as narrow as a and b: s (3 MB) is the tightest, and no transfer's
  // HBMs hold 3 MB at both ends, so both transfers over s stay as they are.
  contended[4] = false;
  p.links[5].bandwidth_Bps = 1e10;
  carried = solver_transfers(phase, p, contended);
  REQUIRE(carried.size() == 2);
  CHECK(carried[0].src_npu == 0);
  CHECK(carried[1].src_npu == 1);
}

TEST_CASE("when no one transfer can stand for the tightest link, the transfers over it stay and the rest leave") {
  // NPUs 0 and 1 send to 3 over their uplinks a, b and a shared link s;
  // NPU 2 sends to 3 over its own uplink c alone. Every link 10 GB/s: s
  // (3 MB from two senders) is the tightest, and neither sender's HBM holds
  // 3 MB, so no single stand-in exists (skewed traffic into one rank).
  PlatformFacts p = testing::hbm_facts(1, 4);
  for (const char* name : {"a", "b", "c", "s"}) p.links.push_back({name, 1e10, 1e-6, true});
  p.routes = RouteTable(4);
  for (int i = 0; i < 4; ++i) p.routes.set(i, i, {i}, 0);
  p.routes.set(0, 3, {0, 4, 7, 3}, 2e-6);
  p.routes.set(1, 3, {1, 5, 7, 3}, 2e-6);
  p.routes.set(2, 3, {2, 6, 3}, 1e-6);
  CollectivePhase phase;
  phase.transfers = {{0, 3, 2e6}, {1, 3, 1e6}, {2, 3, 1.5e6}};
  const std::vector<double> hbm = link_load(phase.transfers, p);
  const std::vector<bool> contended(p.links.size(), false);
  const std::vector<Transfer> carried = solver_transfers(phase, p, contended);
  // 0 -> 3 and 1 -> 3 as they are; 2 -> 3's bytes as loopbacks on HBMs 2 and 3.
  REQUIRE(carried.size() == 4);
  CHECK((carried[0].src_npu == 0 && carried[0].dst_npu == 3 && carried[0].bytes == 2e6));
  CHECK((carried[1].src_npu == 1 && carried[1].dst_npu == 3 && carried[1].bytes == 1e6));
  CHECK((carried[2].src_npu == 2 && carried[2].dst_npu == 2 && carried[2].bytes == 1.5e6));
  CHECK((carried[3].src_npu == 3 && carried[3].dst_npu == 3 && carried[3].bytes == 1.5e6));
  const std::vector<double> load = link_load(carried, p);
  for (int npu = 0; npu < 4; ++npu) CHECK(load[npu] == Approx(hbm[npu]).epsilon(1e-15));
  CHECK(load[7] == 3e6);  // s keeps its bytes
  CHECK(load[6] == 0);    // c, private and looser, is no longer carried
}
