// DeepEP-Ascend on an A3 / CloudMatrix384 supernode (sgl-kernel-npu's
// README tables): the normal kernels at 4096 tokens per rank and the
// low-latency kernels, each with its kernel mechanisms calibrated on named
// cells and every other cell predicted (docs/validation.md, "DeepEP-Ascend
// on A3"); and `run` timing the calibrated kernel as `validate` does.
#include <cmath>
#include <cstdio>

#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "core/presets.hpp"
#include "sim/platform/platform_loader.hpp"
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

struct Pinned {
  int ep;
  double dispatch_GBps, combine_GBps;
};

// Each simulated cell within 1.5 % of the recorded table, each prediction
// within 10 % of the measurement, the calibration cells on it.
void check_rows(const DeepEpValidation& v, const std::vector<Pinned>& pinned) {
  REQUIRE(v.rows.size() == pinned.size());
  for (std::size_t i = 0; i < pinned.size(); ++i) {
    const DeepEpRow& r = v.rows[i];
    INFO("EP" << r.ep);
    CHECK(r.ep == pinned[i].ep);
    CHECK(r.dispatch.simulated_Bps / 1e9 == Approx(pinned[i].dispatch_GBps).epsilon(0.015));
    CHECK(r.combine.simulated_Bps / 1e9 == Approx(pinned[i].combine_GBps).epsilon(0.015));
    CHECK(std::abs(r.dispatch.error()) <= 0.10);
    CHECK(std::abs(r.combine.error()) <= 0.10);
  }
}

double calibrated(const DeepEpValidation& v, const std::string& parameter) {
  for (const DeepEpValidation::KernelValue& k : v.kernels)
    if (k.parameter == parameter) return k.value;
  FAIL("not calibrated: " << parameter);
  return 0;
}

}  // namespace

TEST_CASE("A3 normal kernels at 4096 tokens: copy rates on EP8, per-peer costs on EP128, EP16-64 within 10 %") {
  // Recorded by `epsim validate validation/deepep-ascend-a3-normal.toml`.
  const MeasurementFile m = load_measurement_file(data_dir() + "/validation/deepep-ascend-a3-normal.toml");
  CHECK(m.per_selection);
  CHECK(m.dispatch_counted == CountedAs::kBf16);
  const DeepEpValidationOptions o = validation_options(m);
  CHECK(o.flat_calibration_ep == 0);
  REQUIRE(o.kernel_calibrations.size() == 4);
  const DeepEpValidation v = run_deepep_validation(o);
  // Counted as the test counts: a selection received, cast back to BF16, whatever the INT8 wire.
  CHECK(v.token_bytes.dispatch_counted == 14336);
  CHECK(v.token_bytes.combine_counted == 14336);
  CHECK(v.token_bytes.dispatch_moved == 7168 + 4 + 4 * 8 + 4 * 8 + 8 + 4);  // INT8, one scale per token, padded to 16
  CHECK(calibrated(v, topology::kDispatchCopyRateKey) / 1e9 == Approx(60.03).epsilon(0.01));
  CHECK(calibrated(v, topology::kCombineCopyRateKey) / 1e9 == Approx(105.33).epsilon(0.01));
  CHECK(calibrated(v, topology::kDispatchPeerCostKey) * 1e6 == Approx(33.61).epsilon(0.01));
  CHECK(calibrated(v, topology::kCombinePeerCostKey) * 1e6 == Approx(7.68).epsilon(0.01));
  check_rows(v, {{8, 146.0, 125.0}, {16, 117.3, 106.6}, {32, 97.9, 97.5}, {64, 78.3, 90.3}, {128, 57.0, 81.0}});
  // The counted bytes do not change with EP (selections received): the fall
  // from 146 to 57 GB/s is the peers' cost, not the bytes.
  CHECK(v.rows.front().counted.dispatch_bytes == Approx(v.rows.back().counted.dispatch_bytes).epsilon(1e-3));
}

