// A graph whose routing arrives while the replay runs (RoutingFeed, as
// `epsim run` replays) replays to the same step, to the last bit, as the
// graph built from the whole sample; each job is asked for once, when the
// replay reaches it, not before the replay starts. Each simulation runs in
// a forked child.
#include <cstdio>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <simgrid/s4u/Engine.hpp>

#include "sim/platform/platform_loader.hpp"
#include "sim/simulate.hpp"
#include "sim_test_support.hpp"
#include "workloads/routing_stream.hpp"
#include "workloads/task_graph_builder.hpp"
#include "workloads/workload_loader.hpp"

using namespace epsim;
using namespace epsim::sim;
using epsim::sim::testing::in_child;
using epsim::sim::testing::platform_path;

TEST_CASE("a graph filled as the replay reaches each layer replays to the whole sample's step") {
  // 16 ranks on four_nodes (4 per node), 4 MoE layers x 3 micro-batches, zipf routing.
  const workloads::WorkloadSpec w =
      workloads::load_workload("tiny-moe", {"parallel.ep=16", "parallel.ranks_per_node=4", "parallel.micro_batches=3",
                                            "model.layers=5"});
  const PlatformRequest platform{platform_path("four_nodes"), {}};
  const std::string whole = in_child([&] {
    const Simulation s = simulate(check_platform(platform), workloads::build_task_graph(w));
    return fmt::format("{:.17g} {:.17g}", s.timeline.step_s, s.bounds.step_s);
  });
  const std::string streamed = in_child([&] {
    workloads::RoutingStream routing(w, 2);
    workloads::TaskGraph graph = workloads::build_task_graph(w, routing.placeholder());
    std::vector<int> asked(static_cast<std::size_t>(routing.jobs()), 0);
    std::vector<double> asked_at_s(asked.size(), -1);
    const RoutingFeed feed = [&](int job) {
      ++asked[static_cast<std::size_t>(job)];
      asked_at_s[static_cast<std::size_t>(job)] = simgrid::s4u::Engine::get_clock();
      workloads::fill_routing(graph, w, job, routing.take(job));
    };
    const Simulation s = simulate(check_platform(platform), graph, {}, {}, {}, std::nullopt, &feed);
    int once = 0;
    for (int n : asked) once += n == 1 ? 1 : 0;
    // The first dispatch starts after the first layer's attention; the last job later still.
    const bool as_reached = asked_at_s.front() > 0 && asked_at_s.back() > asked_at_s.front();
    return fmt::format("{:.17g} {:.17g} once={} as_reached={}", s.timeline.step_s, s.bounds.step_s, once, as_reached);
  });
  INFO(whole);
  INFO(streamed);
  CHECK(streamed == whole + " once=12 as_reached=true");
}
