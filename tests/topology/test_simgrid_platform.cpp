// SimGrid platforms built from presets and XML: routes agree with the graph,
// the XML writer and the C++ builder agree, bad XML is an error not an abort.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include "core/error.hpp"
#include "topology/platform_plan.hpp"
#include "topology/platform_xml.hpp"
#include "topology/simgrid_platform.hpp"
#include "topology/topology_checks.hpp"

using namespace epsim;
using namespace epsim::topology;
namespace sg4 = simgrid::s4u;

namespace {

// SimGrid's parser requires the DOCTYPE line.
const std::string kHeader =
    "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
    "<platform version=\"4.1\">\n";

std::unique_ptr<sg4::Engine> make_engine() {
  static int argc = 1;
  static char name[] = "test_simgrid_platform";
  static char* argv[] = {name, nullptr};
  auto engine = std::make_unique<sg4::Engine>(&argc, argv);
  configure_engine();
  return engine;
}

// Sample pairs: each class of pair_classes, the last NPU, and a loopback.
std::vector<std::pair<int, int>> sample_pairs(const TopologyGraph& topo) {
  std::vector<std::pair<int, int>> pairs;
  for (const PairClass& c : pair_classes(topo)) pairs.emplace_back(c.src, c.dst);
  int last = topo.npu_count() - 1;
  pairs.emplace_back(last, 0);
  pairs.emplace_back(1 % topo.npu_count(), last);
  pairs.emplace_back(last, last);
  return pairs;
}

// SimGrid's route_to for each sample pair: same links (names, order), and so
// the same latency and bottleneck bandwidth, as the graph's route.
void check_routes_match_graph(const TopologyGraph& topo, const std::vector<NpuHost>& npus) {
  REQUIRE(static_cast<int>(npus.size()) == topo.npu_count());
  for (auto [src, dst] : sample_pairs(topo)) {
    CAPTURE(src, dst);
    Route expected = topo.route(src, dst);
    std::vector<sg4::Link*> links;
    double latency = 0;
    sg4::Host::by_name(npus[src].name)->route_to(sg4::Host::by_name(npus[dst].name), links, &latency);
    std::vector<std::string> names;
    double bottleneck = 1e300;
    for (sg4::Link* l : links) {
      names.push_back(l->get_name());
      bottleneck = std::min(bottleneck, l->get_bandwidth());
    }
    std::vector<std::string> expected_names;
    for (const RouteLink& l : expected.links) expected_names.push_back(l.name);
    CHECK(names == expected_names);
    CHECK(latency == Approx(expected.latency_s).epsilon(1e-12));
    CHECK(bottleneck == Approx(expected.bottleneck_Bps).epsilon(1e-12));
  }
}

void check_preset(const std::string& preset, const std::vector<std::string>& overrides = {}) {
  auto engine = make_engine();
  ClusterSpec spec = load_cluster_spec(preset, overrides);
  TopologyGraph topo(spec);
  std::vector<NpuHost> npus = build_platform(spec);
  CHECK(npus.front().name == "node0.npu0");
  CHECK(npus.back().node == spec.node.count - 1);
  CHECK(npus.back().local == spec.node.npus - 1);
  CHECK(sg4::Host::by_name(npus[0].name)->get_speed() == spec.npu.flops_bf16);
  check_routes_match_graph(topo, npus);
}

void check_preset_xml(const std::string& preset, const std::vector<std::string>& overrides = {}) {
  auto engine = make_engine();
  ClusterSpec spec = load_cluster_spec(preset, overrides);
  TopologyGraph topo(spec);
  std::string path = std::string(EPSIM_BINARY_DIR) + "/test_" + preset + ".xml";
  {
    std::ofstream out(path);
    write_platform_xml(make_platform_plan(topo), spec.name, out);
  }
  std::vector<NpuHost> npus = load_platform_xml(path);
  CHECK(npus[0].hbm_bandwidth_Bps == spec.npu.hbm_bandwidth_Bps);
  CHECK(npus[0].hbm_capacity_bytes == spec.npu.hbm_capacity_bytes);
  check_routes_match_graph(topo, npus);
  std::remove(path.c_str());
}

std::string write_temp(const std::string& name, const std::string& text) {
  std::string path = std::string(EPSIM_BINARY_DIR) + "/" + name;
  std::ofstream(path) << text;
  return path;
}

std::string load_error(const std::string& path) {
  try {
    load_platform_xml(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("a2 preset: SimGrid routes match the graph", "[simgrid][preset]") { check_preset("a2"); }
TEST_CASE("a2 preset at 32 nodes: SimGrid routes match the graph", "[simgrid][preset]") {
  check_preset("a2", {"node.count=32"});
}
TEST_CASE("a2-spine-2to1 preset: SimGrid routes match the graph", "[simgrid][preset]") {
  check_preset("a2-spine-2to1", {"node.count=16"});
}
TEST_CASE("a2-nic400 preset: SimGrid routes match the graph", "[simgrid][preset]") {
  check_preset("a2-nic400");
}
TEST_CASE("cloudmatrix384 preset: SimGrid routes match the graph", "[simgrid][preset]") {
  check_preset("cloudmatrix384");
}
TEST_CASE("h800 preset: SimGrid routes match the graph", "[simgrid][preset]") { check_preset("h800"); }
TEST_CASE("one-node a2: SimGrid routes match the graph", "[simgrid][preset]") {
  check_preset("a2", {"node.count=1"});
}
TEST_CASE("per-node NIC: SimGrid routes match the graph", "[simgrid][preset]") {
  check_preset("a2", {"scaleout.nics=per_node", "node.count=12"});
}

TEST_CASE("a2 XML: loads back with the graph's routes", "[simgrid][xml]") {
  check_preset_xml("a2", {"node.count=12"});
}
TEST_CASE("cloudmatrix384 XML: loads back with the graph's routes", "[simgrid][xml]") {
  check_preset_xml("cloudmatrix384");
}
TEST_CASE("h800 XML: loads back with the graph's routes", "[simgrid][xml]") { check_preset_xml("h800"); }

TEST_CASE("malformed XML is an InputError, not an abort", "[simgrid][xml]") {
  auto engine = make_engine();
  std::string path =
      write_temp("bad_malformed.xml", kHeader +
                                          "<zone id=\"z\" routing=\"Full\">\n"
                                          "<host id=\"node0.npu0\" speed=\"1f\">\n</zone>\n</platform>\n");
  std::string message = load_error(path);
  CHECK_THAT(message, Catch::StartsWith(path + ": error: not a valid SimGrid platform"));
}

TEST_CASE("XML that makes SimGrid abort is an InputError", "[simgrid][xml]") {
  auto engine = make_engine();
  std::string path = "tests/topology/bad/abort_routing.xml";
  CHECK(load_error(path) == path + ": error: not a valid SimGrid platform: Not a valid model!");
}

TEST_CASE("XML with an unknown link in a route is an InputError", "[simgrid][xml]") {
  auto engine = make_engine();
  std::string path = write_temp(
      "bad_link.xml", kHeader +
                          "<zone id=\"z\" routing=\"Full\">\n"
                          "<host id=\"node0.npu0\" speed=\"1f\"/>\n"
                          "<route src=\"node0.npu0\" dst=\"node0.npu0\"><link_ctn id=\"nope\"/></route>\n"
                          "</zone>\n</platform>\n");
  CHECK_THAT(load_error(path), Catch::StartsWith(path + ": error: not a valid SimGrid platform"));
}

TEST_CASE("XML without NPU hosts or properties is rejected with the host named", "[simgrid][xml]") {
  auto engine = make_engine();
  std::string path = write_temp(
      "bad_props.xml",
      kHeader +
          "<zone id=\"z\" routing=\"Full\">\n"
          "<host id=\"node0.npu0\" speed=\"1f\"/>\n"
          "<link id=\"node0.npu0.hbm\" bandwidth=\"1GBps\" latency=\"0s\"/>\n"
          "<route src=\"node0.npu0\" dst=\"node0.npu0\"><link_ctn id=\"node0.npu0.hbm\"/></route>\n"
          "</zone>\n</platform>\n");
  CHECK(load_error(path) == path + ": error: node0.npu0: missing host property \"flops_bf16\"");
}

TEST_CASE("XML whose NPU loopback is not its HBM link is rejected", "[simgrid][xml]") {
  auto engine = make_engine();
  std::string path =
      write_temp("bad_loopback.xml",
                 kHeader +
                     "<zone id=\"z\" routing=\"Full\">\n"
                     "<host id=\"node0.npu0\" speed=\"1f\"><prop id=\"flops_bf16\" value=\"1\"/><prop "
                     "id=\"flops_fp8\" value=\"2\"/>"
                     "<prop id=\"hbm_bandwidth\" value=\"1e9\"/><prop id=\"hbm_capacity\" value=\"1e9\"/>"
                     "<prop id=\"node\" value=\"0\"/><prop id=\"local\" value=\"0\"/></host>\n"
                     "<link id=\"other\" bandwidth=\"1GBps\" latency=\"0s\"/>\n"
                     "<route src=\"node0.npu0\" dst=\"node0.npu0\"><link_ctn id=\"other\"/></route>\n"
                     "</zone>\n</platform>\n");
  CHECK(load_error(path) ==
        path +
            ": error: node0.npu0: the route from an NPU to itself must be exactly its link "
            "\"node0.npu0.hbm\"");
}

TEST_CASE("XML with no NPU host is rejected", "[simgrid][xml]") {
  auto engine = make_engine();
  std::string path =
      write_temp("bad_nonpu.xml", kHeader +
                                      "<zone id=\"z\" routing=\"Full\">\n"
                                      "<host id=\"gpu0\" speed=\"1f\"/>\n</zone>\n</platform>\n");
  CHECK_THAT(load_error(path), Catch::Contains("no NPU host found"));
}
