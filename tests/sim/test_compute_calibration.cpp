// Operators priced by a stack against their closed forms, one lone
// operator at a time (docs/operators.md): a GEMM by M, N and K, the
// attention core by head width and context, each memory-bound class at its
// HBM share, the framework's launch, host issue and MoE host sync, and the
// rescaling that makes a task's roofline equal its priced time. Pure: no SimGrid.
#include <cmath>

#include <catch2/catch.hpp>

#include "sim/replay/compute_calibration.hpp"
#include "sim/replay/measured_pricing.hpp"
#include "topology/cluster_spec.hpp"

using namespace epsim;
using workloads::Dtype;
using workloads::OpClass;
using workloads::Operator;
using workloads::Task;
using workloads::TaskKind;

namespace {

// One NPU of these peaks (FP32 at the BF16 peak, as the platform XML has it) and HBM bandwidth.
sim::NpuFacts npu_of(const char* name, double bf16, double fp8, double bw) {
  sim::NpuFacts n;
  n.name = name;
  n.flops_bf16_per_s = bf16;
  n.flops_fp8_per_s = fp8;
  n.flops_fp32_per_s = bf16;
  n.hbm_bandwidth_Bps = bw;
  return n;
}

// One NPU: 1000 TFLOP/s FP8, 500 BF16, 2 TB/s HBM.
sim::NpuFacts npu() { return npu_of("node0.npu0", 500e12, 1000e12, 2e12); }

// An H200 as the kernel tables measured it: 989 / 1979 TFLOP/s, 4.8 TB/s.
sim::NpuFacts h200_npu() { return npu_of("h200", 989e12, 1979e12, 4.8e12); }

topology::StackSpec stack() {
  topology::StackSpec s;
  s.name = "test";
  s.gemm_bf16 = {0.8, 0, 0, 0};
  s.gemm_fp8 = {0.8, 0, 0, 0};
  s.grouped_bf16 = {0.6, 100, 500, 1000};
  s.grouped_fp8 = {0.6, 100, 500, 1000};
  s.attention = {0.5, 64, 0};
  s.attention_backward = {0.4, 64, 0};
  s.memory = {0.9, 0.5, 0.25, 1.0, 0.1, 0.05, 0.2, 0.75};
  s.memory_backward = {0.9, 0.25, 0.125, 1.0, 0.1, 0.05, 0.2, 0.75};
  s.launch_s = 5e-6;
  return s;
}

Task task(TaskKind kind, workloads::Operators ops) {
  Task t;
  t.kind = kind;
  t.dtype = ops.empty() ? Dtype::kBf16 : ops.front().dtype;
  t.flops = {workloads::total_flops(ops)};
  t.hbm_bytes = {workloads::total_bytes(ops)};
  t.ops = std::move(ops);
  return t;
}

double priced(const Operator& op, const topology::StackSpec& s = stack()) {
  return sim::operator_time_s(op, s, npu(), std::nullopt);
}

}  // namespace

TEST_CASE("stack: a GEMM's efficiency by M, N and K, each factor x / (x + half)", "[calibration]") {
  const topology::GemmEfficiency e{0.6, 100, 500, 1000};
  CHECK(e.at(100, 500, 1000) == Approx(0.6 * 0.5 * 0.5 * 0.5));
  CHECK(e.at(300, 1500, 3000) == Approx(0.6 * 0.75 * 0.75 * 0.75));
  CHECK(topology::GemmEfficiency{0.8, 0, 0, 0}.at(16, 16, 16) == 0.8);  // no half points: no shape dependence
}

