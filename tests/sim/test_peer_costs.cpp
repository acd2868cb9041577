// npu.comm_peer_cost: a dispatch/combine phase pays the kernel's cost per
// peer x the most peers a rank has in it, once, with its latency. Exact on
// a plan (round cost) and in the replay (SimGrid).
#include <cstdio>

#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "sim/platform/placement.hpp"
#include "sim/platform/platform_loader.hpp"
#include "sim/replay/collectives.hpp"
#include "sim/simulate.hpp"
#include "sim/validation/deepep_kernels.hpp"
#include "sim/validation/deepep_validation.hpp"
#include "sim_test_support.hpp"

using namespace epsim;
using namespace epsim::sim;

TEST_CASE("peer cost: a phase pays cost x its busiest rank's peers, with its latency, once") {
  // 4 ranks on one node; rank 0 sends to 1, 2 and 3, rank 1 to 0: rank 0
  // has 3 peers (the most), so the phase's setup is 3 x the cost.
  workloads::TrafficMatrix t;
  t.ranks = 4;
  t.ranks_per_node = 4;
  t.tokens.assign(16, 0);
  t.node_tokens.assign(4, 0);
  t.tokens[0 * 4 + 1] = t.tokens[0 * 4 + 2] = t.tokens[0 * 4 + 3] = 1;
  t.tokens[1 * 4 + 0] = 1;
  const workloads::Task dispatch = testing::dispatch_task(1000);
  const Placement place = place_ranks(4, 4, testing::bare_facts(1, 4));
  AlltoallvOptions o;
  o.peer_cost_s = 1e-6;
  const CollectivePlan plan = plan_alltoallv(dispatch, t, place, o);
  REQUIRE(plan.phases.size() == 1);
  CHECK(plan.phases[0].setup_s == Approx(3e-6));
  o.peer_cost_s = 0;
  CHECK(plan_alltoallv(dispatch, t, place, o).phases[0].setup_s == 0);
  o.peer_cost_s = -1;
  CHECK_THROWS_WITH(plan_alltoallv(dispatch, t, place, o), Catch::Contains("peer_cost_s must be >= 0"));
}

TEST_CASE("peer cost: the replay's low-latency EP16 dispatch and combine take 15 x the cost longer") {
  // One GPU per node, 16 ranks: every rank reaches all 15 others.
  DeepEpValidationOptions o;
  o.tokens_per_rank = 128;
  o.experts = 288;
  o.group_limit = 0;
  const workloads::TrafficMatrix traffic = deepep_benchmark_traffic(o, 16, 1);
  const DeepEpTokenBytes b = deepep_token_bytes(7168, 8, DeepEpKernel::kLowLatency);
  auto times = [&](const std::string& cost) {
    return testing::in_child([&] {
      const PlatformRequest platform{"h800", {"node.npus=1", "node.count=16", "npu.comm_peer_cost=" + cost}};
      OpenPlatform open = open_platform(platform);
      const DeepEpTimes t = time_deepep_kernels(*open.engine, open.loaded, traffic, b, 1, DeepEpKernel::kLowLatency);
      return fmt::format("{:.17g} {:.17g}", t.dispatch_s, t.combine_s);
    });
  };
  double d0 = 0, c0 = 0, d1 = 0, c1 = 0;
  REQUIRE(std::sscanf(times("0us").c_str(), "%lf %lf", &d0, &c0) == 2);
  REQUIRE(std::sscanf(times("2us").c_str(), "%lf %lf", &d1, &c1) == 2);
  CHECK(d1 - d0 == Approx(15 * 2e-6).epsilon(1e-6));
  CHECK(c1 - c0 == Approx(15 * 2e-6).epsilon(1e-6));
}
