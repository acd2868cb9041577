// The dispatch/combine kernel mechanisms of the platform's [kernels]: a
// normal kernel's launch and per-peer costs before its copies, its copy
// rates (a floor under each round), one message per selection, the
// package's own copies; the low-latency kernel's control path beside its
// copies, on a supernode. Each on a plan and as a lone kernel in the
// replay, landing on its closed form (docs/simulator.md, "Kernel mechanisms").
#include <cstdio>

#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "core/presets.hpp"
#include "sim/platform/placement.hpp"
#include "sim/platform/platform_loader.hpp"
#include "sim/replay/collectives.hpp"
#include "sim/validation/deepep_kernels.hpp"
#include "sim_test_support.hpp"

using namespace epsim;
using namespace epsim::sim;

namespace {

// n ranks on one node, each sending `tokens` to every other rank and none to
// itself; every token copy stands for `selections_per_copy` selections.
workloads::TrafficMatrix uniform(int n, int tokens, int selections_per_copy = 1) {
  workloads::TrafficMatrix t;
  t.ranks = n;
  t.ranks_per_node = n;
  t.tokens.assign(static_cast<std::size_t>(n) * n, 0);
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d)
      if (s != d) t.tokens[static_cast<std::size_t>(s) * n + d] = tokens;
  t.node_tokens.assign(static_cast<std::size_t>(n), tokens * (n - 1));
  t.tokens_per_rank = tokens * (n - 1);
  t.selections_per_rank = static_cast<std::int64_t>(selections_per_copy) * tokens * (n - 1);
  return t;
}

// Dispatch and combine times of a lone kernel on `platform` with `sets`.
std::pair<double, double> kernel_times(const std::string& platform, const std::vector<std::string>& sets,
                                       const workloads::TrafficMatrix& traffic, double bytes_per_token,
                                       DeepEpKernel kernel) {
  const std::string out = testing::in_child([&] {
    OpenPlatform open = open_platform(PlatformRequest{platform, sets});
    const DeepEpTokenBytes b{bytes_per_token, bytes_per_token, bytes_per_token, bytes_per_token};
    const DeepEpTimes t = time_deepep_kernels(*open.engine, open.loaded, traffic, b, 1, kernel, true);
    return fmt::format("{:.17g} {:.17g}", t.dispatch_s, t.combine_s);
  });
  double d = 0, c = 0;
  INFO(out);
  REQUIRE(std::sscanf(out.c_str(), "%lf %lf", &d, &c) == 2);
  return {d, c};
}

std::string single_switch() { return std::string(EPSIM_SOURCE_DIR) + "/tests/tools/collective/single_switch.toml"; }

}  // namespace

TEST_CASE("kernel costs on a plan: launch once, per-peer by kernel, copy floor of the busiest NPU") {
  // 4 ranks on one node; rank 0 sends to 1, 2 and 3, rank 1 to 0: rank 0
  // has 3 peers (the most) and sends the most bytes (3 x 1000).
  workloads::TrafficMatrix t;
  t.ranks = 4;
  t.ranks_per_node = 4;
  t.tokens.assign(16, 0);
  t.node_tokens.assign(4, 0);
  t.tokens[0 * 4 + 1] = t.tokens[0 * 4 + 2] = t.tokens[0 * 4 + 3] = 1;
  t.tokens[1 * 4 + 0] = 1;
  const workloads::Task dispatch = testing::dispatch_task(1000);
  workloads::Task combine = dispatch;
  combine.kind = workloads::TaskKind::kCombine;
  combine.transpose = true;
  const Placement place = place_ranks(4, 4, testing::bare_facts(1, 4));
  AlltoallvOptions o;
  o.kernels.launch_s = 5e-6;
  o.kernels.dispatch_peer_s = 1e-6;
  o.kernels.combine_peer_s = 2e-6;
  o.kernels.dispatch_copy_Bps = 1e9;
  const CollectivePlan d = plan_alltoallv(dispatch, t, place, o);
  REQUIRE(d.phases.size() == 1);
  CHECK(d.phases[0].setup_s == Approx(5e-6 + 3 * 1e-6));
  CHECK(d.phases[0].floor_s == Approx(3000 / 1e9));
  const CollectivePlan c = plan_alltoallv(combine, t, place, o);
  REQUIRE(c.phases.size() == 2);  // the exchange, then combine's reduction
  CHECK(c.phases[0].setup_s == Approx(5e-6 + 3 * 2e-6));
  CHECK(c.phases[0].floor_s == 0);  // no combine copy rate: the links bind
  CHECK(c.phases[1].setup_s == 0);  // the reduction has no peers and no launch
  // Ranks 0 and 1 on one package (two dies): their copies take the package's
  // own link, so rank 0's copies are the 2000 bytes to ranks 2 and 3.
  o.kernels.package_npus = 2;
  CHECK(plan_alltoallv(dispatch, t, place, o).phases[0].floor_s == Approx(2000 / 1e9));
  o.kernels.dispatch_peer_s = -1;
  CHECK_THROWS_WITH(plan_alltoallv(dispatch, t, place, o), Catch::Contains("kernel costs must be >= 0"));
}

