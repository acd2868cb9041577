// Data parallelism as the replay runs it: group collectives on a full-mesh
// node use all its links (HCCL's mesh algorithms) and land on their mesh
// bound; ZeRO-1's reduce-scatter and all-gather move the all-reduce's bytes;
// gradient buckets overlap the backward pass, so the exposed gradient sync
// falls as buckets shrink until the per-bucket latency dominates. Each
// simulation runs in its own process (a case, or a forked child).
#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "core/toml_reader.hpp"
#include "sim/platform/platform_loader.hpp"
#include "sim/replay/collective_bench.hpp"
#include "sim/simulate.hpp"
#include "sim_test_support.hpp"
#include "workloads/task_graph_builder.hpp"
#include "workloads/workload_loader.hpp"

using namespace epsim;
using namespace epsim::sim;
using epsim::sim::testing::in_child;

namespace {

constexpr double kHccs_Bps = 56e9;    // platforms/a2.toml: per NPU pair, each direction
constexpr double kHccsLatency_s = 1e-6;

ReplayOptions quiet() {
  ReplayOptions o;
  o.record_link_spans = false;
  return o;
}

}  // namespace

TEST_CASE("an 8-NPU a2 all-reduce alone lands on its mesh bound 2 (n-1)/n S / (7 x 56 GB/s) + 2 latencies") {
  OpenPlatform p = open_platform(PlatformRequest{"a2", {"node.count=1"}});
  for (double bytes : {1e6, 64e6, 1e9}) {
    const CollectiveTiming t = time_collective(*p.engine, p.loaded, CollectiveOp::kAllReduce, 8, 8, bytes, quiet());
    // Reduce-scatter then all-gather, each one round of S/8 on every one of
    // an NPU's 7 links: (n-1)/n S over 7 links, latency once per round.
    const double expected = 2 * kHccsLatency_s + 2 * 7.0 / 8 * bytes / (7 * kHccs_Bps);
    CAPTURE(bytes, t.time_s, t.bound_s, expected);
    CHECK(t.algorithm == "mesh");
    CHECK(std::abs(t.time_s - expected) <= 1e-6 * expected);
    CHECK(std::abs(t.bound_s - expected) <= 1e-9 * expected);
    CHECK(t.moved_bytes == Approx(8 * 2 * 7.0 / 8 * bytes).epsilon(1e-12));
  }
  // A ring over one link per step (the model before the mesh): 7x slower in
  // bytes, and at 8 ranks (per-flow fidelity) paying latency at each of its 14 steps.
  ReplayOptions ring = quiet();
  ring.all_reduce = AllReduceAlgorithm::kRing;
  const CollectiveTiming r = time_collective(*p.engine, p.loaded, CollectiveOp::kAllReduce, 8, 8, 1e9, ring);
  CHECK(r.algorithm == "ring");
  CHECK(r.time_s == Approx(14 * kHccsLatency_s + 2 * 7.0 / 8 * 1e9 / kHccs_Bps).epsilon(1e-6));
}

TEST_CASE("a2 reduce-scatter and all-gather alone land on (n-1)/n S / (7 x 56 GB/s) + one latency") {
  OpenPlatform p = open_platform(PlatformRequest{"a2", {"node.count=1"}});
  for (CollectiveOp op : {CollectiveOp::kReduceScatter, CollectiveOp::kAllGather}) {
    const CollectiveTiming t = time_collective(*p.engine, p.loaded, op, 8, 8, 1e9, quiet());
    const double expected = kHccsLatency_s + 7.0 / 8 * 1e9 / (7 * kHccs_Bps);
    CAPTURE(to_string(op), t.time_s, expected);
    CHECK(t.algorithm == "mesh");
    CHECK(std::abs(t.time_s - expected) <= 1e-6 * expected);
    CHECK(t.moved_bytes == Approx(8 * 7.0 / 8 * 1e9).epsilon(1e-12));
  }
}

TEST_CASE("across a2 nodes the all-reduce is mesh in the node, ring across, on its bound") {
  OpenPlatform p = open_platform(PlatformRequest{"a2", {"node.count=2"}});
  const double bytes = 1e9;
  const CollectiveTiming t = time_collective(*p.engine, p.loaded, CollectiveOp::kAllReduce, 16, 8, bytes, quiet());
  CHECK(t.algorithm == "mesh");
  // Mesh reduce-scatter of S (S/8 per pair), ring all-reduce of S/8 between
  // the two nodes' equal local indices (2 steps of S/16 over 200 Gb/s NICs,
  // one round aggregated paying each step's latency), mesh all-gather.
  const double nic_Bps = 25e9;
  const double nic_latency_s = 2 * 2e-6 + 0.5e-6;  // NIC up, leaf switch, NIC down
  const double expected =
      2 * (kHccsLatency_s + bytes / 8 / kHccs_Bps) + 2 * nic_latency_s + 2 * bytes / 16 / nic_Bps;
  CAPTURE(t.time_s, t.bound_s, expected);
  CHECK(t.bound_s == Approx(expected).epsilon(1e-9));
  CHECK(std::abs(t.time_s - t.bound_s) <= 1e-6 * t.bound_s);
  // Each rank sends 2 (n-1)/n S in all, as nccl-tests' bus factor assumes.
  CHECK(t.moved_bytes == Approx(16 * 2 * 15.0 / 16 * bytes).epsilon(1e-12));
}

