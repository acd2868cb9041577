// The graph topology: routes, bottlenecks, bisection and diameter on small
// clusters whose answers are known by hand.
#include <catch2/catch.hpp>

#include "core/toml_reader.hpp"
#include "topology/platform_plan.hpp"
#include "topology/platform_size.hpp"
#include "topology/topology_checks.hpp"
#include "topology/topology_graph.hpp"

using namespace epsim;
using namespace epsim::topology;

namespace {

ClusterSpec preset(const std::string& name, const std::vector<std::string>& overrides = {}) {
  return load_cluster_spec(name, overrides);
}

std::vector<std::string> names_of(const Route& r) {
  std::vector<std::string> out;
  for (const RouteLink& l : r.links) out.push_back(l.name);
  return out;
}

}  // namespace

TEST_CASE("a2 routes: HBM at both ends, HCCS inside a node, NIC-leaf-spine across", "[graph]") {
  TopologyGraph g(preset("a2", {"node.count=8"}));
  CHECK(names_of(g.route(3, 3)) == std::vector<std::string>{"node0.npu3.hbm"});
  CHECK(names_of(g.route(6, 2)) ==
        std::vector<std::string>{"node0.npu6.hbm", "node0.npu2-npu6_DOWN", "node0.npu2.hbm"});
  Route same_leaf = g.route(0, 8);
  CHECK(names_of(same_leaf) == std::vector<std::string>{"node0.npu0.hbm", "node0.npu0.nic_UP", "leaf0",
                                                        "node1.npu0.nic_DOWN", "node1.npu0.hbm"});
  CHECK(same_leaf.bottleneck_Bps == 25e9);
  CHECK(same_leaf.latency_s == Approx(2e-6 + 0.5e-6 + 2e-6));
  Route other_leaf = g.route(0, 4 * 8 + 5);
  CHECK(names_of(other_leaf) == std::vector<std::string>{"node0.npu0.hbm", "node0.npu0.nic_UP", "leaf0",
                                                         "spine-leaf0_UP", "spine", "spine-leaf1_DOWN",
                                                         "leaf1", "node4.npu5.nic_DOWN", "node4.npu5.hbm"});
  CHECK(other_leaf.latency_s == Approx(2e-6 + 3 * 0.5e-6 + 2e-6));
  CHECK(other_leaf.hops == 4);
}

TEST_CASE("pair classes of a2: same node, other node, other leaf", "[graph]") {
  TopologyGraph g(preset("a2", {"node.count=8"}));
  std::vector<PairClass> classes = pair_classes(g);
  REQUIRE(classes.size() == 3);
  CHECK(classes[0].route.bottleneck_Bps == 56e9);
  CHECK(classes[1].route.bottleneck_Bps == 25e9);
  CHECK(classes[2].route.bottleneck_Bps == 25e9);
  CHECK(classes[2].name == "other leaf");
}

TEST_CASE("bisection bandwidth by max-flow", "[graph]") {
  // One a2 node: halves {0..3} and {4..7}: 16 HCCS pairs x 56 GB/s, plus
  // 4 NICs x 25 GB/s through the leaf.
  CHECK(bisection_bandwidth_Bps(TopologyGraph(preset("a2", {"node.count=1"}))) ==
        Approx(16 * 56e9 + 4 * 25e9));
  // Eight a2 nodes in two leaves: the cut is the spine links, 32 NICs x 25 GB/s
  // per leaf at 1:1, half of it at 2:1 (the leaves' uplinks bind before the NICs).
  CHECK(bisection_bandwidth_Bps(TopologyGraph(preset("a2", {"node.count=8"}))) == Approx(32 * 25e9));
  CHECK(bisection_bandwidth_Bps(TopologyGraph(preset("a2-spine-2to1", {"node.count=8"}))) ==
        Approx(16 * 25e9));
  // CloudMatrix384: 192 ports of 392 GB/s on each side of a non-blocking switch.
  CHECK(bisection_bandwidth_Bps(TopologyGraph(preset("cloudmatrix384"))) == Approx(192 * 392e9));
  // GB200 NVL72: 36 NVLink ports of 900 GB/s (x the carried 0.6806) on each side of its switch trays.
  CHECK(bisection_bandwidth_Bps(TopologyGraph(preset("gb200-nvl72"))) == Approx(36 * 900e9 * 0.6806));
}

