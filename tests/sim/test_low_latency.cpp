// The low-latency dispatch/combine: one message per (token, selected
// expert) straight to the expert's rank. Its plan on a tiny matrix, the
// DeepEP V1 low-latency table pinned (docs/validation.md, "Low-latency
// kernels"), and `run` timing it as `validate` does.
#include <cmath>
#include <cstdio>

#include <catch2/catch.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/presets.hpp"
#include "sim/platform/placement.hpp"
#include "sim/platform/platform_loader.hpp"
#include "sim/replay/collectives.hpp"
#include "sim/simulate.hpp"
#include "sim/validation/deepep_kernels.hpp"
#include "sim/validation/deepep_validation.hpp"
#include "app/measurement_file.hpp"
#include "kernel_timings.hpp"
#include "sim_test_support.hpp"
#include "topology/cluster_spec.hpp"

using namespace epsim;
using namespace epsim::sim;
using namespace epsim::app;

namespace {

std::string low_latency_file() { return data_dir() + "/validation/deepep-h800-low-latency.toml"; }

}  // namespace

TEST_CASE("low-latency plan: one message per selection, own rank local, network bytes at the NIC's share") {
  // 2 nodes x 2 ranks. Rank 0's tokens reach itself 2 times, rank 1 (same
  // node) 2 times and rank 2 (other node) 4 times: 8 token copies for 16
  // selections, so each copy stands for 2 selections.
  workloads::TrafficMatrix t;
  t.ranks = 4;
  t.ranks_per_node = 2;
  t.tokens.assign(16, 0);
  t.node_tokens.assign(8, 0);
  t.tokens[0 * 4 + 0] = 2;
  t.tokens[0 * 4 + 1] = 2;
  t.tokens[0 * 4 + 2] = 4;
  t.selections_per_rank = 16;
  const workloads::Task dispatch = testing::dispatch_task(100);
  const Placement place = place_ranks(4, 2, testing::bare_facts(2, 2));
  AlltoallvOptions o;
  o.algorithm = AlltoallAlgorithm::kLowLatency;
  o.low_latency_nic_share = 0.5;  // the kernel's RDMA at half the NIC link's rate
  const CollectivePlan plan = plan_alltoallv(dispatch, t, place, o);
  REQUIRE(plan.phases.size() == 1);
  CHECK(plan.pipeline_chunks == 1);
  const auto& x = plan.phases[0].transfers;
  REQUIRE(x.size() == 2);
  CHECK((x[0].src_npu == 0 && x[0].dst_npu == 1 && x[0].bytes == 2 * 2 * 100));
  CHECK((x[1].src_npu == 0 && x[1].dst_npu == 2 && x[1].bytes == 4 * 2 * 100 / 0.5));
  workloads::Task combine = dispatch;
  combine.transpose = true;
  const CollectivePlan back = plan_alltoallv(combine, t, place, o);
  REQUIRE(back.phases[0].transfers.size() == 2);
  CHECK((back.phases[0].transfers[1].src_npu == 2 && back.phases[0].transfers[1].dst_npu == 0 &&
         back.phases[0].transfers[1].bytes == 1600));
  t.selections_per_rank = 0;
  CHECK_THROWS_WITH(plan_alltoallv(dispatch, t, place, o), Catch::Contains("has no selection count"));
}

TEST_CASE("low-latency message bytes: FP8 hidden, its scales and a 16-byte header; BF16 combine") {
  const DeepEpTokenBytes b = deepep_token_bytes(7168, 8, DeepEpKernel::kLowLatency);
  CHECK(b.dispatch_counted == 7408);  // 7168 + 56 x 4 + 16, DeepEP's LL message and test count
  CHECK(b.dispatch_moved == 7408);
  CHECK(b.combine_counted == 14336);
  CHECK(b.combine_moved == 14336);
}

