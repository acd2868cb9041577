// DeepEP-Ascend on an Ascend 950 supernode: the flat one-hop kernel, the
// combine reduction every combine plan ends with, the shipped table pinned,
// and `run` timing the kernels as `validate` does (docs/validation.md).
#include <cmath>
#include <cstdio>

#include <catch2/catch.hpp>

#include <fmt/format.h>

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

std::string ascend_file() { return data_dir() + "/validation/deepep-ascend-950.toml"; }

}  // namespace

TEST_CASE("combine reduction: the owner reads one input per destination rank, its own included, and writes one per token") {
  workloads::TrafficMatrix t;
  t.ranks = 2;
  t.ranks_per_node = 2;
  t.tokens = {3, 2, 1, 4};  // [src * 2 + dst]
  t.node_tokens = {4, 4};
  t.tokens_per_rank = 4;
  t.selections_per_rank = 8;
  PlatformFacts p;
  p.nodes = 1;
  p.npus_per_node = 2;
  p.npus.resize(2);
  const Placement place = place_ranks(2, 2, p);
  workloads::Task combine;
  combine.kind = workloads::TaskKind::kCombine;
  combine.transpose = true;
  combine.bytes_per_token = 10;
  AlltoallvOptions o;
  o.kernels.combine_peer_s = 1e-6;  // the reduction has no peers: it pays none
  const CollectivePlan plan = plan_alltoallv(combine, t, place, o);
  REQUIRE(plan.phases.size() == 2);
  CHECK(plan.phases[0].name == "alltoallv");
  const CollectivePhase& r = plan.phases[1];
  CHECK(r.name == "combine reduction");
  CHECK(r.setup_s == 0);
  REQUIRE(r.transfers.size() == 2);
  // Rank 0: inputs 3 (its own) + 2, output 4 tokens; rank 1: 1 + 4 in, 4 out.
  CHECK(r.transfers[0].src_npu == 0);
  CHECK(r.transfers[0].dst_npu == 0);
  CHECK(r.transfers[0].bytes == (3 + 2 + 4) * 10);
  CHECK(r.transfers[1].src_npu == 1);
  CHECK(r.transfers[1].bytes == (1 + 4 + 4) * 10);
  // Low-latency reads one input per selection.
  o.algorithm = AlltoallAlgorithm::kLowLatency;
  const CollectivePlan ll = plan_alltoallv(combine, t, place, o);
  REQUIRE(ll.phases.size() == 2);
  CHECK(ll.phases[1].transfers[0].bytes == (8 + 4) * 10);
  // Dispatch has no reduction.
  workloads::Task dispatch = combine;
  dispatch.kind = workloads::TaskKind::kDispatch;
  dispatch.transpose = false;
  o.algorithm = AlltoallAlgorithm::kDirect;
  CHECK(plan_alltoallv(dispatch, t, place, o).phases.size() == 1);
}

TEST_CASE("DeepEP-Ascend table: EP8 dispatch calibrates the UB port, the other three cells within 10 % and pinned") {
  // Recorded by `epsim validate validation/deepep-ascend-950.toml`
  // (docs/validation.md): cells within 1.5 % of these.
  const MeasurementFile m = load_measurement_file(ascend_file());
  CHECK(m.flat_parameter == "supernode.port_efficiency");
  CHECK(m.metadata);
  const DeepEpValidationOptions o = validation_options(m);
  CHECK(o.flat_calibration_ep == 8);
  CHECK(o.nvlink_calibration_ep == 0);
  const DeepEpValidation v = run_deepep_validation(o);
  CHECK(v.flat);
  CHECK(v.token_bytes.dispatch_counted == 7464);
  CHECK(v.token_bytes.combine_counted == 14336);
  CHECK(v.flat_efficiency == Approx(0.3288).epsilon(0.01));
  // The atlas950 preset carries the calibrated value (its comment names the row).
  CHECK(topology::load_cluster_spec("atlas950").supernode->port_efficiency ==
        Approx(v.flat_efficiency).epsilon(1e-3));
  struct Pinned {
    int ep;
    double dispatch_GBps, combine_GBps;
  };
  const Pinned pinned[] = {{8, 375.0, 335.3}, {128, 329.1, 299.3}};
  REQUIRE(v.rows.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    const DeepEpRow& r = v.rows[i];
    INFO("EP" << r.ep);
    CHECK(r.ep == pinned[i].ep);
    CHECK(r.dispatch.simulated_Bps / 1e9 == Approx(pinned[i].dispatch_GBps).epsilon(0.015));
    CHECK(r.combine.simulated_Bps / 1e9 == Approx(pinned[i].combine_GBps).epsilon(0.015));
    CHECK(std::abs(r.dispatch.error()) <= (r.calibration ? 1e-3 : 0.10));
    CHECK(std::abs(r.combine.error()) <= 0.10);
    // Nothing crosses a network: one hop through the UB switch.
    CHECK(r.moved.network_tokens_per_rank == 0);
  }
  // Mechanism (a): the rank's own share of the counted tokens is free, 1/8
  // at EP8 and 1/128 at EP128.
  for (const DeepEpRow& r : v.rows)
    CHECK(r.moved.intra_node_tokens_per_rank * v.token_bytes.dispatch_moved /
              (r.counted.dispatch_bytes / v.token_bytes.dispatch_counted * v.token_bytes.dispatch_moved) ==
          Approx(1.0 - 1.0 / r.ep).epsilon(0.01));
}

TEST_CASE("DeepEP-Ascend kernels: validate and run time the same dispatch and combine on the supernode") {
  // EP128 on the atlas950 preset at DeepEP-Ascend's shape: the validation's
  // timing (flat: direct) and `epsim run --algorithm direct` (simulate()
  // with that option) see the same routing and bytes, and must agree.
  DeepEpValidationOptions v;
  v.tokens_per_rank = 16384;
  v.top_k = 6;
  v.group_limit = 0;
  const workloads::TrafficMatrix traffic = deepep_benchmark_traffic(v, 128, 64);
  const DeepEpTokenBytes b = deepep_token_bytes(7168, 6);
  const PlatformRequest atlas{"atlas950", {"node.count=2"}};
  const testing::KernelTimings t =
      testing::validate_and_run(atlas, traffic, b, 32, DeepEpKernel::kNormal, true, AlltoallAlgorithm::kDirect);
  const double vd = t.validate_dispatch_s, vc = t.validate_combine_s;
  CHECK(t.run_dispatch_s == Approx(vd).epsilon(0.01));
  CHECK(t.run_combine_s == Approx(vc).epsilon(0.01));
  // Combine pays its reduction after the exchange: more than twice dispatch's time for 1.93x its bytes.
  CHECK(vc > 2.0 * vd);
}