TEST_CASE("operator: a lone GEMM lands on max(F / (e peak), B / bw) + launch", "[calibration]") {
  // 4096 x 7168 x 2048 in BF16: F = 2 M N K, e = 0.8.
  const Operator g = workloads::gemm(4096, 7168, 2048, Dtype::kBf16);
  CHECK(g.flops == 2.0 * 4096 * 7168 * 2048);
  CHECK(g.bytes == (4096.0 * 2048 + 2048.0 * 7168) * 2 + 4096.0 * 7168 * 2);
  CHECK(priced(g) == Approx(g.flops / (0.8 * 500e12) + 5e-6).epsilon(1e-12));
  // A skinny one is bound by its operands' bytes.
  const Operator skinny = workloads::gemm(1, 7168, 2048, Dtype::kBf16);
  CHECK(priced(skinny) == Approx(skinny.bytes / 2e12 + 5e-6).epsilon(1e-12));
  // FP8 at the FP8 peak; on an NPU without FP8, the fallback's (BF16) peak.
  const Operator f8 = workloads::gemm(4096, 7168, 2048, Dtype::kFp8);
  CHECK(priced(f8) == Approx(f8.flops / (0.8 * 1000e12) + 5e-6).epsilon(1e-12));
  sim::NpuFacts no_fp8 = npu();
  no_fp8.flops_fp8_per_s = 0;
  CHECK(sim::operator_time_s(f8, stack(), no_fp8, Dtype::kBf16) ==
        Approx(f8.flops / (0.8 * 500e12) + 5e-6).epsilon(1e-12));
  // A GEMM kernel's fixed time ([gemm] fixed, [grouped_gemm] fixed) beside its roofline.
  topology::StackSpec fixed = stack();
  fixed.gemm_fixed_s = 7e-6;
  fixed.grouped_fixed_s = 3e-6;
  CHECK(priced(g, fixed) == Approx(7e-6 + g.flops / (0.8 * 500e12) + 5e-6).epsilon(1e-12));
  CHECK(priced(skinny, fixed) == Approx(7e-6 + skinny.bytes / 2e12 + 5e-6).epsilon(1e-12));
  const Operator grouped = workloads::gemm(300, 1500, 3000, Dtype::kBf16, 8);
  CHECK(priced(grouped, fixed) ==
        Approx(3e-6 + grouped.flops / (0.6 * 0.75 * 0.75 * 0.75 * 500e12) + 5e-6).epsilon(1e-12));
  // Separate FP8 casts (framework.fp8_cast_bytes): 5 B per element of its M x K operand at the elementwise share.
  topology::StackSpec cast = stack();
  cast.fp8_cast_bytes = 5;
  CHECK(priced(f8, cast) ==
        Approx(f8.flops / (0.8 * 1000e12) + 5.0 * 4096 * 2048 / (0.9 * 2e12) + 3 * 5e-6).epsilon(1e-12));
}

TEST_CASE("operator: a grouped GEMM at its rows per expert; its backward a dgrad and a wgrad", "[calibration]") {
  const Operator up = workloads::gemm(300, 1500, 3000, Dtype::kFp8, 8);
  CHECK(up.op_class == OpClass::kGroupedGemm);
  CHECK(up.flops == 8 * 2.0 * 300 * 1500 * 3000);
  CHECK(priced(up) == Approx(up.flops / (0.6 * 0.75 * 0.75 * 0.75 * 1e15) + 5e-6).epsilon(1e-12));
  const workloads::Operators b = workloads::gemm_backward(up);
  REQUIRE(b.size() == 2);
  CHECK(b[0].m == 300);  // dgrad: M x K x N
  CHECK(b[0].n == 3000);
  CHECK(b[0].k == 1500);
  CHECK(b[1].m == 1500);  // wgrad: N x K, reduced over the M rows
  CHECK(b[1].n == 3000);
  CHECK(b[1].k == 300);
  CHECK(b[0].flops + b[1].flops == 2 * up.flops);
  CHECK(b[1].op_class == OpClass::kGroupedGemm);
  // Few rows per expert: each expert's weights stream at the grouped kernel's
  // own share of the HBM bandwidth where the stack gives one, else the dense GEMMs'.
  topology::StackSpec s = stack();
  s.gemm_memory = 0.8;
  const Operator thin = workloads::gemm(8, 4096, 4096, Dtype::kFp8, 32);
  CHECK(priced(thin, s) == Approx(thin.bytes / (0.8 * 2e12) + 5e-6).epsilon(1e-12));
  s.grouped_fp8.memory = 0.5;
  CHECK(priced(thin, s) == Approx(thin.bytes / (0.5 * 2e12) + 5e-6).epsilon(1e-12));
  const Operator dense = workloads::gemm(8, 4096, 4096, Dtype::kFp8);  // a dense GEMM keeps the dense share
  CHECK(priced(dense, s) == Approx(dense.bytes / (0.8 * 2e12) + 5e-6).epsilon(1e-12));
}