TEST_CASE("an h800 node (NVSwitch) is not a mesh: its all-reduce stays the hierarchical ring") {
  OpenPlatform p = open_platform(PlatformRequest{"h800", {"node.count=1"}});
  const CollectiveTiming t = time_collective(*p.engine, p.loaded, CollectiveOp::kAllReduce, 8, 8, 1e9, quiet());
  CHECK(t.algorithm == "hierarchical");
}

namespace {

// 32 layers on one a2 node (8 ranks, DP8): 31 dense layers of 7.3M
// parameters (14.7 MB of BF16 gradients) and one MoE layer at the top,
// ~0.6 ms of backward per dense layer; HCCS latency raised to 0.5 ms so
// that a bucket's latency (two mesh rounds: 1 ms) exceeds a layer's backward.
workloads::WorkloadSpec toy(const std::string& bucket, bool overlap) {
  const std::string text = fmt::format(R"(schema = 1
[model]
layers = 32
dense_layers = 31
hidden = 1024
dense_ffn = 1024
expert_ffn = 256
experts = 8
top_k = 1
vocab = 8
[model.attention]
kind = "gqa"
heads = 8
kv_heads = 8
head_dim = 128
[parallel]
ep = 8
micro_batch = 1
sequence_length = 4096
micro_batches = 1
grad_bucket_size = "{}"
overlap_grad_reduce = {}
[precision]
dispatch = "bf16"
)",
                                       bucket, overlap ? "true" : "false");
  toml::table root = parse_toml_text(text, "toy.toml");
  return workloads::read_workload(root, "toy.toml", "");
}

// "exposed buckets": rank 0's optimizer start minus its last backward
// compute end (the gradient sync nothing hides), and the buckets reduced.
std::string exposed_sync(const std::string& bucket, bool overlap) {
  return in_child([=] {
    const workloads::WorkloadSpec w = toy(bucket, overlap);
    const workloads::TaskGraph g = workloads::build_task_graph(w);
    const Simulation s = simulate(PlatformRequest{"a2", {"node.count=1", "node.link_latency=0.5ms"}}, g);
    double backward_end_s = 0, optimizer_start_s = 0;
    for (const Interval& iv : s.timeline.intervals) {
      if (iv.rank != 0) continue;
      const workloads::Task& t = g.tasks[iv.task];
      if (!t.is_collective() && t.phase == workloads::Phase::kBackward)
        backward_end_s = std::max(backward_end_s, iv.end_s);
      if (t.kind == workloads::TaskKind::kOptimizer) optimizer_start_s = iv.start_s;
    }
    int buckets = 0;
    for (const workloads::Task& t : g.tasks)
      buckets += t.kind == workloads::TaskKind::kGradAllReduce && t.groups.front().size() > 1 ? 1 : 0;
    return fmt::format("{:.9f} {}", optimizer_start_s - backward_end_s, buckets);
  });
}

}  // namespace

TEST_CASE("gradient buckets overlap backward: exposed sync falls as buckets shrink, until latency dominates") {
  struct Row {
    const char* bucket;
    bool overlap;
    double exposed_s = 0;
    int buckets = 0;
  };
  // bucket 1GB after backward: exposed 3.069 ms; overlapped: 1GB 3.069 ms,
  // 120MB 1.328 ms, 30MB 1.131 ms, 1MB 3.011 ms (1 ms of latency per
  // bucket against ~0.6 ms of backward per layer).
  std::vector<Row> rows = {{"1GB", false}, {"1GB", true}, {"120MB", true}, {"30MB", true}, {"1MB", true}};
  for (Row& r : rows) {
    std::istringstream in(exposed_sync(r.bucket, r.overlap));
    REQUIRE(in >> r.exposed_s >> r.buckets);
    std::cout << "bucket " << r.bucket << (r.overlap ? " overlapped" : " after backward") << ": " << r.buckets
              << " dense buckets, exposed gradient sync " << r.exposed_s * 1e3 << " ms\n";
  }
  CHECK(rows[0].buckets == 1);
  // One all-reduce of all 231,759,872 dense parameters' BF16 gradients after
  // the backward: two mesh rounds of S/8 per link, 0.5 ms latency each.
  CHECK(rows[0].exposed_s == Approx(2 * 0.5e-3 + 2 * 231759872.0 * 2 / 8 / kHccs_Bps).epsilon(1e-6));
  CHECK(rows[1].buckets == 1);
  CHECK(rows[1].exposed_s == Approx(rows[0].exposed_s).epsilon(1e-9));  // one bucket: nothing to overlap
  CHECK(rows[2].buckets == 4);
  CHECK(rows[3].buckets == 11);  // 3 layers of 14.7 MB each
  CHECK(rows[4].buckets == 33);  // every layer (the top one with the head) and the embedding
  CHECK(rows[2].exposed_s < 0.7 * rows[1].exposed_s);
  CHECK(rows[3].exposed_s < 0.9 * rows[2].exposed_s);
  CHECK(rows[4].exposed_s > 2 * rows[3].exposed_s);  // a bucket's latency per layer outruns the backward
}
