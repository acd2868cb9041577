// `epsim collective`'s model: one collective replayed alone on one switch
// lands on the closed form. Each case opens its own engine (one per process).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/platform/platform_loader.hpp"
#include "sim/replay/collective_bench.hpp"
#include "workloads/workload_loader.hpp"

namespace {

using namespace epsim::sim;

constexpr double kLatency_s = 2 * 1e-6 + 0.5e-6;  // port up + switch + port down
constexpr double kPort_Bps = 100e9;

OpenPlatform single_switch(int npus) {
  return open_platform(PlatformRequest{std::string(EPSIM_SOURCE_DIR) + "/tests/tools/collective/single_switch.toml",
                                       {"node.npus=" + std::to_string(npus)}});
}

// |t - (steps x latency + factor x S / bandwidth)| <= 1e-6 relative, for each S.
void check_closed_form(int npus, CollectiveOp op, double factor, const ReplayOptions& options,
                       const std::vector<double>& sizes = {1e6, 16e6, 1e9}, int steps = 1) {
  OpenPlatform p = single_switch(npus);
  for (double bytes : sizes) {
    const auto wall = std::chrono::steady_clock::now();
    const CollectiveTiming t = time_collective(*p.engine, p.loaded, op, npus, npus, bytes, options);
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count();
    std::cout << to_string(op) << " " << npus << " NPUs, " << bytes << " B: " << t.time_s << " s simulated, "
              << wall_s << " s wall\n";
    const double expected = steps * kLatency_s + factor * bytes / kPort_Bps;
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
  CHECK(bus_factor(CollectiveOp::kAllToAllv, 8) == 7.0 / 8);
  CHECK(bus_factor(CollectiveOp::kAllReduce, 8) == 2 * 7.0 / 8);
  CHECK(bus_factor(CollectiveOp::kReduceScatter, 8) == 7.0 / 8);
  CHECK(bus_factor(CollectiveOp::kAllGather, 8) == 7.0 / 8);
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
  // One size: ~3 s of CPU, most of it building the million-route platform.
  check_closed_form(1024, CollectiveOp::kAllToAll, 1023.0 / 1024, aggregated(), {1e9});
}

TEST_CASE("ring all-reduce on one switch at 8 NPUs lands on 2(N-1) x latency + 2(N-1)/N x S / bandwidth") {
  // Aggregated, the ring's 2(N-1) steps run as one round paying each step's latency.
  check_closed_form(8, CollectiveOp::kAllReduce, 2 * 7.0 / 8, aggregated(), {1e6, 16e6, 1e9}, 14);
}

TEST_CASE("ring reduce-scatter and all-gather on one switch land on (N-1) x latency + (N-1)/N x S / bandwidth") {
  // Aggregated: the ring's N-1 steps as one round, paying each step's latency.
  check_closed_form(8, CollectiveOp::kReduceScatter, 7.0 / 8, aggregated(), {1e6, 16e6, 1e9}, 7);
  OpenPlatform p = single_switch(64);
  for (CollectiveOp op : {CollectiveOp::kReduceScatter, CollectiveOp::kAllGather}) {
    const CollectiveTiming t = time_collective(*p.engine, p.loaded, op, 64, 64, 1e9, aggregated());
    const double expected = 63 * kLatency_s + 63.0 / 64 * 1e9 / kPort_Bps;
    CAPTURE(to_string(op), t.time_s, expected);
    CHECK(std::abs(t.time_s - expected) <= 1e-6 * expected);
    CHECK(t.moved_bytes == Approx(64 * 63.0 / 64 * 1e9).epsilon(1e-12));
    CHECK(t.busbw_Bps == Approx(1e9 / t.time_s * 63.0 / 64).epsilon(1e-12));
  }
}

TEST_CASE("ring all-gather per flow pays latency at each of its N-1 steps, as aggregated does") {
  ReplayOptions o = aggregated();
  o.fidelity = Fidelity::kPerFlow;
  OpenPlatform p = single_switch(8);
  const CollectiveTiming t = time_collective(*p.engine, p.loaded, CollectiveOp::kAllGather, 8, 8, 1e9, o);
  const double expected = 7 * (kLatency_s + 1e9 / 8 / kPort_Bps);
  CHECK(std::abs(t.time_s - expected) <= 1e-6 * expected);
  CHECK(std::abs(t.bound_s - expected) <= 1e-6 * expected);
  const CollectiveTiming one = time_collective(*p.engine, p.loaded, CollectiveOp::kAllGather, 8, 8, 1e9, aggregated());
  CHECK(std::abs(one.time_s - expected) <= 1e-6 * expected);
}

TEST_CASE("the stack's collective library pays its launch per call and its cost per peer of an all-to-all") {
  // NCCL-like costs on the single switch: 10 us per call, 1 us per peer.
  OpenPlatform p = open_platform(PlatformRequest{
      std::string(EPSIM_SOURCE_DIR) + "/tests/tools/collective/single_switch.toml",
      {"node.npus=8", "stack.name=roofline", "stack.collectives.launch=10us", "stack.collectives.peer_cost=1us",
       "stack.dispatch.kernel=alltoall"}});
  const CollectiveTiming a2a = time_collective(*p.engine, p.loaded, CollectiveOp::kAllToAll, 8, 8, 1e9, aggregated());
  const double a2a_s = 10e-6 + 7 * 1e-6 + kLatency_s + 7.0 / 8 * 1e9 / kPort_Bps;
  CHECK(std::abs(a2a.time_s - a2a_s) <= 1e-6 * a2a_s);
  CHECK(std::abs(a2a.bound_s - a2a_s) <= 1e-6 * a2a_s);
  const CollectiveTiming ar = time_collective(*p.engine, p.loaded, CollectiveOp::kAllReduce, 8, 8, 1e9, aggregated());
  const double ar_s = 10e-6 + 14 * kLatency_s + 14.0 / 8 * 1e9 / kPort_Bps;
  CHECK(std::abs(ar.time_s - ar_s) <= 1e-6 * ar_s);
  CHECK(std::abs(ar.bound_s - ar_s) <= 1e-6 * ar_s);
}

TEST_CASE("alltoallv of a sampled uniform routing: its bytes are the sampler's, its time its bound") {
  const int npus = 64;
  const std::int64_t tokens = 512;
  const epsim::workloads::WorkloadSpec w = epsim::workloads::load_workload(
      "deepseek-v3", {"parallel.ep=64", "parallel.dp=64", "parallel.ranks_per_node=64", "parallel.micro_batches=1",
                      "parallel.micro_batch=1", "parallel.sequence_length=512"});
  const SampledAlltoallv v = sample_alltoallv(w);
  CHECK(v.bytes_per_token == 7168 + 7168 / 128 * 4);  // FP8 with one FP32 scale per 128 channels
  CHECK(v.tokens_per_rank == tokens);
  // Tokens x distinct destination ranks, as the sampler counts them, and
  // its expectation R(1 - C(E-m, k)/C(E, k)) for 8 of 256 experts on 64 ranks.
  std::int64_t sent = 0, kept = 0;
  for (int s = 0; s < npus; ++s)
    for (int d = 0; d < npus; ++d) (s == d ? kept : sent) += v.traffic.at(s, d);
  const double per_token = static_cast<double>(sent + kept) / (npus * tokens);
  CHECK(per_token == Approx(epsim::workloads::distinct_ranks_exact(npus, 256, 8)).epsilon(0.01));

  OpenPlatform p = single_switch(npus);
  const CollectiveTiming t = time_collective_graph(*p.engine, p.loaded, CollectiveOp::kAllToAllv,
                                                   alltoallv_graph(v.traffic, v.bytes_per_token), aggregated());
  CHECK(t.moved_bytes == static_cast<double>(sent) * v.bytes_per_token);
  CHECK(t.bytes == static_cast<double>(sent + kept) * v.bytes_per_token / npus);
  // One parallel task on one switch: no flow waits for another, so the
  // time is the bound: latency + the busiest port's bytes / bandwidth.
  std::int64_t busiest = 0;
  for (int r = 0; r < npus; ++r) {
    std::int64_t out = 0, in = 0;
    for (int o = 0; o < npus; ++o)
      if (o != r) out += v.traffic.at(r, o), in += v.traffic.at(o, r);
    busiest = std::max({busiest, out, in});
  }
  const double expected = kLatency_s + static_cast<double>(busiest) * v.bytes_per_token / kPort_Bps;
  CAPTURE(t.time_s, t.bound_s, expected);
  CHECK(std::abs(t.bound_s - expected) <= 1e-9 * expected);
  CHECK(std::abs(t.time_s - t.bound_s) <= 1e-6 * t.bound_s);
  CHECK(t.busbw_Bps == Approx(t.bytes / t.time_s * 63.0 / 64).epsilon(1e-12));
}