TEST_CASE("operator: the attention core by head width and context; its backward 2.5x at its own rate",
          "[calibration]") {
  // 4096 queries, 32 heads of 64 channels, 2048.5 keys each: F = t c 2 H (dqk + dv); e = 0.5 x 64/128.
  const Operator a = workloads::attention_core(4096, 32, 64, 64, 2048.5);
  CHECK(a.flops == 4096 * 2048.5 * 2 * 32 * 128.0);
  CHECK(priced(a) == Approx(a.flops / (0.25 * 500e12) + 5e-6).epsilon(1e-12));
  const Operator b = workloads::attention_backward(a);
  CHECK(b.flops == 2.5 * a.flops);
  CHECK(priced(b) == Approx(b.flops / (0.2 * 500e12) + 5e-6).epsilon(1e-12));
  // A short context runs at context / (context + half_context).
  topology::StackSpec s = stack();
  s.attention.half_context = 2048.5;
  CHECK(priced(a, s) == Approx(a.flops / (0.125 * 500e12) + 5e-6).epsilon(1e-12));
}

TEST_CASE("operator: a decode step's attention core at the stack's decode kernel, its cache at its HBM share",
          "[calibration][serving]") {
  // 64 queries of 32 sequences, 128 heads over a 576/512-channel latent, 4990.5 keys, each sequence's cache once.
  Operator a = workloads::attention_core(64, 128, 576, 512, 4990.5);
  a.bytes += 32 * 4990.5 * 1152;
  a.decode = true;
  // Without a decode kernel: the forward core's rate, the bytes at the full bandwidth.
  CHECK(priced(a) == Approx(std::max(a.flops / (0.5 * 576 / 640 * 500e12), a.bytes / 2e12) + 5e-6).epsilon(1e-12));
  topology::StackSpec s = stack();
  s.decode_attention = topology::AttentionEfficiency{0.667, 0, 0};
  s.decode_attention_memory = 0.896;
  const double compute = a.flops / (0.667 * 500e12), memory = a.bytes / (0.896 * 2e12);
  CHECK(priced(a, s) == Approx(std::max(compute, memory) + 5e-6).epsilon(1e-12));
  // A prefill core on the same stack keeps the forward's rate.
  a.decode = false;
  CHECK(priced(a, s) == Approx(std::max(a.flops / (0.5 * 576 / 640 * 500e12), a.bytes / 2e12) + 5e-6).epsilon(1e-12));
}

