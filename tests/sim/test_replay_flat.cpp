// The flattened platform the replay builds for cluster presets times exactly
// like the zoned platform `epsim platform xml` exports for them (loaded back
// through the XML path): same step, same bounds, same link bytes.
#include <cstdio>
#include <fstream>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "sim/simulate.hpp"
#include "sim_test_support.hpp"
#include "topology/platform_plan.hpp"
#include "topology/platform_xml.hpp"

using namespace epsim;
using namespace epsim::sim;

// A step's time, its bound and its busiest links' bytes, to every digit:
// two builds of one platform must print the same text.
static std::string timings_text(const Simulation& s) {
  std::string out = fmt::format("{:.17g} {:.17g}", s.timeline.step_s, s.bounds.step_s);
  for (const LinkRow& l : s.report.busiest_links) out += fmt::format(" {}={:.17g}", l.link, l.bytes);
  return out;
}

TEST_CASE("the flattened A2 platform gives its zoned XML export's step, bounds and link bytes") {
  const topology::ClusterSpec cluster = topology::load_cluster_spec("a2", {"node.count=2"});
  testing::MoeShape shape;
  shape.ranks = 16;
  shape.ranks_per_node = 8;
  shape.weights.assign(16, 0.5 / 15);
  shape.weights[9] = 0.5;
  shape.grad_all_reduce = true;
  const workloads::TaskGraph graph = testing::moe_graph(shape);
  const std::string xml = std::string(EPSIM_BINARY_DIR) + "/flat_vs_zoned_a2.xml";
  {
    std::ofstream out(xml);
    topology::write_platform_xml(topology::make_platform_plan(topology::TopologyGraph(cluster)), cluster.name, out);
  }
  auto run = [&](bool flat) {
    return testing::in_child([&] {
      // The XML export names no stack: compare both on the plain roofline.
      const std::vector<std::string> plain = {"node.count=2", "stack.name=roofline"};
      Simulation s = flat ? simulate(PlatformRequest{"a2", plain}, graph) : simulate(xml, graph);
      return timings_text(s);
    });
  };
  const std::string flat = run(true), zoned = run(false);
  INFO("flat: " << flat << "\nzoned: " << zoned);
  CHECK(flat.rfind("ERROR", 0) != 0);
  CHECK(flat == zoned);
}

TEST_CASE("the zoned build of large clusters gives the flat build's step, bounds and link bytes") {
  const topology::ClusterSpec cluster = topology::load_cluster_spec("a2", {"node.count=8", "scaleout.nodes_per_leaf=2"});
  testing::MoeShape shape;
  shape.ranks = 64;
  shape.ranks_per_node = 8;
  shape.weights.assign(64, 0.5 / 63);
  shape.weights[9] = 0.5;
  shape.grad_all_reduce = true;
  const workloads::TaskGraph graph = testing::moe_graph(shape);
  auto run = [&](bool flat) {
    return testing::in_child([&] {
      OpenPlatform open = open_platform(cluster, {}, flat);
      const ReplayOptions options = resolve_for(open.loaded, graph, {});
      const Simulation s = simulate_on(open, graph, options);
      return timings_text(s);
    });
  };
  const std::string flat = run(true), zoned = run(false);
  INFO("flat: " << flat << "\nzoned: " << zoned);
  CHECK(flat.rfind("ERROR", 0) != 0);
  CHECK(flat == zoned);
}