TEST_CASE("A3 low-latency kernels: launch on EP8, per-peer cost on EP32, every other cell within 5 %") {
  const MeasurementFile m = load_measurement_file(data_dir() + "/validation/deepep-ascend-a3-low-latency.toml");
  CHECK(m.low_latency_parameter == "supernode.low_latency_efficiency");
  const DeepEpValidation v = run_deepep_validation(validation_options(m));
  CHECK(v.token_bytes.dispatch_counted == 7408);  // DeepEP's FP8 formula, as the test counts it
  CHECK(v.token_bytes.dispatch_moved == 7168 + 4 + 16);
  CHECK(calibrated(v, topology::kLowLatencyLaunchKey) * 1e6 == Approx(123.78).epsilon(0.01));
  CHECK(calibrated(v, topology::kLowLatencyPeerCostKey) * 1e6 == Approx(1.00).epsilon(0.01));
  check_rows(v, {{8, 58.0, 112.2}, {16, 54.7, 105.8}, {32, 49.0, 94.8}});
  for (const DeepEpRow& r : v.rows) CHECK(std::abs(r.combine.error()) <= 0.05);
  // Control-bound: combine moves twice dispatch's bytes in the same time.
  for (const DeepEpRow& r : v.rows) CHECK(r.combine.simulated_s == Approx(r.dispatch.simulated_s).epsilon(1e-9));
}

TEST_CASE("A3 normal kernel: validate and run time the same calibrated dispatch and combine") {
  // EP32 on the per-die platform of the shipped file with its calibrated
  // [kernels]: `validate`'s timing and `epsim run --algorithm direct`.
  DeepEpValidationOptions v;
  v.tokens_per_rank = 4096;
  v.group_limit = 0;
  const workloads::TrafficMatrix traffic = deepep_benchmark_traffic(v, 32, 16);
  const DeepEpTokenBytes b = deepep_token_bytes(7168, 8, DeepEpKernel::kNormal, workloads::Dtype::kInt8);
  const PlatformRequest a3{"cloudmatrix384",
                           {"npu.rank=\"die\"", "node.count=2", "kernels.messages=\"selection\"",
                            "kernels.dispatch_copy_rate=60GBps", "kernels.combine_copy_rate=105GBps",
                            "kernels.dispatch_peer_cost=33.6us", "kernels.combine_peer_cost=7.7us"}};
  const testing::KernelTimings t =
      testing::validate_and_run(a3, traffic, b, 32, DeepEpKernel::kNormal, true, AlltoallAlgorithm::kDirect);
  const double vd = t.validate_dispatch_s;
  CHECK(t.run_dispatch_s == Approx(vd).epsilon(1e-6));
  CHECK(t.run_combine_s == Approx(t.validate_combine_s).epsilon(1e-6));
  // Additive by mechanism: 31 peers x 33.6 us before dispatch's copies.
  CHECK(vd > 31 * 33.6e-6 + 32768 * 7248 * (1 - 2.0 / 32) / 60e9);
}

TEST_CASE("a row's own core count scales the kernel copy rates (cores x per-core rate)") {
  // The A3 normal table with its cores given (48 AIV cores per die) and
  // EP32's row run on 24: the copy rates are calibrated at 48 and EP32
  // copies at half of them, so its time grows by its copies' time.
  auto ep32_dispatch_s = [](int row_sms) {
    const std::string out = testing::in_child([&] {
      DeepEpValidationOptions o =
          validation_options(load_measurement_file(data_dir() + "/validation/deepep-ascend-a3-normal.toml"));
      o.sms = 48;
      for (DeepEpMeasurement& m : o.measurements)
        if (m.ep == 32) m.sms = row_sms;
      const DeepEpValidation v = run_deepep_validation(o);
      for (const DeepEpRow& r : v.rows)
        if (r.ep == 32) return fmt::format("{:.17g} {:.17g}", r.dispatch.simulated_s, calibrated(v, topology::kDispatchCopyRateKey));
      return std::string("no EP32 row");
    });
    double s = 0, rate = 0;
    INFO(out);
    REQUIRE(std::sscanf(out.c_str(), "%lf %lf", &s, &rate) == 2);
    return std::pair{s, rate};
  };
  const auto [full_s, rate] = ep32_dispatch_s(48);
  const auto [half_s, same_rate] = ep32_dispatch_s(24);
  CHECK(same_rate == Approx(rate).epsilon(1e-6));  // EP32 calibrates nothing
  // EP32's busiest die copies ~32768 x 7248 x 30/32 B (its own and its package's excluded).
  const double copies_s = 32768 * 7248 * (30.0 / 32) / rate;
  CHECK(half_s - full_s == Approx(copies_s).epsilon(0.03));
}