TEST_CASE("operator: each memory-bound class at its own HBM share, forward and backward", "[calibration]") {
  const OpClass classes[] = {OpClass::kElementwise, OpClass::kNorm,   OpClass::kActivation, OpClass::kGather,
                             OpClass::kScatterAdd,  OpClass::kRouter, OpClass::kLoss,       OpClass::kOptimizer};
  const double forward[] = {0.9, 0.5, 0.25, 1.0, 0.1, 0.05, 0.2, 0.75};
  const double backward[] = {0.9, 0.25, 0.125, 1.0, 0.1, 0.05, 0.2, 0.75};
  for (int i = 0; i < 8; ++i) {
    INFO(workloads::to_string(classes[i]));
    CHECK(priced(workloads::memory_op(classes[i], 1e9)) == Approx(1e9 / (forward[i] * 2e12) + 5e-6).epsilon(1e-12));
    CHECK(priced(workloads::memory_op(classes[i], 1e9, 2, true)) ==
          Approx(1e9 / (backward[i] * 2e12) + 2 * 5e-6).epsilon(1e-12));
  }
  // A plain SwiGLU the stack fuses runs as one streaming kernel.
  Operator swiglu = workloads::memory_op(OpClass::kActivation, 1e9, 2);
  swiglu.fusable = true;
  topology::StackSpec fused = stack();
  fused.fused_swiglu = true;
  CHECK(priced(swiglu) == Approx(1e9 / (0.25 * 2e12) + 2 * 5e-6).epsilon(1e-12));
  CHECK(priced(swiglu, fused) == Approx(1e9 / (0.9 * 2e12) + 5e-6).epsilon(1e-12));
}

TEST_CASE("the router's score function and top-k: six eager kernels, issued by the host, or one fused",
          "[calibration]") {
  topology::StackSpec s = stack();
  const Operator r = workloads::router_op(1e6);
  CHECK(r.kernels == 6);
  CHECK(priced(r) == Approx(1e6 / (0.05 * 2e12) + 6 * 5e-6).epsilon(1e-12));
  // Eager: a small router is the host's pace, six kernels issued at host_per_kernel.
  s.host_per_kernel_s = 11.6e-6;
  CHECK(sim::calibrated_time_s(task(TaskKind::kGate, {r}), 0, s, npu(), std::nullopt) == Approx(6 * 11.6e-6));
  // Fused (moe_router_fusion): one kernel, one launch, one issue.
  s.fused_router = true;
  CHECK(priced(r, s) == Approx(1e6 / (0.05 * 2e12) + 5e-6).epsilon(1e-12));
  CHECK(sim::calibrated_time_s(task(TaskKind::kGate, {r}), 0, s, npu(), std::nullopt) ==
        Approx(1e6 / (0.05 * 2e12) + 5e-6).epsilon(1e-12));
  // A fused SwiGLU is issued as one kernel too.
  Operator swiglu = workloads::memory_op(OpClass::kActivation, 1e3, 2);
  swiglu.fusable = true;
  s.fused_swiglu = true;
  CHECK(sim::calibrated_time_s(task(TaskKind::kExpertGemm, {swiglu}), 0, s, npu(), std::nullopt) == Approx(11.6e-6));
}

