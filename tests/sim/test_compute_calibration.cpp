// The kernel-efficiency model against hand-computed times: efficiency(M) =
// max x M / (M + half_rows), the elementwise bytes and launch overheads
// added, and the rescaling that makes a task's roofline equal its
// calibrated time (docs/platform.md, "[compute]"). Pure: no SimGrid.
#include <catch2/catch.hpp>

#include "sim/replay/compute_calibration.hpp"
#include "topology/cluster_spec.hpp"

using namespace epsim;
using workloads::Dtype;
using workloads::Task;
using workloads::TaskKind;

namespace {

// One NPU: 1000 TFLOP/s FP8, 500 BF16, 2 TB/s HBM.
sim::NpuFacts npu() {
  sim::NpuFacts n;
  n.name = "node0.npu0";
  n.flops_bf16_per_s = 500e12;
  n.flops_fp8_per_s = 1000e12;
  n.flops_fp32_per_s = 500e12;
  n.hbm_bandwidth_Bps = 2e12;
  return n;
}

topology::ComputeSpec model() {
  topology::ComputeSpec m;
  m.dense_gemm = {0.8, 0};
  m.grouped_gemm = {0.6, 100};
  m.attention = {0.5, 0};
  m.elementwise = 0.9;
  m.optimizer = 0.75;
  m.launch_overhead_s = 5e-6;
  return m;
}

Task compute(TaskKind kind, Dtype dtype, double flops, double bytes, double rows, double ew, int kernels) {
  Task t;
  t.kind = kind;
  t.dtype = dtype;
  t.flops = {flops};
  t.hbm_bytes = {bytes};
  t.gemm_rows = {rows};
  t.elementwise_bytes = {ew};
  t.kernels = kernels;
  return t;
}

}  // namespace

TEST_CASE("calibration: efficiency falls with the GEMM rows", "[calibration]") {
  const topology::KernelClassEfficiency e{0.6, 100};
  CHECK(e.at(100) == Approx(0.3));
  CHECK(e.at(900) == Approx(0.54));
  CHECK(e.at(0) == 0.6);  // no rows known: the large-shape figure
  CHECK(topology::KernelClassEfficiency{0.8, 0}.at(16) == 0.8);
}

TEST_CASE("calibration: a grouped GEMM's time by hand", "[calibration]") {
  // 6e12 FP8 FLOPs on 300 rows per expert: efficiency 0.6 x 300/400 = 0.45,
  // 6e12 / (0.45 x 1e15) = 13.333 ms; bytes 1e9 / (0.9 x 2e12) = 0.556 ms;
  // elementwise 9e9 / 1.8e12 = 5 ms; 4 launches x 5 us.
  const Task t = compute(TaskKind::kExpertGemm, Dtype::kFp8, 6e12, 1e9, 300, 9e9, 4);
  const double expected = 6e12 / (0.45 * 1e15) + 9e9 / 1.8e12 + 4 * 5e-6;
  CHECK(sim::calibrated_time_s(t, 0, model(), npu(), std::nullopt) == Approx(expected).epsilon(1e-12));
  // An FP8 GEMM on an NPU without FP8 runs at the fallback's (BF16) peak.
  sim::NpuFacts no_fp8 = npu();
  no_fp8.flops_fp8_per_s = 0;
  CHECK(sim::calibrated_time_s(t, 0, model(), no_fp8, Dtype::kBf16) ==
        Approx(6e12 / (0.45 * 500e12) + 9e9 / 1.8e12 + 4 * 5e-6).epsilon(1e-12));
}

TEST_CASE("calibration: memory-bound kernels at their HBM share", "[calibration]") {
  // The optimizer: 1.5e10 B at 0.75 x 2 TB/s = 10 ms, its FLOPs far below.
  const Task opt = compute(TaskKind::kOptimizer, Dtype::kFp32, 1e10, 1.5e10, 0, 0, 1);
  CHECK(sim::calibrated_time_s(opt, 0, model(), npu(), std::nullopt) == Approx(0.01 + 5e-6).epsilon(1e-12));
  // Attention memory-bound: 4e10 B / 1.8e12 beats 1e12 / (0.5 x 5e14).
  const Task attn = compute(TaskKind::kAttention, Dtype::kBf16, 1e12, 4e10, 4096, 0, 11);
  CHECK(sim::calibrated_time_s(attn, 0, model(), npu(), std::nullopt) ==
        Approx(4e10 / 1.8e12 + 11 * 5e-6).epsilon(1e-12));
}

TEST_CASE("calibration: rescaled amounts take the calibrated time on the roofline", "[calibration]") {
  workloads::TaskGraph g;
  g.ranks = 2;
  g.ranks_per_node = 2;
  Task gate = compute(TaskKind::kGate, Dtype::kFp32, 2e12, 1e9, 4096, 2e9, 6);
  gate.flops = {2e12, 0};
  gate.hbm_bytes = {1e9, 0};
  gate.gemm_rows = {4096, 4096};
  gate.elementwise_bytes = {2e9, 0};
  g.tasks.push_back(gate);
  sim::PlatformFacts p;
  p.npus = {npu(), npu()};
  sim::Placement place;
  place.npu_of_rank = {0, 1};
  place.ranks_per_node = 2;
  const workloads::TaskGraph c = sim::calibrate_compute(g, model(), p, place, std::nullopt);
  const double target = 2e12 / (0.8 * 500e12) + 2e9 / 1.8e12 + 6 * 5e-6;
  const Task& t = c.tasks[0];
  CHECK(std::max(t.flops[0] / 500e12, t.hbm_bytes[0] / 2e12) == Approx(target).epsilon(1e-12));
  CHECK(t.flops[0] / t.hbm_bytes[0] == Approx(2e12 / 1e9).epsilon(1e-12));  // the binding side is unchanged
  CHECK(t.flops[1] == 0);  // no work on rank 1: nothing launched
  CHECK(t.hbm_bytes[1] == 0);
  CHECK(t.elementwise_bytes.empty());
  // The default model on a task without elementwise bytes is the identity.
  gate.elementwise_bytes.clear();
  g.tasks[0] = gate;
  const workloads::TaskGraph same = sim::calibrate_compute(g, topology::ComputeSpec{}, p, place, std::nullopt);
  CHECK(same.tasks[0].flops == gate.flops);
  CHECK(same.tasks[0].hbm_bytes == gate.hbm_bytes);
}

