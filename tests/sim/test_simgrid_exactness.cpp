// The SimGrid 3.32 findings epsim relies on, proved on tiny platforms with
// analytic answers (docs/simgrid-model.md): exact lone transfers, fair
// sharing, the HBM roofline, and what the other models would do instead.
// The platform is the replay's flat build of a tiny cluster.
#include <unistd.h>

#include <catch2/catch.hpp>

#include <fstream>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Host.hpp>
#include <xbt/log.h>

#include "core/toml_reader.hpp"
#include "sim/platform/flat_platform.hpp"
#include "sim/platform/sim_engine.hpp"
#include "topology/cluster_spec.hpp"

using namespace epsim;
using namespace epsim::topology;
namespace sg4 = simgrid::s4u;

namespace {

// 2 nodes x 2 NPUs, HCCS-like mesh, one 25 GB/s NIC per NPU on one switch.
const char* kTiny = R"(
schema = 1
name = "tiny"
[npu]
flops_bf16 = "100Tf"
flops_fp8 = "200Tf"
hbm_bandwidth = "1TBps"
hbm_capacity = "16GiB"
[node]
npus = 2
count = 2
fabric = "mesh"
link_bandwidth = "50GBps"
link_latency = "1us"
[scaleout]
fabric = "switch"
nic_bandwidth = "200Gbps"
nic_latency = "2us"
switch_latency = "0.5us"
)";

ClusterSpec tiny() { return read_cluster_spec(parse_toml_text(kTiny, "tiny.toml"), "tiny.toml"); }

// An engine with epsim's configuration (sim::SimEngine) plus `extra_config`,
// or with SimGrid's defaults (logs silenced) to show what epsim avoids.
struct TestEngine {
  std::unique_ptr<sim::SimEngine> epsim;
  std::unique_ptr<sg4::Engine> plain;
  sg4::Engine* operator->() { return epsim ? &epsim->engine() : plain.get(); }
  sg4::Engine& operator*() { return epsim ? epsim->engine() : *plain; }
};

TestEngine engine_with(const std::vector<std::string>& extra_config, bool epsim_models = true) {
  TestEngine e;
  if (epsim_models) {
    sim::EngineOptions options;
    options.extra_config = extra_config;
    e.epsim = std::make_unique<sim::SimEngine>("test", options);
    return e;
  }
  static int argc = 1;
  static char name[] = "test_simgrid_exactness";
  static char* argv[] = {name, nullptr};
  e.plain = std::make_unique<sg4::Engine>(&argc, argv);
  xbt_log_control_set("root.thres:critical");
  for (const std::string& c : extra_config) sg4::Engine::set_config(c);
  return e;
}

// The replay's platform for the tiny cluster (one flat Full zone).
void build_platform(const ClusterSpec& spec) { sim::build_flat_platform(spec); }

sg4::Host* host(const char* name) { return sg4::Host::by_name(name); }

// Runs `body` in one actor on node0.npu0 and returns the simulated end time.
double run(sg4::Engine& e, std::function<void()> body) {
  double end = -1;
  sg4::Actor::create("probe", host("node0.npu0"), [&] {
    body();
    end = sg4::Engine::get_clock();
  });
  e.run();
  return end;
}

const double kBytes = 1e9;
const double kNic_Bps = 25e9;
const double kCrossNodeLatency_s = 2e-6 + 0.5e-6 + 2e-6;  // NIC, switch, NIC; HBM has none

}  // namespace

TEST_CASE("L07 + TCP-gamma 0: a lone 1 GB transfer takes latency + bytes/bandwidth", "[simgrid][exact]") {
  auto e = engine_with({});
  build_platform(tiny());
  double t = run(*e, [] { sg4::Comm::sendto(host("node0.npu0"), host("node1.npu0"), kBytes); });
  CHECK(t == Approx(kCrossNodeLatency_s + kBytes / kNic_Bps).epsilon(1e-6));
}

TEST_CASE("L07: a lone transfer as a two-host parallel task is exact too", "[simgrid][exact]") {
  auto e = engine_with({});
  build_platform(tiny());
  double t = run(*e, [] {
    sg4::this_actor::parallel_execute({host("node0.npu0"), host("node1.npu0")}, {0, 0}, {0, kBytes, 0, 0});
  });
  CHECK(t == Approx(kCrossNodeLatency_s + kBytes / kNic_Bps).epsilon(1e-6));
}