TEST_CASE("task: its operators summed, never faster than the host issues them, a MoE forward's host sync",
          "[calibration]") {
  topology::StackSpec s = stack();
  const Operator g = workloads::gemm(4096, 7168, 2048, Dtype::kBf16);
  const Operator n = workloads::memory_op(OpClass::kNorm, 1e8);
  Task gate = task(TaskKind::kGate, {n, g});
  CHECK(sim::calibrated_time_s(gate, 0, s, npu(), std::nullopt) == Approx(priced(n) + priced(g)).epsilon(1e-12));
  s.moe_host_sync_s = 66e-6;
  CHECK(sim::calibrated_time_s(gate, 0, s, npu(), std::nullopt) ==
        Approx(priced(n, s) + priced(g, s) + 66e-6).epsilon(1e-12));
  gate.phase = workloads::Phase::kBackward;  // the backward's counts are known: no round trip
  CHECK(sim::calibrated_time_s(gate, 0, s, npu(), std::nullopt) == Approx(priced(n) + priced(g)).epsilon(1e-12));
  // An FP8 GEMM issues no faster than the stack's host time per FP8 call (a
  // BF16 one at host_per_kernel), whatever its GPU time.
  s.host_per_kernel_s = 11.6e-6;
  s.host_per_fp8_gemm_s = 31.9e-6;
  const Operator tiny8 = workloads::gemm(64, 64, 64, Dtype::kFp8);
  CHECK(sim::calibrated_time_s(task(TaskKind::kAttention, {tiny8}), 0, s, npu(), std::nullopt) == Approx(31.9e-6));
  CHECK(sim::calibrated_time_s(task(TaskKind::kAttention, {workloads::gemm(64, 64, 64, Dtype::kBf16)}), 0, s, npu(),
                               std::nullopt) == Approx(11.6e-6));
  s.host_per_fp8_gemm_s = 0;
  // Host-bound: 200 tiny kernels at 11.6 us of issue each.
  s.host_per_kernel_s = 11.6e-6;
  Task tiny = task(TaskKind::kAttention, {workloads::memory_op(OpClass::kElementwise, 1e3, 200)});
  CHECK(sim::calibrated_time_s(tiny, 0, s, npu(), std::nullopt) == Approx(200 * 11.6e-6).epsilon(1e-12));
  // A rank running half the work (an expert GEMM's lighter rank) prices half the amounts.
  Task experts = task(TaskKind::kExpertGemm, {workloads::gemm(300, 1500, 3000, Dtype::kFp8, 8)});
  experts.flops = {experts.flops[0] / 2};
  const Operator half = workloads::gemm(150, 1500, 3000, Dtype::kFp8, 8);
  CHECK(sim::calibrated_time_s(experts, 0, stack(), npu(), std::nullopt) ==
        Approx(half.flops / (0.6 * 0.75 * 0.75 * 0.75 * 1e15) + 5e-6).epsilon(1e-12));
}

TEST_CASE("task: a grouped GEMM its library issues per expert costs the host one call per expert, the GPU one kernel's time",
          "[calibration]") {
  topology::StackSpec s = stack();
  s.host_per_kernel_s = 11.6e-6;
  s.host_per_fp8_gemm_s = 31.9e-6;
  // 16 experts of 16 rows: microseconds of GPU time, below even one host call.
  const Operator experts = workloads::gemm(16, 512, 512, Dtype::kFp8, 16);
  const Task t = task(TaskKind::kExpertGemm, {experts});
  CHECK(sim::calibrated_time_s(t, 0, s, npu(), std::nullopt) == Approx(31.9e-6).epsilon(1e-12));  // one kernel
  s.grouped_fp8.per_expert_launch = true;
  CHECK(sim::calibrated_time_s(t, 0, s, npu(), std::nullopt) == Approx(16 * 31.9e-6).epsilon(1e-12));
  // Each call also pays the GPU's launch gap; the kernels' work is the grouped one's.
  CHECK(priced(experts, s) == Approx(priced(experts) + 15 * 5e-6).epsilon(1e-12));
  // Where the stack quantizes the operand apart (an amax pass and a cast), the host issues those two per call too.
  s.fp8_cast_bytes = 5;
  CHECK(sim::calibrated_time_s(t, 0, s, npu(), std::nullopt) ==
        Approx(16 * (31.9e-6 + 2 * 11.6e-6)).epsilon(1e-12));
  // A BF16 grouped GEMM on the same stack stays one kernel at host_per_kernel.
  const Operator bf16 = workloads::gemm(16, 512, 512, Dtype::kBf16, 16);
  CHECK(sim::calibrated_time_s(task(TaskKind::kExpertGemm, {bf16}), 0, s, npu(), std::nullopt) ==
        Approx(std::max(priced(bf16, s), 11.6e-6)).epsilon(1e-12));
  // The stacks: Transformer Engine's FP8 grouped GEMM is per expert on Hopper (its single-kernel
  // CUTLASS path is BF16 on Hopper only) and every precision's on Blackwell.
  const topology::StackSpec hopper = topology::load_stack("hopper-megatron", nullptr, "H100 SXM", "test");
  CHECK(hopper.grouped_fp8.per_expert_launch);
  CHECK_FALSE(hopper.grouped_bf16.per_expert_launch);
  CHECK(hopper.grouped_fp8.max == topology::load_stack("hopper-eager", nullptr, "H100 SXM", "test").grouped_fp8.max);
  const topology::StackSpec blackwell = topology::load_stack("blackwell-megatron", nullptr, "B200 (DGX B200)", "test");
  CHECK(blackwell.grouped_fp8.per_expert_launch);
  CHECK(blackwell.grouped_bf16.per_expert_launch);
  CHECK_FALSE(topology::load_stack("hopper-deepseek", nullptr, "H800 SXM", "test").grouped_fp8.per_expert_launch);
}

