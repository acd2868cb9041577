// Platforms that break the contract fail with a message naming the file and
// the host, link or route at fault: a table of small inline XML variants,
// each checked (check_platform) and opened (open_platform, in its own child
// process: one SimGrid engine each), with the same verdict from both.
#include <cstdio>
#include <fstream>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "core/error.hpp"
#include "sim/platform/platform_loader.hpp"
#include "sim_test_support.hpp"

using namespace epsim::sim;

namespace {

// One node of two NPUs following the contract; `edit` swaps one piece.
std::string platform(const std::string& npu1_props, const std::string& hbm1, const std::string& loop1,
                     const std::string& extra_host = "") {
  return fmt::format(R"(<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="world" routing="Full">
    <host id="node0.npu0" speed="1Tf"><prop id="hbm_bandwidth" value="1e12"/></host>
    <host id="node0.npu1" speed="1Tf">{}</host>
    {}
    <link id="node0.npu0.hbm" bandwidth="1TBps" latency="0"/>
    {}
    <link id="node0.npu0-npu1" bandwidth="50GBps" latency="1us"/>
    <route src="node0.npu0" dst="node0.npu0" symmetrical="NO"><link_ctn id="node0.npu0.hbm"/></route>
    {}
    <route src="node0.npu0" dst="node0.npu1"><link_ctn id="node0.npu0.hbm"/><link_ctn id="node0.npu0-npu1"/><link_ctn id="node0.npu1.hbm"/></route>
  </zone>
</platform>
)",
                     npu1_props, extra_host, hbm1, loop1);
}

const std::string kProps = R"(<prop id="hbm_bandwidth" value="1e12"/>)";
const std::string kHbm = R"(<link id="node0.npu1.hbm" bandwidth="1TBps" latency="0"/>)";
const std::string kLoop =
    R"(<route src="node0.npu1" dst="node0.npu1" symmetrical="NO"><link_ctn id="node0.npu1.hbm"/></route>)";

std::string load(const std::string& xml, const std::string& name) {
  const std::string path = fmt::format("{}/bad_platform_{}.xml", EPSIM_BINARY_DIR, name);
  std::ofstream(path) << xml;
  std::string checked;
  try {
    const PlatformShape shape = check_platform(PlatformRequest{path, {}});
    checked = fmt::format("ok {} npus", shape.nodes * shape.npus_per_node);
  } catch (const epsim::InputError& e) {
    checked = std::string("ERROR: ") + e.what();
  }
  const std::string opened = testing::in_child([&] {
    OpenPlatform p = open_platform(PlatformRequest{path, {}});
    return fmt::format("ok {} npus", p.loaded.facts.npus.size());
  });
  CHECK(checked == opened);
  return opened;
}

}  // namespace

TEST_CASE("platforms that break the contract are rejected with the culprit named") {
  struct Case {
    const char* name;
    std::string xml;
    const char* expected;  // substring of the message
  };
  const Case cases[] = {
      {"valid", platform(kProps, kHbm, kLoop), "ok 2 npus"},
      {"no_hbm_property", platform("", kHbm, kLoop), "host node0.npu1: property hbm_bandwidth (B/s) is required"},
      {"bad_number", platform(R"(<prop id="hbm_bandwidth" value="fast"/>)", kHbm, kLoop),
       "host node0.npu1 property hbm_bandwidth"},
      {"unit_string", platform(R"(<prop id="hbm_bandwidth" value="1TBps"/>)", kHbm, kLoop), "ok 2 npus"},
      {"bf16_not_speed", platform(kProps + R"(<prop id="flops_bf16" value="2e12"/>)", kHbm, kLoop),
       "property flops_bf16 (2e+12) must equal the host speed"},
      {"share_too_big", platform(kProps + R"(<prop id="comm_compute_share" value="1"/>)", kHbm, kLoop),
       "comm_compute_share must be in [0, 1)"},
      {"node_mismatch", platform(kProps + R"(<prop id="node" value="3"/>)", kHbm, kLoop),
       "property node is \"3\" but the name says 0"},
      {"no_hbm_link", platform(kProps, R"(<link id="node0.npu1.mem" bandwidth="1TBps" latency="0"/>)",
                               R"(<route src="node0.npu1" dst="node0.npu1" symmetrical="NO"><link_ctn id="node0.npu1.mem"/></route>)"),
       "node0.npu1.hbm"},
      {"hbm_bandwidth_differs", platform(kProps, R"(<link id="node0.npu1.hbm" bandwidth="2TBps" latency="0"/>)", kLoop),
       "link node0.npu1.hbm: bandwidth 2e+12 B/s differs"},
      {"hbm_latency", platform(kProps, R"(<link id="node0.npu1.hbm" bandwidth="1TBps" latency="1us"/>)", kLoop),
       "an HBM link must have latency 0"},
      {"no_loopback", platform(kProps, kHbm, ""), "route node0.npu1 -> node0.npu1"},
      {"grid_hole", platform(kProps, kHbm, kLoop, R"(<host id="node1.npu1" speed="1Tf"/>)"),
       "missing host node1.npu0"},
      {"not_xml", "<platform", "not a valid SimGrid platform"},
      // Physical ranges (core/physical_ranges.hpp), on every link and host figure.
      {"link_bandwidth_tiny", platform(kProps, kHbm, kLoop, R"(<link id="spare" bandwidth="1e-300Bps" latency="0"/>)"),
       "link spare: bandwidth 1e-300 B/s is outside the physical range [1000, 1e+15] B/s"},
      {"link_latency_huge", platform(kProps, kHbm, kLoop, R"(<link id="spare" bandwidth="1GBps" latency="1e300s"/>)"),
       "link spare: latency 1e+300 s is outside the physical range [0, 1] s"},
      {"hbm_capacity_tiny", platform(kProps + R"(<prop id="hbm_capacity" value="1"/>)", kHbm, kLoop),
       "host node0.npu1 property hbm_capacity: 1 B is outside the physical range [1e+06, 1e+15] B, got \"1\""},
      {"flops_huge", platform(kProps + R"(<prop id="flops_fp32" value="1e30"/>)", kHbm, kLoop),
       "host node0.npu1 property flops_fp32: 1e+30 FLOP/s is outside the physical range [1e+06, 1e+18] FLOP/s"},
      {"share_as_unit", platform(kProps + R"(<prop id="comm_compute_share" value="0.1Tf"/>)", kHbm, kLoop),
       "host node0.npu1 property comm_compute_share: expected a plain number, got \"0.1Tf\""},
  };
  for (const Case& c : cases) {
    std::string out = load(c.xml, c.name);
    INFO(c.name << ": " << out);
    CHECK(out.find(c.expected) != std::string::npos);
    if (std::string(c.expected).rfind("ok", 0) != 0) {
      CHECK(out.rfind("ERROR: ", 0) == 0);
      CHECK(out.find(fmt::format("bad_platform_{}.xml", c.name)) != std::string::npos);
    }
  }
}