TEST_CASE("diameter in hops and connectivity", "[graph]") {
  CHECK(diameter_hops(TopologyGraph(preset("a2", {"node.count=1"}))) == 1);  // full mesh
  CHECK(diameter_hops(TopologyGraph(preset("a2", {"node.count=4"}))) == 2);  // NIC, leaf, NIC
  CHECK(diameter_hops(TopologyGraph(preset("a2", {"node.count=8"}))) == 4);  // via the spine
  CHECK(diameter_hops(TopologyGraph(preset("h800"))) == 2);
  // The two-node search equals the search from every NPU, partial last leaf included.
  for (const auto& [name, sets] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"a2", {"node.count=6"}},
           {"a2", {"node.count=9", "scaleout.nodes_per_leaf=2"}},
           {"h800", {"node.count=5"}},
           {"a2", {"node.count=6", "scaleout.nics=\"per_node\""}},
           {"h800", {"node.count=3", "scaleout.fabric=\"rail\""}},
           {"h800", {"node.count=1", "node.npus=64"}},
           {"a2", {"node.count=2", "node.npus=16"}},
           {"cloudmatrix384", {}}}) {
    const TopologyGraph topo(preset(name, sets));
    CHECK(diameter_hops(topo) == diameter_hops_every_npu(topo));
  }
  CHECK(is_connected(TopologyGraph(preset("h800"))));
}

TEST_CASE("the platform plan grows linearly with nodes", "[graph][plan]") {
  PlatformPlan small = make_platform_plan(TopologyGraph(preset("a2", {"node.count=8"})));
  PlatformPlan large = make_platform_plan(TopologyGraph(preset("a2", {"node.count=32"})));
  CHECK(small.host_count == 64);
  CHECK(large.host_count == 256);
  // Per node: 8 loopbacks + 28 HCCS pairs + 8 NIC routes; per leaf: node
  // pairs and routes to its switch; leaf pairs at the root.
  CHECK(large.route_count == 32 * 44 + 8 * 10 + 28);
  CHECK(large.route_count < 5 * small.route_count);
}

TEST_CASE("platform_size counts the graph's links without building it", "[graph][size]") {
  for (const auto& [name, sets] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"a2", {"node.count=9", "scaleout.nodes_per_leaf=2"}},
           {"a2", {"node.count=3", "scaleout.nics=\"per_node\""}},
           {"a2", {"node.count=1", "node.npus=64"}},
           {"h800", {"node.count=3"}},
           {"a2-nic400", {}},
           {"cloudmatrix384", {}},
           {"atlas950", {"node.count=4"}}}) {
    INFO(name);
    const TopologyGraph topo(preset(name, sets));
    const PlatformSize size = platform_size(topo.spec());
    std::int64_t cables = 0, node_cables = 0, shared = 0;
    for (auto [e, end] = boost::edges(topo.graph()); e != end; ++e) {
      const TopoEdge& edge = topo.graph()[*e];
      if (edge.internal) continue;
      ++cables;
      const TopoVertex& a = topo.graph()[boost::source(*e, topo.graph())];
      const TopoVertex& b = topo.graph()[boost::target(*e, topo.graph())];
      // Inside a node: NPU to NPU (mesh) or NPU to its node's switch.
      if (a.node >= 0 && b.node >= 0 && a.kind != VertexKind::kNic && b.kind != VertexKind::kNic) ++node_cables;
    }
    for (auto [v, end] = boost::vertices(topo.graph()); v != end; ++v) shared += topo.graph()[*v].link.name.empty() ? 0 : 1;
    CHECK(size.npus == topo.npu_count());
    CHECK(size.cables == cables);
    CHECK(size.node_cables == node_cables);
    CHECK(size.shared_links == shared);
  }
}

TEST_CASE("a graph above the memory limit is refused before it is built, at the key that grows it", "[graph][size]") {
  // A node of 4,096 NPUs as a full mesh: 8.4 million links (4.3 GiB at ~550 B each).
  CHECK_THROWS_WITH(TopologyGraph(preset("a2", {"node.count=1", "node.npus=4096"})),
                    "--set node.npus=4096: error: node.npus: building 4096 NPUs needs an estimated 4.3 GiB (the "
                    "topology graph: 8390656 links x ~550 B), above the limit of 4 GiB (EPSIM_MEMORY_LIMIT_GIB raises it)");
  CHECK(platform_size(preset("a2", {"node.count=1", "node.npus=4096"})).node_cables == 4096LL * 4095 / 2);
}