TEST_CASE("calibration: rescaled amounts take the priced time on the roofline", "[calibration]") {
  workloads::TaskGraph g;
  g.ranks = 2;
  g.ranks_per_node = 2;
  Task gate = task(TaskKind::kGate, {workloads::gemm(4096, 256, 7168, Dtype::kFp32),
                                     workloads::memory_op(OpClass::kRouter, 2e9)});
  gate.flops.push_back(0);
  gate.hbm_bytes.push_back(0);
  g.tasks.push_back(gate);
  sim::PlatformFacts p;
  p.npus = {npu(), npu()};
  sim::Placement place;
  place.npu_of_rank = {0, 1};
  place.ranks_per_node = 2;
  const workloads::TaskGraph c = sim::calibrate_compute(g, stack(), p, place, std::nullopt);
  const double target = sim::calibrated_time_s(gate, 0, stack(), npu(), std::nullopt);
  const Task& t = c.tasks[0];
  CHECK(std::max(t.flops[0] / 500e12, t.hbm_bytes[0] / 2e12) == Approx(target).epsilon(1e-12));
  CHECK(t.flops[0] / t.hbm_bytes[0] == Approx(gate.flops[0] / gate.hbm_bytes[0]).epsilon(1e-12));  // same side binds
  CHECK(t.flops[1] == 0);  // no work on rank 1: nothing launched
  CHECK(t.hbm_bytes[1] == 0);
  CHECK(t.ops.empty());  // priced once
}

