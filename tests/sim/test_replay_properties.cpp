// Properties of whole simulated steps: never below a bound, skew makes the
// hot rank the straggler, overlap beats serial within its bound, shared NICs
// slow concurrent collectives, identical inputs give identical bytes.
// Cases that compare simulations run each in a forked child.
#include <cstdio>
#include <sstream>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "sim/simulate.hpp"
#include "sim/report/trace.hpp"
#include "sim_test_support.hpp"

using namespace epsim;
using namespace epsim::sim;
using epsim::sim::testing::in_child;
using epsim::sim::testing::moe_graph;
using epsim::sim::testing::MoeShape;
using epsim::sim::testing::platform_path;
using epsim::sim::testing::sixteen_ranks;

namespace {

double number(const std::string& text) {
  double v = 0;
  INFO(text);
  REQUIRE(std::sscanf(text.c_str(), "%lf", &v) == 1);
  return v;
}

// Checks every recorded figure against its bound; returns "ok" or what failed.
std::string check_never_below(const Simulation& s, const workloads::TaskGraph& g) {
  const double tol = 1e-9;
  if (s.timeline.step_s < s.bounds.step_s * (1 - tol))
    return fmt::format("step {} below bound {}", s.timeline.step_s, s.bounds.step_s);
  for (const CollectiveSpan& c : s.timeline.collectives)
    if (c.end_s - c.start_s < s.bounds.task_s[c.task] * (1 - tol))
      return fmt::format("collective {} took {} below its bound {}", c.task, c.end_s - c.start_s, s.bounds.task_s[c.task]);
  for (const Interval& iv : s.timeline.intervals) {
    const workloads::Task& t = g.tasks[iv.task];
    if (t.is_collective()) continue;
    const double b = roofline_s(s.platform.npus[s.placement.npu_of_rank[iv.rank]], t.dtype, t.flops[iv.rank],
                                t.hbm_bytes[iv.rank]);
    if (iv.end_s - iv.start_s < b * (1 - tol))
      return fmt::format("task {} rank {} took {} below its roofline {}", iv.task, iv.rank, iv.end_s - iv.start_s, b);
  }
  return "ok";
}

}  // namespace

TEST_CASE("a simulated step is never below any of its bounds") {
  MoeShape shape = sixteen_ranks(3, 0.3);
  shape.grad_all_reduce = true;
  const workloads::TaskGraph graph = moe_graph(shape);
  for (Schedule schedule : {Schedule::kSerial, Schedule::kOverlap}) {
    for (AlltoallAlgorithm a : {AlltoallAlgorithm::kDirect, AlltoallAlgorithm::kHierarchical})
      for (Fidelity f : {Fidelity::kPerFlow, Fidelity::kAggregated}) {
        std::string out = in_child([&] {
          ReplayOptions options;
          options.schedule = schedule;
          options.algorithm = a;
          options.fidelity = f;
          Simulation s = simulate(platform_path("four_nodes"), graph, options);
          return check_never_below(s, graph);
        });
        INFO(to_string(schedule) << " " << to_string(a) << " " << to_string(f));
        CHECK(out == "ok");
      }
  }
}

TEST_CASE("skewed routing lengthens the step and the straggler is the rank holding the hottest experts") {
  auto run = [](const MoeShape& shape) {
    return in_child([&] {
      Simulation s = simulate(platform_path("four_nodes"), moe_graph(shape));
      return fmt::format("{:.17g} {}", s.timeline.step_s, s.report.straggler_rank);
    });
  };
  std::string uniform = run(sixteen_ranks());
  std::string skewed = run(sixteen_ranks(5, 0.3));
  INFO("uniform: " << uniform << "; skewed: " << skewed);
  double step_uniform = number(uniform), step_skewed = number(skewed);
  double ignored = 0;
  int straggler = -1;
  REQUIRE(std::sscanf(skewed.c_str(), "%lf %d", &ignored, &straggler) == 2);
  CHECK(step_skewed > step_uniform * 1.05);
  CHECK(straggler == 5);
}