TEST_CASE("L07: an HCCS transfer inside a node is exact", "[simgrid][exact]") {
  auto e = engine_with({});
  build_platform(tiny());
  double t = run(*e, [] { sg4::Comm::sendto(host("node0.npu0"), host("node0.npu1"), kBytes); });
  CHECK(t == Approx(1e-6 + kBytes / 50e9).epsilon(1e-6));
}

TEST_CASE("L07: two flows on one NIC take twice as long", "[simgrid][exact]") {
  auto e = engine_with({});
  build_platform(tiny());
  double first = -1, second = -1;
  sg4::Actor::create("probe", host("node0.npu0"), [&] {
    auto a = sg4::Comm::sendto_async(host("node0.npu0"), host("node1.npu0"), kBytes);
    auto b = sg4::Comm::sendto_async(host("node0.npu0"), host("node1.npu1"), kBytes);
    a->wait();
    first = sg4::Engine::get_clock();
    b->wait();
    second = sg4::Engine::get_clock();
  });
  e->run();
  CHECK(first == Approx(kCrossNodeLatency_s + 2 * kBytes / kNic_Bps).epsilon(1e-6));
  CHECK(second == Approx(first).epsilon(1e-9));
}

TEST_CASE("L07: a GEMM on one NPU takes max(FLOPs/peak, bytes/HBM)", "[simgrid][exact]") {
  auto e = engine_with({});
  build_platform(tiny());
  const double speed = 100e12, hbm = 1e12;
  struct Row {
    double flops, bytes;
  };
  const Row rows[] = {{2e12, 1e9}, {1e11, 4e9}};  // compute-bound 20 ms; memory-bound 4 ms
  std::vector<double> ends;
  sg4::Actor::create("probe", host("node0.npu0"), [&] {
    for (const Row& r : rows) {
      double start = sg4::Engine::get_clock();
      sg4::this_actor::parallel_execute({host("node0.npu0"), host("node0.npu0")}, {r.flops, 0},
                                        {0, r.bytes, 0, 0});
      ends.push_back(sg4::Engine::get_clock() - start);
    }
  });
  e->run();
  REQUIRE(ends.size() == 2);
  CHECK(ends[0] == Approx(std::max(rows[0].flops / speed, rows[0].bytes / hbm)).epsilon(1e-6));
  CHECK(ends[1] == Approx(std::max(rows[1].flops / speed, rows[1].bytes / hbm)).epsilon(1e-6));
}

TEST_CASE("L07: a one-host parallel task silently drops its bytes", "[simgrid][finding]") {
  auto e = engine_with({});
  build_platform(tiny());
  double t = run(*e, [] { sg4::this_actor::parallel_execute({host("node0.npu0")}, {1e12}, {4e12}); });
  CHECK(t == Approx(1e12 / 100e12).epsilon(1e-6));  // 4e12 bytes / 1 TB/s = 4 s would dominate
}

TEST_CASE("LV08 (SimGrid's default): 13.01 x latency and 0.97 x bandwidth", "[simgrid][finding]") {
  auto e = engine_with({}, false);
  build_platform(tiny());
  double t = run(*e, [] { sg4::Comm::sendto(host("node0.npu0"), host("node1.npu0"), kBytes); });
  CHECK(t == Approx(13.01 * kCrossNodeLatency_s + kBytes / (0.97 * kNic_Bps)).epsilon(1e-6));
}

namespace {

// Two flows into one shared 1 GB/s link, with route latencies 10 ms and 1 ms.
const char* kTwoLatencies = R"(<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Full">
    <host id="a" speed="1f"/> <host id="b" speed="1f"/> <host id="c" speed="1f"/>
    <link id="shared" bandwidth="1GBps" latency="0s"/>
    <link id="far" bandwidth="100GBps" latency="10ms"/>
    <link id="near" bandwidth="100GBps" latency="1ms"/>
    <route src="a" dst="c"><link_ctn id="far"/><link_ctn id="shared"/></route>
    <route src="b" dst="c"><link_ctn id="near"/><link_ctn id="shared"/></route>
  </zone>
</platform>
)";