TEST_CASE("stack presets: hopper-eager lands on its calibration rows of the H200 tables", "[calibration]") {
  // ../shared/reference/h200: each named row the stack file calibrates on, priced
  // on an H200 (989 / 1979 TFLOP/s, 4.8 TB/s).
  const topology::StackSpec s = topology::load_stack("hopper-eager", nullptr, "H200 SXM", "test");
  const sim::NpuFacts h200 = h200_npu();
  auto time = [&](const Operator& op) { return sim::operator_time_s(op, s, h200, std::nullopt) - s.launch_s * op.kernels; };
  // The GEMM parameters are solved together with the launch in (as validate prices a row).
  auto gemm = [&](const Operator& op) {
    return sim::calibrated_time_s(task(TaskKind::kExpertGemm, {op}), 0, s, h200, std::nullopt);
  };
  CHECK(gemm(workloads::gemm(4096, 36864, 7168, Dtype::kBf16)) == Approx(2.993091e-03).epsilon(0.005));  // dsv3.dense_up.fwd
  CHECK(gemm(workloads::gemm(4096, 7168, 256, Dtype::kBf16)) == Approx(4.400144e-05).epsilon(0.005));    // trend.k K=256
  CHECK(gemm(workloads::gemm(4096, 256, 7168, Dtype::kBf16)) == Approx(2.984064e-05).epsilon(0.005));    // trend.n N=256
  CHECK(gemm(workloads::gemm(1024, 7168, 16384, Dtype::kBf16)) == Approx(3.566080e-04).epsilon(0.005));  // trend.n7168k16384
  CHECK(gemm(workloads::gemm(4096, 36864, 7168, Dtype::kFp8)) == Approx(1.633089e-03).epsilon(0.005));  // dsv3.dense_up.fwd
  CHECK(gemm(workloads::gemm(4096, 7168, 256, Dtype::kFp8)) == Approx(4.415808e-05).epsilon(0.005));    // trend.k K=256
  CHECK(gemm(workloads::gemm(4096, 4096, 7168, Dtype::kBf16, 8)) == Approx(2.815203e-03).epsilon(0.005));  // grouped up
  // The grouped kernels' weight streaming, each dtype's: dsv3.up 32 x 128 rows.
  CHECK(gemm(workloads::gemm(128, 4096, 7168, Dtype::kBf16, 32)) == Approx(5.612722e-04).epsilon(0.005));
  CHECK(gemm(workloads::gemm(128, 4096, 7168, Dtype::kFp8, 32)) == Approx(3.895204e-04).epsilon(0.005));
  // The kernel's fixed time on a 29 MB weight read, the GEMMs' memory roofline
  // on a 235 MB one (M = 64), FP8's host time per call where the GPU is quicker.
  CHECK(gemm(workloads::gemm(64, 7168, 2048, Dtype::kBf16)) == Approx(1.517264e-05).epsilon(0.005));
  CHECK(gemm(workloads::gemm(64, 7168, 16384, Dtype::kBf16)) == Approx(6.670640e-05).epsilon(0.005));
  CHECK(gemm(workloads::gemm(64, 7168, 2048, Dtype::kFp8)) == Approx(3.192496e-05).epsilon(0.001));
  CHECK(time(workloads::attention_core(4096, 32, 64, 64, 2048.5)) == Approx(1.808431e-04).epsilon(0.01));  // trend.d 64
  CHECK(time(workloads::attention_core(1024, 32, 128, 128, 512.5)) == Approx(3.104490e-05).epsilon(0.01));  // trend.seq 1024
  CHECK(time(workloads::memory_op(OpClass::kNorm, 67108864)) == Approx(2.479168e-05).epsilon(0.01));  // qwen3_235b
  CHECK(time(workloads::memory_op(OpClass::kScatterAdd, 1056964608)) == Approx(2.430277e-03).epsilon(0.01));
  // A stack measured on other NPUs is refused, not borrowed.
  CHECK_THROWS_WITH(topology::load_stack("hopper-eager", nullptr, "Ascend 910B", "p.toml"),
                    Catch::Contains("stack \"hopper-eager\" has no tables for NPU \"Ascend 910B\""));
}

TEST_CASE("stack presets: blackwell-deepseek runs FlashMLA's published SM100 attention rates, the rest hopper-deepseek's",
          "[calibration]") {
  // deepseek-ai/FlashMLA README: up to 1460 TFLOPS forward and 1000 backward on a B200 (2250 TFLOPS BF16).
  const topology::StackSpec s = topology::load_stack("blackwell-deepseek", nullptr, "B200 (DGX B200)", "test");
  const sim::NpuFacts b200 = npu_of("b200", 2250e12, 4500e12, 8e12);
  // DeepSeek-V3's prefill core: 4096 queries, 128 heads of 192/128 channels, 2048.5 keys each.
  const Operator a = workloads::attention_core(4096, 128, 192, 128, 2048.5);
  auto time = [&](const Operator& op) { return sim::operator_time_s(op, s, b200, std::nullopt) - s.launch_s * op.kernels; };
  CHECK(time(a) == Approx(a.flops / 1460e12).epsilon(0.001));
  CHECK(time(workloads::attention_backward(a)) == Approx(2.5 * a.flops / 1000e12).epsilon(0.001));
  // The rest is carried from hopper-deepseek (an assumption the file states), its framework costs included.
  const topology::StackSpec hopper = topology::load_stack("hopper-deepseek", nullptr, "H800 SXM", "test");
  CHECK(s.gemm_fp8.max == hopper.gemm_fp8.max);
  CHECK(s.grouped_fp8.max == hopper.grouped_fp8.max);
  CHECK(s.launch_s == hopper.launch_s);
  CHECK(s.host_per_kernel_s == 0);
  CHECK(*s.comm_compute_share == Approx(20.0 / 148).epsilon(1e-3));  // DeepEP's 20 SMs of a B200's 148
  CHECK_THROWS_WITH(topology::load_stack("blackwell-deepseek", nullptr, "H800 SXM", "p.toml"),
                    Catch::Contains("stack \"blackwell-deepseek\" has no tables for NPU \"H800 SXM\""));
}

