// Solver stand-ins are decided while the replay runs: an aggregated
// dispatch round carries them while no other collective loads its links,
// and goes on with its own transfers from where it is when a gradient
// collective starts beside it. The step must not see the difference: it
// equals, to 1e-9, the step whose rounds never carry stand-ins. Each
// simulation runs in a forked child.
#include <cstdio>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "sim/simulate.hpp"
#include "sim_test_support.hpp"
#include "workloads/task_graph_builder.hpp"
#include "workloads/workload_loader.hpp"

using namespace epsim;
using namespace epsim::sim;
using epsim::sim::testing::in_child;
using workloads::Task;
using workloads::TaskGraph;
using workloads::TaskKind;

namespace {

constexpr int kRanks = 16;  // two a2 nodes of 8
constexpr int kPerNode = 8;

// A uniform dispatch (4096 tokens per rank, BF16 hidden 7168: ~0.6 ms over
// the NICs) and, on the DP stream, an all-reduce of `all_reduce_bytes` per
// rank over all 16 ranks that waits for a kernel of `kernel_flops` per rank
// (0: no kernel, the all-reduce is ready at once).
TaskGraph dispatch_beside_all_reduce(double kernel_flops, double all_reduce_bytes, int hot = -1) {
  std::vector<std::int32_t> tokens(kRanks * kRanks, 4096 / kRanks);
  // A hot rank receives 8x the tokens of any other from every sender: its
  // inbound links bind, fed by many senders (no one transfer stands for them).
  if (hot >= 0)
    for (int src = 0; src < kRanks; ++src) tokens[src * kRanks + hot] *= 8;
  TaskGraph g = testing::one_dispatch(kRanks, kPerNode, tokens, 7168);
  std::vector<workloads::TaskId> deps;
  if (kernel_flops > 0) {
    Task kernel;
    kernel.id = static_cast<workloads::TaskId>(g.tasks.size());
    kernel.kind = TaskKind::kAttention;
    kernel.flops.assign(kRanks, kernel_flops);
    kernel.hbm_bytes.assign(kRanks, 1e6);
    g.tasks.push_back(kernel);
    deps.push_back(kernel.id);
  }
  Task ar;
  ar.id = static_cast<workloads::TaskId>(g.tasks.size());
  ar.kind = TaskKind::kGradAllReduce;
  ar.phase = workloads::Phase::kGradSync;
  ar.deps = deps;
  ar.groups.emplace_back();
  for (int r = 0; r < kRanks; ++r) ar.groups.back().push_back(r);
  ar.bytes = all_reduce_bytes;
  g.tasks.push_back(ar);
  return g;
}

struct Outcome {
  double step_s = 0;
  long activities = 0;
};

Outcome run(const TaskGraph& graph, bool stand_ins, AlltoallAlgorithm algorithm = AlltoallAlgorithm::kHierarchical,
            int nodes = 2) {
  const std::string out = in_child([&] {
    ReplayOptions options;
    options.algorithm = algorithm;
    options.fidelity = Fidelity::kAggregated;
    options.solver_stand_ins = stand_ins;
    options.record_link_spans = true;  // the replaced round's link spans go on from where it was
    Simulation s = simulate(PlatformRequest{"a2", {"node.count=" + std::to_string(nodes)}}, graph, options);
    return fmt::format("{:.17g} {}", s.timeline.step_s, s.timeline.activities);
  });
  INFO(out);
  Outcome o;
  REQUIRE(std::sscanf(out.c_str(), "%lf %ld", &o.step_s, &o.activities) == 2);
  return o;
}

}  // namespace

TEST_CASE("an all-reduce starting mid-dispatch replaces the round's stand-ins: the step is unchanged to 1e-9") {
  // 2e10 flops: ~0.1 ms at the 910B's BF16 peak, well inside the dispatch.
  const TaskGraph graph = dispatch_beside_all_reduce(2e10, 16e6);
  const Outcome with = run(graph, true);
  const Outcome without = run(graph, false);
  CAPTURE(with.step_s, without.step_s, with.activities, without.activities);
  CHECK(std::abs(with.step_s - without.step_s) <= 1e-9 * without.step_s);
  // Some round carrying stand-ins was running or waiting for its latency
  // when the all-reduce started, and was replaced (one more activity each).
  CHECK(with.activities > without.activities);
  // The all-reduce really shares links with the dispatch: alone it is shorter.
  const Outcome alone = run(dispatch_beside_all_reduce(2e10, 0), true);
  CHECK(alone.step_s < 0.99 * with.step_s);
}

TEST_CASE("an all-reduce ready with the dispatch: rounds start without stand-ins where it runs, same step") {
  const TaskGraph graph = dispatch_beside_all_reduce(0, 256e6);
  const Outcome with = run(graph, true);
  const Outcome without = run(graph, false);
  CAPTURE(with.step_s, without.step_s);
  CHECK(std::abs(with.step_s - without.step_s) <= 1e-9 * without.step_s);
}

TEST_CASE("skewed traffic into one rank: the transfers feeding its links stay, the step is unchanged to 1e-9") {
  // Direct: the hot rank's inbound NIC link carries the 8 other node's senders.
  for (const double all_reduce_bytes : {0.0, 16e6}) {
    const TaskGraph graph = dispatch_beside_all_reduce(2e10, all_reduce_bytes, 5);
    const Outcome with = run(graph, true, AlltoallAlgorithm::kDirect);
    const Outcome without = run(graph, false, AlltoallAlgorithm::kDirect);
    CAPTURE(all_reduce_bytes, with.step_s, without.step_s);
    CHECK(std::abs(with.step_s - without.step_s) <= 1e-9 * without.step_s);
  }
}

TEST_CASE("pipeline stages: rounds beside other stages' rounds carry stand-ins where those spare their links, "
          "same step") {
  // tiny-moe in two stages of two EP16 groups' worth of nodes each: every
  // dispatch and combine runs beside the other stage's rounds and transfers.
  const workloads::WorkloadSpec w = workloads::load_workload(
      "tiny-moe", {"parallel.pp=2", "parallel.ep=16", "parallel.ranks_per_node=8", "parallel.micro_batches=4"});
  REQUIRE(w.parallel.world() == 32);
  const TaskGraph graph = workloads::build_task_graph(w);
  const Outcome with = run(graph, true, AlltoallAlgorithm::kHierarchical, 4);
  const Outcome without = run(graph, false, AlltoallAlgorithm::kHierarchical, 4);
  CAPTURE(with.step_s, without.step_s, with.activities, without.activities);
  CHECK(std::abs(with.step_s - without.step_s) <= 1e-9 * without.step_s);
  // Some rounds carrying stand-ins were replaced when another stage's round came over their links.
  CHECK(with.activities > without.activities);
}
