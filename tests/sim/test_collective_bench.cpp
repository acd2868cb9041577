// `epsim collective`'s model: one collective replayed alone on one switch
// lands on the closed form. Each case opens its own engine (one per process).
#include <chrono>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/platform/platform_loader.hpp"
#include "sim/replay/collective_bench.hpp"

namespace {

using namespace epsim::sim;

constexpr double kLatency_s = 2 * 1e-6 + 0.5e-6;  // port up + switch + port down
constexpr double kPort_Bps = 100e9;

OpenPlatform single_switch(int npus) {
  return open_platform(PlatformRequest{std::string(EPSIM_SOURCE_DIR) + "/tests/tools/collective/single_switch.toml",
                                       {"node.npus=" + std::to_string(npus)}});
}

// |t - (latency + factor x S / bandwidth)| <= 1e-6 relative, for each S.
void check_closed_form(int npus, CollectiveOp op, double factor, const ReplayOptions& options,
                       const std::vector<double>& sizes = {1e6, 16e6, 1e9}) {
  OpenPlatform p = single_switch(npus);
  for (double bytes : sizes) {
    const auto wall = std::chrono::steady_clock::now();
    const CollectiveTiming t = time_collective(*p.engine, p.loaded, op, npus, npus, bytes, options);
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count();
    std::cout << to_string(op) << " " << npus << " NPUs, " << bytes << " B: " << t.time_s << " s simulated, "
              << wall_s << " s wall\n";
    const double expected = kLatency_s + factor * bytes / kPort_Bps;
    CAPTURE(npus, bytes, t.time_s, expected);
    CHECK(std::abs(t.time_s - expected) <= 1e-6 * expected);
    CHECK(std::abs(t.bound_s - expected) <= 1e-6 * expected);
    CHECK(t.algbw_Bps == Approx(bytes / t.time_s).epsilon(1e-12));
    CHECK(t.busbw_Bps == Approx(t.algbw_Bps * bus_factor(op, npus)).epsilon(1e-12));
    CHECK(t.fidelity == std::string(to_string(*options.fidelity)));
  }
}

ReplayOptions aggregated() {
  ReplayOptions o;
  o.fidelity = Fidelity::kAggregated;
  o.record_link_spans = false;
  return o;
}

}  // namespace

TEST_CASE("bus factors are nccl-tests'") {
  CHECK(bus_factor(CollectiveOp::kAllToAll, 8) == 7.0 / 8);
  CHECK(bus_factor(CollectiveOp::kAllReduce, 8) == 2 * 7.0 / 8);
}

TEST_CASE("uniform all-to-all on one switch at 8 NPUs lands on latency + (N-1)/N x S / bandwidth") {
  check_closed_form(8, CollectiveOp::kAllToAll, 7.0 / 8, aggregated());
}

TEST_CASE("uniform all-to-all on one switch at 8 NPUs per flow") {
  ReplayOptions o = aggregated();
  o.fidelity = Fidelity::kPerFlow;
  check_closed_form(8, CollectiveOp::kAllToAll, 7.0 / 8, o);
}

TEST_CASE("uniform all-to-all on one switch at 64 NPUs") {
  check_closed_form(64, CollectiveOp::kAllToAll, 63.0 / 64, aggregated());
}

TEST_CASE("uniform all-to-all on one switch at 256 NPUs") {
  check_closed_form(256, CollectiveOp::kAllToAll, 255.0 / 256, aggregated());
}

TEST_CASE("uniform all-to-all on one switch at 1024 NPUs") {
  // One size: each replay of its 1024 x 1023 flows costs ~16 s wall on a loaded 2-core machine.
  check_closed_form(1024, CollectiveOp::kAllToAll, 1023.0 / 1024, aggregated(), {1e9});
}

TEST_CASE("ring all-reduce on one switch at 8 NPUs lands on latency + 2(N-1)/N x S / bandwidth") {
  // Aggregated, the ring's 2(N-1) steps run as one round paying latency once.
  check_closed_form(8, CollectiveOp::kAllReduce, 2 * 7.0 / 8, aggregated());
}