TEST_CASE("stack with measured tables: exact on every measured shape, the model's trend between", "[calibration]") {
  const topology::StackSpec s = topology::load_stack("hopper-eager-h200", nullptr, "H200 SXM", "test");
  const topology::StackSpec model = topology::load_stack("hopper-eager", nullptr, "H200 SXM", "test");
  REQUIRE(s.measured.size() == 174 + 22 + 27);
  const sim::NpuFacts h200 = h200_npu();
  // A shape measured more than once lands on its rows' geometric mean.
  auto same_shape = [](const topology::MeasuredKernel& a, const topology::MeasuredKernel& b) {
    return a.op == b.op && a.dtype == b.dtype && a.pass == b.pass && a.m == b.m && a.n == b.n && a.k == b.k &&
           a.groups == b.groups && a.heads == b.heads && a.d_qk == b.d_qk && a.d_v == b.d_v && a.seq == b.seq &&
           a.bytes == b.bytes;
  };
  int exact = 0;
  for (const topology::MeasuredKernel& row : s.measured) {
    const workloads::Operators ops = sim::measured_operators(row);
    if (ops.size() != 1) continue;  // a forward_backward pair, a router after its scores GEMM
    double log_sum = 0;
    int n = 0;
    for (const topology::MeasuredKernel& other : s.measured)
      if (same_shape(row, other)) log_sum += std::log(other.seconds), ++n;
    CHECK(sim::operator_time_s(ops.front(), s, h200, std::nullopt) == Approx(std::exp(log_sum / n)).epsilon(1e-9));
    ++exact;
  }
  CHECK(exact == 174 + 11 + 24);
  // Between measured shapes: the model's time times the rows' ratios
  // weighted by inverse squared distance in log shape: at the log midpoint
  // of two rows, their geometric mean.
  topology::StackSpec two = stack();
  topology::MeasuredKernel a;
  a.op = "gemm";
  a.m = 1024, a.n = 1024, a.k = 1024;
  a.seconds = 2 * priced(workloads::gemm(1024, 1024, 1024, Dtype::kBf16));
  topology::MeasuredKernel b = a;
  b.k = 4096;
  b.seconds = 0.5 * priced(workloads::gemm(1024, 1024, 4096, Dtype::kBf16));
  two.measured = {a, b};
  const Operator mid = workloads::gemm(1024, 1024, 2048, Dtype::kBf16);
  CHECK(priced(mid, two) == Approx(priced(mid) * std::sqrt(2 * 0.5)).epsilon(1e-12));
  const Operator near_a = workloads::gemm(1024, 1024, 1024 * std::pow(4.0, 0.25), Dtype::kBf16);  // 1/4 of the way
  CHECK(priced(near_a, two) == Approx(priced(near_a) * std::exp((9 * std::log(2.0) + std::log(0.5)) / 10)).epsilon(1e-9));
  CHECK(priced(workloads::gemm(1024, 1024, 2048, Dtype::kFp8), two) ==
        priced(workloads::gemm(1024, 1024, 2048, Dtype::kFp8)));  // no FP8 row: the model's price
  // A stack whose tables were measured on another chip is refused, never borrowed.
  CHECK_THROWS_WITH(topology::load_stack("hopper-eager-h200", nullptr, "H100 SXM", "p.toml"),
                    Catch::Contains("stack \"hopper-eager-h200\" has no tables for NPU \"H100 SXM\""));
}
