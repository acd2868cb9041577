// One task alone on an idle platform takes exactly its analytic bound
// (1e-6 relative): GEMM rooflines, a dispatch over a full mesh, a transfer
// through a NIC. Each test case runs one SimGrid engine.
#include <cstdio>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "sim/replay/collectives.hpp"
#include "sim/simulate.hpp"
#include "sim_test_support.hpp"

using namespace epsim;
using namespace epsim::sim;
using epsim::sim::testing::one_compute_task;
using epsim::sim::testing::one_dispatch;
using epsim::sim::testing::platform_path;

namespace {

constexpr double kRel = 1e-6;

void check_exact(double sim_s, double expected_s) {
  INFO("sim " << sim_s << " s, expected " << expected_s << " s");
  CHECK(sim_s == Approx(expected_s).epsilon(kRel));
}

}  // namespace

TEST_CASE("a compute-bound bf16 GEMM alone takes flops / peak on every rank") {
  auto graph = one_compute_task(4, 2, workloads::Dtype::kBf16, {1e12, 2e12, 0.5e12, 1e12}, {1e8, 1e8, 1e8, 1e8});
  Simulation s = simulate(platform_path("two_nodes"), graph);
  check_exact(s.timeline.step_s, 2e12 / 1e14);
  check_exact(s.bounds.step_s, 2e12 / 1e14);
  const double expected[] = {1e12 / 1e14, 2e12 / 1e14, 0.5e12 / 1e14, 1e12 / 1e14};
  REQUIRE(s.timeline.intervals.size() == 4);
  for (const Interval& iv : s.timeline.intervals) check_exact(iv.end_s - iv.start_s, expected[iv.rank]);
}

TEST_CASE("an fp8 GEMM alone takes max(flops / fp8 peak, HBM bytes / HBM bandwidth)") {
  // rank 0 memory-bound (10 ms of HBM vs 5 ms of FLOPs), rank 1 compute-bound (20 ms vs 1 ms).
  auto graph = one_compute_task(2, 2, workloads::Dtype::kFp8, {1e12, 4e12}, {1e10, 1e9});
  Simulation s = simulate(platform_path("two_nodes"), graph);
  REQUIRE(s.timeline.intervals.size() == 2);
  check_exact(s.timeline.intervals[0].end_s, 1e10 / 1e12);
  check_exact(s.timeline.intervals[1].end_s, 4e12 / 2e14);
  check_exact(s.timeline.step_s, s.bounds.step_s);
}

TEST_CASE("a uniform dispatch over a full mesh, one parallel task, takes latency + bytes / link bandwidth") {
  std::vector<std::int32_t> tokens(16, 100);
  auto graph = one_dispatch(4, 4, tokens, 7168);
  ReplayOptions options;
  options.algorithm = AlltoallAlgorithm::kDirect;
  options.fidelity = Fidelity::kAggregated;
  Simulation s = simulate(platform_path("mesh4"), graph, options);
  // Each one-way link carries 100 tokens x 7168 B; HBM carries 6x that at 20x the bandwidth.
  const double expected_s = 1e-6 + 100 * 7168 / 50e9;
  check_exact(s.timeline.step_s, expected_s);
  check_exact(s.bounds.task_s[0], expected_s);
  CHECK(s.report.step.cause == "on the bound");
}

TEST_CASE("a uniform dispatch over a full mesh, one flow per pair, takes latency + bytes / link bandwidth") {
  std::vector<std::int32_t> tokens(16, 100);
  auto graph = one_dispatch(4, 4, tokens, 7168);
  ReplayOptions options;
  options.fidelity = Fidelity::kPerFlow;
  Simulation s = simulate(platform_path("mesh4"), graph, options);
  const double expected_s = 1e-6 + 100 * 7168 / 50e9;
  check_exact(s.timeline.step_s, expected_s);
  check_exact(s.bounds.task_s[0], expected_s);
  CHECK(s.timeline.activities == 12);
}

TEST_CASE("a transfer through a NIC takes both NIC latencies + bytes / NIC bandwidth") {
  std::vector<std::int32_t> tokens(16, 0);
  tokens[0 * 4 + 2] = 1000;  // node0.npu0 -> node1.npu0
  auto graph = one_dispatch(4, 2, tokens, 7168);
  // Hierarchical: the tokens go straight to the rank with the same local
  // index, nothing is forwarded, so one pipelined stage pays its latency once.
  for (AlltoallAlgorithm a : {AlltoallAlgorithm::kDirect, AlltoallAlgorithm::kHierarchical})
  for (Fidelity f : {Fidelity::kPerFlow, Fidelity::kAggregated}) {
    std::string out = epsim::sim::testing::in_child([&] {
      ReplayOptions options;
      options.algorithm = a;
      options.fidelity = f;
      Simulation s = simulate(platform_path("two_nodes"), graph, options);
      return fmt::format("{:.17g} {:.17g}", s.timeline.step_s, s.bounds.step_s);
    });
    INFO(to_string(a) << " " << to_string(f) << ": " << out);
    double sim_s = 0, bound_s = 0;
    REQUIRE(std::sscanf(out.c_str(), "%lf %lf", &sim_s, &bound_s) == 2);
    check_exact(sim_s, 4e-6 + 1000 * 7168 / 25e9);
    check_exact(bound_s, 4e-6 + 1000 * 7168 / 25e9);
  }
}