TEST_CASE("DeepEP low-latency table: one calibrated cell, every other within 5 % and pinned") {
  // Recorded by `epsim validate validation/deepep-h800-low-latency.toml`
  // (docs/validation.md): simulated GB/s per cell; within 1.5 % of these
  // and 5 % of the measurement (worst: EP256 combine -3.7 %).
  struct Pinned {
    int ep;
    double dispatch_GBps, combine_GBps;
  };
  const Pinned pinned[] = {{8, 46.0, 45.9},   {16, 42.7, 42.6},  {32, 40.5, 40.4},
                           {64, 39.6, 39.5},  {128, 39.4, 39.3}, {256, 38.1, 38.0}};
  const MeasurementFile m = load_measurement_file(low_latency_file());
  CHECK(m.kernel == DeepEpKernel::kLowLatency);
  const DeepEpValidationOptions o = validation_options(m);
  CHECK(o.low_latency_calibration_ep == 8);
  CHECK(o.measurements[5].experts == 512);
  const DeepEpValidation v = run_deepep_validation(o);
  CHECK(v.low_latency_efficiency == Approx(0.8557).epsilon(0.01));
  // The h800 preset carries the calibrated value (its comment names the row).
  CHECK(topology::load_cluster_spec("h800").scaleout->low_latency_efficiency ==
        Approx(v.low_latency_efficiency).epsilon(1e-3));
  REQUIRE(v.rows.size() == 6);
  for (std::size_t i = 0; i < 6; ++i) {
    const DeepEpRow& r = v.rows[i];
    INFO("EP" << r.ep);
    CHECK(r.ep == pinned[i].ep);
    CHECK(r.calibration == (r.ep == 8));
    CHECK(r.dispatch.simulated_Bps / 1e9 == Approx(pinned[i].dispatch_GBps).epsilon(0.015));
    CHECK(r.combine.simulated_Bps / 1e9 == Approx(pinned[i].combine_GBps).epsilon(0.015));
    CHECK(std::abs(r.dispatch.error()) <= (r.calibration ? 1e-3 : 0.05));
    CHECK(std::abs(r.combine.error()) <= 0.05);
    // The mechanism: every selection is counted (128 x 8 x 7408 B), the
    // 1/EP a rank sends itself never reaches the NIC.
    CHECK(r.counted.dispatch_bytes == Approx(128 * 8 * 7408.0));
    CHECK(r.moved.network_tokens_per_rank == Approx(128 * 8 * (1 - 1.0 / r.ep)).epsilon(0.03));
  }
  const nlohmann::json j = nlohmann::json::parse(format_deepep_validation_json(v));
  CHECK(j["kernels"] == "low_latency");
  CHECK(j["calibrated"]["scaleout.low_latency_efficiency"]["row_ep"] == 8);
  CHECK(j["calibrated"].contains("scaleout.nic_efficiency") == false);
  CHECK(j["rows"].size() == 12);
}

TEST_CASE("low-latency kernel: validate and run time the same dispatch and combine") {
  // EP16, one GPU per node (pure RDMA, as the shipped file runs it).
  DeepEpValidationOptions o = validation_options(load_measurement_file(low_latency_file()));
  const workloads::TrafficMatrix traffic = deepep_benchmark_traffic(o, 16, 1);
  const DeepEpTokenBytes b = deepep_token_bytes(7168, 8, DeepEpKernel::kLowLatency);
  const PlatformRequest pure_rdma{"h800", {"node.npus=1", "node.count=16"}};
  const testing::KernelTimings t = testing::validate_and_run(pure_rdma, traffic, b, 1, DeepEpKernel::kLowLatency, false,
                                                             AlltoallAlgorithm::kLowLatency);
  const double vd = t.validate_dispatch_s;
  CHECK(t.run_dispatch_s == Approx(vd).epsilon(0.01));
  CHECK(t.run_combine_s == Approx(t.validate_combine_s).epsilon(0.01));
  // The preset's 0.8557 of 50 GB/s: 1024 x 15/16 messages of 7408 B leave
  // each rank; the busiest receiver sets the time, a few % above the mean.
  const double mean_s = 1024 * 15.0 / 16.0 * 7408 / (0.8557 * 50e9);
  CHECK(vd > mean_s);
  CHECK(vd < 1.15 * mean_s + 10e-6);
}
