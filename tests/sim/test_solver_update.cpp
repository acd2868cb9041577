// SimGrid's ptask_L07 asks for a solver with selective update; epsim builds
// the same fair-bottleneck solver without it (sim_engine.cpp), which must
// change nothing but the time the replay takes: every interval of a step,
// its link bytes and its activity count equal, to the last bit, those of
// the solver as SimGrid builds it. Each simulation runs in a forked child.
#include <string>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "sim/platform/platform_loader.hpp"
#include "sim/platform/sim_engine.hpp"
#include "sim/simulate.hpp"
#include "sim_test_support.hpp"
#include "workloads/task_graph_builder.hpp"
#include "workloads/workload_loader.hpp"

using namespace epsim;
using namespace epsim::sim;
using epsim::sim::testing::in_child;

namespace {

// The step's every number, printed exactly, and whether this process's
// solver ran without selective update.
std::string step_digest(const workloads::TaskGraph& graph, const PlatformRequest& platform, bool keep_selective_update) {
  return in_child([&] {
    EngineOptions engine;
    engine.keep_selective_update = keep_selective_update;
    ReplayOptions options;
    options.compute_fallback = workloads::Dtype::kBf16;  // the 910B has no fp8 peak
    const Simulation s = simulate(platform, graph, options, engine);
    std::string out = fmt::format("without={} step={:.17g} activities={}\n", solver_without_selective_update(),
                                  s.timeline.step_s, s.timeline.activities);
    for (const Interval& i : s.timeline.intervals)
      out += fmt::format("{} {} {} {:.17g} {:.17g} {:.17g}\n", i.rank, static_cast<int>(i.stream), i.task, i.ready_s,
                         i.start_s, i.end_s);
    for (double b : s.timeline.link_bytes) out += fmt::format("{:.17g} ", b);
    return out;
  });
}

}  // namespace

TEST_CASE("the solver without selective update replays a skewed step to the same bits") {
  // DeepSeek-V3's layers at EP32 on 4 a2 nodes, zipf routing: fused kernels,
  // pipelined hierarchical dispatch/combine with stand-ins, a hot rank,
  // gradient sync beside the backward.
  const workloads::WorkloadSpec w = workloads::load_workload(
      "deepseek-v3", {"parallel.ep=32", "model.layers=5", "routing.kind=zipf", "routing.zipf_s=1.2"});
  const workloads::TaskGraph graph = workloads::build_task_graph(w);
  const PlatformRequest platform{"a2", {"node.count=4"}};
  const std::string without = step_digest(graph, platform, false);
  const std::string with = step_digest(graph, platform, true);
  REQUIRE(without.rfind("without=true ", 0) == 0);  // the stand-in factory is what SimGrid called
  REQUIRE(with.rfind("without=false ", 0) == 0);
  CHECK(without.substr(without.find(' ')) == with.substr(with.find(' ')));
  CHECK(without.size() > 10000);  // the digest holds the step's intervals
}