// End times of the far (a->c) and near (b->c) flows, 1 GB each.
std::pair<double, double> two_latency_flows(sg4::Engine& e) {
  // Per process: the two cases using it may run at once (ctest -j).
  std::string path = std::string(EPSIM_BINARY_DIR) + "/two_latencies." + std::to_string(::getpid()) + ".xml";
  std::ofstream(path) << kTwoLatencies;
  e.load_platform(path);
  double far_end = -1, near_end = -1;
  sg4::Actor::create("probe", sg4::Host::by_name("c"), [&] {
    auto far = sg4::Comm::sendto_async(sg4::Host::by_name("a"), sg4::Host::by_name("c"), kBytes);
    auto near = sg4::Comm::sendto_async(sg4::Host::by_name("b"), sg4::Host::by_name("c"), kBytes);
    near->wait();
    near_end = sg4::Engine::get_clock();
    far->wait();
    far_end = sg4::Engine::get_clock();
  });
  e.run();
  return {far_end, near_end};
}

}  // namespace

TEST_CASE("CM02: flows sharing a link split it by route latency", "[simgrid][finding]") {
  auto e = engine_with({"network/model:CM02", "network/TCP-gamma:0"}, false);
  auto [far_end, near_end] = two_latency_flows(*e);
  // An even split would end the near flow near 2 s; CM02 weighs each flow
  // by its route latency, so the 1 ms flow gets ~10/11 of the link.
  CHECK(near_end < 1.2);
  CHECK(far_end > 2.0);  // starved while the near flow ran
}

TEST_CASE("L07 + TCP-gamma 0: flows sharing a link split it evenly", "[simgrid][exact]") {
  auto e = engine_with({});
  auto [far_end, near_end] = two_latency_flows(*e);
  // The near flow has the link alone from 1 ms to 10 ms (9 MB), then both
  // get 0.5 GB/s: it ends at 10 ms + 0.991 GB / 0.5 GB/s = 1.992 s; the far
  // one sends its last 9 MB alone and ends at 2.001 s.
  CHECK(near_end == Approx(0.010 + 2 * (kBytes - 9e6) / 1e9).epsilon(1e-6));
  CHECK(far_end == Approx(near_end + 9e6 / 1e9).epsilon(1e-6));
}

TEST_CASE("L07: of the links only one parallel task loads, the tightest alone binds it", "[simgrid][exact]") {
  // What sim::solver_transfers relies on: an exchange over the private
  // HCCS links 0 -> 1 (2 GB) and 1 -> 0 (1 GB) beside an HBM-bound kernel
  // on npu0 times exactly as the exchange carrying 0 -> 1 alone with 1 -> 0's
  // bytes on both HBMs as loopbacks (hbm0 and hbm1 still carry 3 GB and 2 GB).
  auto e = engine_with({});
  build_platform(tiny());
  std::vector<double> exchange_s, kernel_s;
  sg4::Actor::create("probe", host("node0.npu0"), [&] {
    sg4::Host* a = host("node0.npu0");
    sg4::Host* b = host("node0.npu1");
    for (bool stand_in : {false, true}) {
      const double start = sg4::Engine::get_clock();
      auto kernel = sg4::Exec::init()->set_hosts({a, a})->set_flops_amounts({1e9, 0})->set_bytes_amounts({0, 4e9, 0, 0});
      kernel->start();
      const std::vector<double> bytes =
          stand_in ? std::vector<double>{1e9, 2e9, 0, 1e9} : std::vector<double>{0, 2e9, 1e9, 0};
      auto exchange = sg4::Exec::init()->set_hosts({a, b})->set_flops_amounts({0, 0})->set_bytes_amounts(bytes);
      exchange->start();
      kernel->wait();
      kernel_s.push_back(sg4::Engine::get_clock() - start);
      exchange->wait();
      exchange_s.push_back(sg4::Engine::get_clock() - start);
    }
  });
  e->run();
  REQUIRE(exchange_s.size() == 2);
  CHECK(exchange_s[0] == Approx(1e-6 + 2e9 / 50e9).epsilon(1e-9));
  CHECK(kernel_s[0] > 4e9 / 1e12);  // it shares hbm0 with the exchange
  CHECK(exchange_s[1] == Approx(exchange_s[0]).epsilon(1e-12));
  CHECK(kernel_s[1] == Approx(kernel_s[0]).epsilon(1e-12));
}
