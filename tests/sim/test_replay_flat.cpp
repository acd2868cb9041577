// The flattened platform the replay uses for cluster presets times exactly
// like topology's zoned platform: same step, same bounds, same link bytes.
#include <cstdio>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "sim/platform/flat_platform.hpp"
#include "sim/simulate.hpp"
#include "sim_test_support.hpp"
#include "topology/simgrid_platform.hpp"

using namespace epsim;
using namespace epsim::sim;

TEST_CASE("the flattened A2 platform gives the zoned platform's step, bounds and link bytes") {
  const topology::ClusterSpec cluster = topology::load_cluster_spec("a2", {"node.count=2"});
  testing::MoeShape shape;
  shape.ranks = 16;
  shape.ranks_per_node = 8;
  shape.weights.assign(16, 0.5 / 15);
  shape.weights[9] = 0.5;
  shape.grad_all_reduce = true;
  const workloads::TaskGraph graph = testing::moe_graph(shape);
  auto run = [&](bool flat) {
    return testing::in_child([&] {
      Simulation s = simulate(
          "a2",
          [&] {
            if (flat)
              build_flat_platform(cluster);
            else
              topology::build_platform(cluster);
          },
          graph);
      std::string out = fmt::format("{:.17g} {:.17g}", s.timeline.step_s, s.bounds.step_s);
      for (const LinkRow& l : s.report.busiest_links) out += fmt::format(" {}={:.17g}", l.link, l.bytes);
      return out;
    });
  };
  const std::string flat = run(true), zoned = run(false);
  INFO("flat: " << flat << "\nzoned: " << zoned);
  CHECK(flat.rfind("ERROR", 0) != 0);
  CHECK(flat == zoned);
}