TEST_CASE("calibration: a GEMM by its M, N and K, each GEMM of the task at its own efficiency", "[calibration]") {
  // Grouped GEMM of two shapes at 300 rows: e = 0.6 x 300/400 x N/(N+500) x K/(K+1000).
  topology::ComputeSpec m = model();
  m.grouped_gemm.half_n = 500;
  m.grouped_gemm.half_k = 1000;
  Task t = compute(TaskKind::kExpertGemm, Dtype::kFp8, 6e12, 0, 300, 0, 2);
  t.gemm_shapes = {{1500, 3000, 2.0 / 3.0}, {500, 1000, 1.0 / 3.0}};  // gate/up, down
  const double e1 = 0.6 * 0.75 * 0.75 * 0.75, e2 = 0.6 * 0.75 * 0.5 * 0.5;
  const double expected = (2.0 / 3.0) * 6e12 / (e1 * 1e15) + (1.0 / 3.0) * 6e12 / (e2 * 1e15) + 2 * 5e-6;
  CHECK(sim::calibrated_time_s(t, 0, m, npu(), std::nullopt) == Approx(expected).epsilon(1e-12));
  CHECK(m.grouped_gemm.at(300, 1500, 3000) == Approx(e1));
  // No half points: the shapes change nothing (the model before them).
  CHECK(sim::calibrated_time_s(t, 0, model(), npu(), std::nullopt) ==
        Approx(6e12 / (0.45 * 1e15) + 2 * 5e-6).epsilon(1e-12));
}

TEST_CASE("calibration: attention by the channels per head of its core", "[calibration]") {
  // e = 0.5 x d / (d + 64): 0.25 at 64 channels, 0.375 at 192.
  topology::ComputeSpec m = model();
  m.attention.half_dim = 64;
  Task t = compute(TaskKind::kAttention, Dtype::kBf16, 1e12, 0, 4096, 0, 1);
  t.head_dim = 64;
  CHECK(sim::calibrated_time_s(t, 0, m, npu(), std::nullopt) == Approx(1e12 / (0.25 * 5e14) + 5e-6).epsilon(1e-12));
  t.head_dim = 192;
  CHECK(sim::calibrated_time_s(t, 0, m, npu(), std::nullopt) == Approx(1e12 / (0.375 * 5e14) + 5e-6).epsilon(1e-12));
}

TEST_CASE("calibration: the h800 preset predicts DeepGEMM's M=4096 GEMMs from three of them", "[calibration]") {
  // deepseek-ai/DeepGEMM README at a6d97a1 (H800, FP8): N=7168 K=16384,
  // N=7168 K=2048 and N=2112 K=7168 set max, half_k and half_n; the other
  // rows are predictions (docs/platform.md, "Compute efficiency").
  const topology::ComputeSpec h800 = topology::load_cluster_spec("h800").compute;
  struct Row {
    double n, k, tflops;
    bool calibration;
  };
  const Row rows[] = {{2112, 7168, 1058, true},  {24576, 1536, 990, false}, {32768, 512, 590, false},
                      {7168, 16384, 1358, true}, {4096, 7168, 1304, false}, {7168, 2048, 1025, true}};
  for (const Row& r : rows) {
    INFO("N=" << r.n << " K=" << r.k);
    const double predicted = h800.dense_gemm.at(4096, r.n, r.k) * 1979;
    CHECK(predicted == Approx(r.tflops).epsilon(r.calibration ? 0.002 : 0.08));
  }
  // Its grouped GEMMs: 4 x 8192 rows, N=4096 K=7168 sets grouped_gemm; 4 x 8192, N=7168 K=2048 predicted.
  CHECK(h800.grouped_gemm.at(8192, 4096, 7168) * 1979 == Approx(1297).epsilon(0.002));
  CHECK(h800.grouped_gemm.at(8192, 7168, 2048) * 1979 == Approx(1099).epsilon(0.02));
  // FlashAttention-3's head dims 64 and 128 (476, 638 TFLOPS forward): their ratio, d / (d + 66).
  CHECK(topology::KernelClassEfficiency::factor(64, h800.attention.half_dim) /
            topology::KernelClassEfficiency::factor(128, h800.attention.half_dim) ==
        Approx(476.0 / 638.0).epsilon(0.01));
  // The level keeps the earlier 0.60 at MLA's 192 channels.
  CHECK(h800.attention.max * topology::KernelClassEfficiency::factor(192, h800.attention.half_dim) ==
        Approx(0.60).epsilon(0.002));
}