TEST_CASE("overlap beats serial but never beats max(compute, communication) of a rank") {
  const workloads::TaskGraph graph = moe_graph(sixteen_ranks());
  auto run = [&](Schedule schedule) {
    return in_child([&] {
      ReplayOptions options;
      options.schedule = schedule;
      Simulation s = simulate(platform_path("four_nodes"), graph, options);
      double floor_s = 0;
      for (int r = 0; r < graph.ranks; ++r)
        floor_s = std::max({floor_s, s.bounds.rank_compute_s[r], s.bounds.rank_ep_comm_s[r]});
      return fmt::format("{:.17g} {:.17g} {:.17g}", s.timeline.step_s, floor_s, s.report.overlap_fraction);
    });
  };
  std::string serial = run(Schedule::kSerial), overlap = run(Schedule::kOverlap);
  INFO("serial: " << serial << "; overlap: " << overlap);
  double serial_s = 0, overlap_s = 0, floor_s = 0, serial_hidden = 0, overlap_hidden = 0;
  REQUIRE(std::sscanf(serial.c_str(), "%lf %lf %lf", &serial_s, &floor_s, &serial_hidden) == 3);
  REQUIRE(std::sscanf(overlap.c_str(), "%lf %lf %lf", &overlap_s, &floor_s, &overlap_hidden) == 3);
  CHECK(overlap_s < serial_s);
  CHECK(overlap_s >= floor_s * (1 - 1e-9));
  CHECK(serial_hidden == 0);
  CHECK(overlap_hidden > 0);
}

TEST_CASE("two collectives sharing NICs take longer together than either alone") {
  // A dispatch (EP stream) and a gradient all-reduce (DP stream), independent,
  // so the overlap schedule runs them at once over the same NICs.
  MoeShape shape = sixteen_ranks();
  shape.layers = 1;
  shape.micro_batches = 1;
  workloads::TaskGraph full = moe_graph(shape);
  workloads::TaskGraph dispatch_only, all_reduce_only, both;
  for (auto* g : {&dispatch_only, &all_reduce_only, &both}) {
    g->ranks = full.ranks;
    g->ranks_per_node = full.ranks_per_node;
    g->traffic = full.traffic;
  }
  workloads::Task dispatch = full.tasks[2];
  REQUIRE(dispatch.kind == workloads::TaskKind::kDispatch);
  dispatch.id = 0;
  dispatch.deps.clear();
  workloads::Task all_reduce;
  all_reduce.kind = workloads::TaskKind::kGradAllReduce;
  all_reduce.phase = workloads::Phase::kGradSync;
  all_reduce.groups.emplace_back();
  for (int r = 0; r < 16; ++r) all_reduce.groups.back().push_back(r);
  all_reduce.bytes = 2e7;
  dispatch_only.tasks = {dispatch};
  all_reduce_only.tasks = {all_reduce};
  both.tasks = {dispatch, all_reduce};
  both.tasks[1].id = 1;
  auto run = [](const workloads::TaskGraph& g) {
    return number(in_child([&] {
      ReplayOptions options;
      options.algorithm = AlltoallAlgorithm::kDirect;
      options.fidelity = Fidelity::kAggregated;
      return fmt::format("{:.17g}", simulate(platform_path("four_nodes"), g, options).timeline.step_s);
    }));
  };
  const double a = run(dispatch_only), b = run(all_reduce_only), ab = run(both);
  INFO("dispatch " << a << " s, all-reduce " << b << " s, together " << ab << " s");
  CHECK(ab > std::max(a, b) * 1.01);
  CHECK(ab <= (a + b) * (1 + 1e-9));
}

TEST_CASE("same inputs and seed give a byte-identical report and trace") {
  MoeShape shape = sixteen_ranks(7, 0.2);
  shape.grad_all_reduce = true;
  const workloads::TaskGraph graph = moe_graph(shape);
  auto run = [&] {
    return in_child([&] {
      ReplayOptions options;
      options.algorithm = AlltoallAlgorithm::kHierarchical;
      options.fidelity = Fidelity::kAggregated;
      Simulation s = simulate(platform_path("four_nodes"), graph, options);
      std::ostringstream trace;
      write_trace(trace, s.timeline, s.platform, s.placement, graph);
      return format_table(s.report) + format_json(s.report) + trace.str();
    });
  };
  const std::string first = run(), second = run();
  CHECK(first.size() > 10000);
  CHECK(first == second);
}