TEST_CASE("kernel costs: one message per selection in the direct exchange, as the low-latency kernel sends") {
  workloads::TrafficMatrix t = uniform(4, 10, 3);  // every token copy stands for 3 selections
  const workloads::Task dispatch = testing::dispatch_task(100);
  const Placement place = place_ranks(4, 4, testing::bare_facts(1, 4));
  AlltoallvOptions o;
  CHECK(plan_alltoallv(dispatch, t, place, o).phases[0].transfers[0].bytes == 10 * 100);
  o.kernels.per_selection = true;
  CHECK(plan_alltoallv(dispatch, t, place, o).phases[0].transfers[0].bytes == 3 * 10 * 100);
  workloads::Task p2p = dispatch;  // pipeline transfers are no EP kernel: one message per token
  p2p.kind = workloads::TaskKind::kPipelineP2p;
  CHECK(plan_alltoallv(p2p, t, place, o).phases[0].transfers[0].bytes == 10 * 100);
}

TEST_CASE("a stack on the framework's all-to-all (Megatron's alltoall dispatcher) sends one copy per selection") {
  workloads::TrafficMatrix t = uniform(4, 10, 3);
  const workloads::Task dispatch = testing::dispatch_task(100);
  const Placement place = place_ranks(4, 4, testing::bare_facts(1, 4));
  AlltoallvOptions o;
  o.kernels.dispatch = topology::DispatchKernel::kAlltoall;
  CHECK(plan_alltoallv(dispatch, t, place, o).phases[0].transfers[0].bytes == 3 * 10 * 100);
  o.kernels.dispatch = topology::DispatchKernel::kDeepEpNormal;  // DeepEP: once per destination rank
  CHECK(plan_alltoallv(dispatch, t, place, o).phases[0].transfers[0].bytes == 10 * 100);
}

TEST_CASE("normal kernel alone: launch + peers x cost + latency + max(bytes / port, copies / copy rate)") {
  // 8 NPUs under one switch, 100 GB/s ports, routes 2 x 1 us + 0.5 us.
  // Every rank sends 7 x 1000 tokens of 10 kB: 70 MB per port, 0.7 ms.
  const workloads::TrafficMatrix t = uniform(8, 1000);
  const double bytes = 7 * 1000 * 10e3, latency = 2.5e-6, launch = 40e-6;
  // Link-bound (copy rate 200 GB/s): the copies hide under the bytes.
  auto [d1, c1] = kernel_times(single_switch(),
                               {"kernels.launch=40us", "kernels.dispatch_peer_cost=3us",
                                "kernels.combine_peer_cost=1us", "kernels.dispatch_copy_rate=200GBps"},
                               t, 10e3, DeepEpKernel::kNormal);
  CHECK(d1 == Approx(launch + 7 * 3e-6 + latency + bytes / 100e9).epsilon(1e-6));
  // Combine: its own peer cost, then the reduction of 7000 inputs and 7000 outputs at 100 TB/s.
  const double reduction = 2 * 7000 * 10e3 / 100e12;
  CHECK(c1 == Approx(launch + 7 * 1e-6 + latency + bytes / 100e9 + reduction).epsilon(1e-6));
  // Copy-bound (20 GB/s): the round lasts the busiest NPU's copies.
  auto [d2, c2] = kernel_times(single_switch(), {"kernels.dispatch_copy_rate=20GBps", "kernels.combine_copy_rate=35GBps"},
                               t, 10e3, DeepEpKernel::kNormal);
  CHECK(d2 == Approx(latency + bytes / 20e9).epsilon(1e-6));
  CHECK(c2 == Approx(latency + bytes / 35e9 + reduction).epsilon(1e-6));
}

TEST_CASE("low-latency kernel on a supernode: max(launch + peers x cost, latency + bytes at its port share)") {
  // One node of 8 CloudMatrix ports (392 GB/s, routes 2 x 0.3 + 0.2 us);
  // every rank sends 7 x 100 token copies, 2 selections each, of 7 kB.
  const workloads::TrafficMatrix t = uniform(8, 100, 2);
  const double bytes = 7 * 100 * 2 * 7e3, latency = 0.8e-6;
  // Bytes-bound: the kernel's writes reach half the port's rate.
  auto [d1, c1] = kernel_times("cloudmatrix384", {"node.count=1", "supernode.low_latency_efficiency=0.5"}, t, 7e3,
                               DeepEpKernel::kLowLatency);
  CHECK(d1 == Approx(latency + bytes / (0.5 * 392e9)).epsilon(1e-6));
  // Control-bound: 100 us + 7 peers x 2 us hides the bytes, and combine's
  // reduction (its 1400 inputs and 700 outputs in HBM) with them.
  auto [d2, c2] = kernel_times("cloudmatrix384",
                               {"node.count=1", "kernels.low_latency_launch=100us", "kernels.low_latency_peer_cost=2us"},
                               t, 7e3, DeepEpKernel::kLowLatency);
  CHECK(d2 == Approx(100e-6 + 7 * 2e-6).epsilon(1e-6));
  CHECK(c2 == Approx(100e-6 + 7 * 2e-6).epsilon(1e-6));
}

TEST_CASE("low-latency kernel inside a node: latency + bytes at node.low_latency_efficiency x the port") {
  // 8 NPUs under one switch (100 GB/s ports, routes 2.5 us): each rank sends
  // 7 x 100 copies of 2 selections of 7 kB at 0.4 of the port's rate.
  const workloads::TrafficMatrix t = uniform(8, 100, 2);
  auto [d, c] = kernel_times(single_switch(), {"node.low_latency_efficiency=0.4"}, t, 7e3, DeepEpKernel::kLowLatency);
  CHECK(d == Approx(2.5e-6 + 7 * 100 * 2 * 7e3 / (0.4 * 100e9)).epsilon(1e-6));
}
