// The one platform path (sim/platform/platform_loader.hpp): presets build
// with the graph's routes and pass the contract; `epsim platform xml`
// exports load back with the same routes; bad XML is one InputError from
// check_platform and open_platform alike, never an abort.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include "core/error.hpp"
#include "sim/platform/platform_loader.hpp"
#include "sim_test_support.hpp"
#include "topology/platform_plan.hpp"
#include "topology/platform_xml.hpp"
#include "topology/topology_checks.hpp"

using namespace epsim;
using namespace epsim::sim;
using namespace epsim::topology;
namespace sg4 = simgrid::s4u;

namespace {

// SimGrid's parser requires the DOCTYPE line.
const std::string kHeader =
    "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
    "<platform version=\"4.1\">\n";

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
void check_routes_match_graph(const TopologyGraph& topo, const LoadedPlatform& platform) {
  REQUIRE(static_cast<int>(platform.hosts.size()) == topo.npu_count());
  for (auto [src, dst] : sample_pairs(topo)) {
    CAPTURE(src, dst);
    Route expected = topo.route(src, dst);
    std::vector<sg4::Link*> links;
    double latency = 0;
    platform.hosts[src]->route_to(platform.hosts[dst], links, &latency);
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

// The replay's flat build of a preset: the graph's routes, and every NPU
// route passes the contract (the TOML reader's ranges are the contract's).
void check_preset(const std::string& preset, const std::vector<std::string>& overrides = {}) {
  OpenPlatform open = open_platform(PlatformRequest{preset, overrides});
  REQUIRE(open.shape.cluster);
  const ClusterSpec& spec = *open.shape.cluster;
  const PlatformFacts& facts = open.loaded.facts;
  CHECK(facts.npus.front().name == "node0.npu0");
  CHECK(facts.nodes == spec.node.count);
  CHECK(facts.npus_per_node == spec.node.npus);
  CHECK(facts.npus.front().flops_bf16_per_s == spec.npu.flops_bf16);
  CHECK(facts.npus.front().hbm_bandwidth_Bps == spec.npu.hbm_bandwidth_Bps);
  check_all_routes(facts);
  check_routes_match_graph(TopologyGraph(spec), open.loaded);
}

// `epsim platform xml`'s zoned export, loaded back through the XML path.
void check_preset_xml(const std::string& preset, const std::vector<std::string>& overrides = {}) {
  ClusterSpec spec = load_cluster_spec(preset, overrides);
  TopologyGraph topo(spec);
  std::string path = std::string(EPSIM_BINARY_DIR) + "/test_" + preset + ".xml";
  {
    std::ofstream out(path);
    write_platform_xml(make_platform_plan(topo), spec.name, out);
  }
  OpenPlatform open = open_platform(PlatformRequest{path, {}});
  CHECK_FALSE(open.shape.cluster);
  CHECK(open.shape.nodes == spec.node.count);
  CHECK(open.loaded.facts.npus[0].hbm_bandwidth_Bps == spec.npu.hbm_bandwidth_Bps);
  CHECK(open.loaded.facts.npus[0].hbm_capacity_bytes == spec.npu.hbm_capacity_bytes);
  check_routes_match_graph(topo, open.loaded);
  std::remove(path.c_str());
}

std::string write_temp(const std::string& name, const std::string& text) {
  std::string path = std::string(EPSIM_BINARY_DIR) + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// The verdict of check_platform, and (in a child: one engine per process)
// of open_platform, which must be the same.
std::string verdict(const std::string& path) {
  std::string checked;
  try {
    PlatformShape s = check_platform(PlatformRequest{path, {}});
    checked = "ok " + std::to_string(s.nodes) + "x" + std::to_string(s.npus_per_node);
  } catch (const InputError& e) {
    checked = e.what();
  }
  std::string opened = testing::in_child([&] {
    OpenPlatform open = open_platform(PlatformRequest{path, {}});
    return "ok " + std::to_string(open.shape.nodes) + "x" + std::to_string(open.shape.npus_per_node);
  });
  if (opened.rfind("ERROR: ", 0) == 0) opened = opened.substr(7);
  CHECK(opened == checked);
  return checked;
}

}  // namespace

TEST_CASE("a2 preset: SimGrid routes match the graph", "[platform][preset]") { check_preset("a2"); }
TEST_CASE("a2 preset at 32 nodes: SimGrid routes match the graph", "[platform][preset]") {
  check_preset("a2", {"node.count=32"});
}
TEST_CASE("a2-spine-2to1 preset: SimGrid routes match the graph", "[platform][preset]") {
  check_preset("a2-spine-2to1", {"node.count=16"});
}
TEST_CASE("a2-nic400 preset: SimGrid routes match the graph", "[platform][preset]") {
  check_preset("a2-nic400");
}
TEST_CASE("cloudmatrix384 preset: SimGrid routes match the graph", "[platform][preset]") {
  check_preset("cloudmatrix384");
}
TEST_CASE("h800 preset: SimGrid routes match the graph", "[platform][preset]") { check_preset("h800"); }
TEST_CASE("b200 preset: SimGrid routes match the graph", "[platform][preset]") { check_preset("b200"); }
TEST_CASE("gb200-nvl72 preset: SimGrid routes match the graph", "[platform][preset]") {
  check_preset("gb200-nvl72");
}
TEST_CASE("one-node a2: SimGrid routes match the graph", "[platform][preset]") {
  check_preset("a2", {"node.count=1"});
}
TEST_CASE("per-node NIC: SimGrid routes match the graph", "[platform][preset]") {
  check_preset("a2", {"scaleout.nics=per_node", "node.count=12"});
}

TEST_CASE("a2 XML: loads back with the graph's routes", "[platform][xml]") {
  check_preset_xml("a2", {"node.count=12"});
}
TEST_CASE("cloudmatrix384 XML: loads back with the graph's routes", "[platform][xml]") {
  check_preset_xml("cloudmatrix384");
}
TEST_CASE("h800 XML: loads back with the graph's routes", "[platform][xml]") { check_preset_xml("h800"); }

TEST_CASE("malformed XML is an InputError, not an abort", "[platform][xml]") {
  std::string path =
      write_temp("bad_malformed.xml", kHeader +
                                          "<zone id=\"z\" routing=\"Full\">\n"
                                          "<host id=\"node0.npu0\" speed=\"1f\">\n</zone>\n</platform>\n");
  CHECK_THAT(verdict(path), Catch::StartsWith(path + ": error: not a valid SimGrid platform"));
}

TEST_CASE("XML that makes SimGrid abort is an InputError", "[platform][xml]") {
  std::string path = "tests/topology/bad/abort_routing.xml";
  CHECK(verdict(path) == path + ": error: not a valid SimGrid platform: Not a valid model!");
}

TEST_CASE("XML without the DOCTYPE line is rejected with the line SimGrid wants", "[platform][xml]") {
  std::string path = write_temp("bad_doctype.xml", "<?xml version='1.0'?>\n<platform version=\"4.1\"/>\n");
  CHECK_THAT(verdict(path), Catch::Contains("SimGrid requires the line <!DOCTYPE platform"));
}

TEST_CASE("XML with an unknown link in a route is an InputError", "[platform][xml]") {
  std::string path = write_temp(
      "bad_link.xml", kHeader +
                          "<zone id=\"z\" routing=\"Full\">\n"
                          "<host id=\"node0.npu0\" speed=\"1f\"/>\n"
                          "<route src=\"node0.npu0\" dst=\"node0.npu0\"><link_ctn id=\"nope\"/></route>\n"
                          "</zone>\n</platform>\n");
  CHECK_THAT(verdict(path), Catch::StartsWith(path + ": error: not a valid SimGrid platform"));
}

TEST_CASE("XML whose NPU lacks its HBM bandwidth is rejected with the host named", "[platform][xml]") {
  std::string path = write_temp(
      "bad_props.xml",
      kHeader +
          "<zone id=\"z\" routing=\"Full\">\n"
          "<host id=\"node0.npu0\" speed=\"1Tf\"/>\n"
          "<link id=\"node0.npu0.hbm\" bandwidth=\"1GBps\" latency=\"0s\"/>\n"
          "<route src=\"node0.npu0\" dst=\"node0.npu0\"><link_ctn id=\"node0.npu0.hbm\"/></route>\n"
          "</zone>\n</platform>\n");
  CHECK(verdict(path) ==
        path + ": error: host node0.npu0: property hbm_bandwidth (B/s) is required and must be > 0");
}

TEST_CASE("XML properties may be unit strings, as in SimGrid's own attributes", "[platform][xml]") {
  std::string path = write_temp(
      "unit_props.xml",
      kHeader +
          "<zone id=\"z\" routing=\"Full\">\n"
          "<host id=\"node0.npu0\" speed=\"1Tf\"><prop id=\"hbm_bandwidth\" value=\"1TBps\"/>"
          "<prop id=\"hbm_capacity\" value=\"64GiB\"/></host>\n"
          "<link id=\"node0.npu0.hbm\" bandwidth=\"1TBps\" latency=\"0s\"/>\n"
          "<route src=\"node0.npu0\" dst=\"node0.npu0\"><link_ctn id=\"node0.npu0.hbm\"/></route>\n"
          "</zone>\n</platform>\n");
  CHECK(verdict(path) == "ok 1x1");
}

TEST_CASE("XML with no NPU host is rejected", "[platform][xml]") {
  std::string path =
      write_temp("bad_nonpu.xml", kHeader +
                                      "<zone id=\"z\" routing=\"Full\">\n"
                                      "<host id=\"gpu0\" speed=\"1f\"/>\n</zone>\n</platform>\n");
  CHECK_THAT(verdict(path), Catch::Contains("no NPU host named node{N}.npu{I}"));
}

TEST_CASE("XML with a missing route between NPUs fails the check, not the run", "[platform][xml]") {
  // Two NPUs with loopbacks but no route between them: the run would meet
  // it only when the pair first talks; the check fetches every pair.
  std::string host = "<prop id=\"hbm_bandwidth\" value=\"1e12\"/>";
  std::string path = write_temp(
      "bad_no_route.xml",
      kHeader + "<zone id=\"z\" routing=\"Full\">\n" + "<host id=\"node0.npu0\" speed=\"1Tf\">" + host +
          "</host>\n<host id=\"node0.npu1\" speed=\"1Tf\">" + host + "</host>\n" +
          "<link id=\"node0.npu0.hbm\" bandwidth=\"1TBps\" latency=\"0s\"/>\n"
          "<link id=\"node0.npu1.hbm\" bandwidth=\"1TBps\" latency=\"0s\"/>\n"
          "<route src=\"node0.npu0\" dst=\"node0.npu0\"><link_ctn id=\"node0.npu0.hbm\"/></route>\n"
          "<route src=\"node0.npu1\" dst=\"node0.npu1\"><link_ctn id=\"node0.npu1.hbm\"/></route>\n"
          "</zone>\n</platform>\n");
  std::string checked;
  try {
    check_platform(PlatformRequest{path, {}});
  } catch (const InputError& e) {
    checked = e.what();
  }
  CHECK_THAT(checked, Catch::StartsWith(path + ": error: "));
  CHECK_THAT(checked, Catch::Contains("node0.npu0") && Catch::Contains("node0.npu1"));
}

TEST_CASE("a cluster too small for the ranks is reported at node.count with the count needed", "[platform]") {
  const PlatformShape a2 = check_platform(PlatformRequest{"a2", {}});
  std::string message;
  try {
    check_ranks_fit(a2, 64, 8);
  } catch (const InputError& e) {
    message = e.what();
  }
  CHECK_THAT(message, Catch::StartsWith("platforms/a2.toml:") &&
                          Catch::EndsWith(": error: node.count: 64 ranks at 8 per node need 8 nodes; the platform has 4"));
  const PlatformShape set = check_platform(PlatformRequest{"a2", {"node.count=2"}});
  try {
    check_ranks_fit(set, 32, 8);
  } catch (const InputError& e) {
    message = e.what();
  }
  CHECK(message == "--set node.count=2: error: node.count: 32 ranks at 8 per node need 4 nodes; the platform has 2");
  CHECK_NOTHROW(check_ranks_fit(a2, 32, 8));
}
