// A software stack: the kernel libraries and the framework a step runs
// on a chip family, apart from the chip (docs/stacks.md). How close each
// operator class comes to the chip's peaks is a property of the library
// (cuBLAS, DeepGEMM, CANN, FlashAttention, eager PyTorch or fused
// kernels), not of the hardware, so it lives here and a platform only
// names its default stack (`[stack] name`). A stack lists the NPUs it has
// measured tables for; running it on another is an error, never a borrowing.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "core/toml_reader.hpp"
#include "topology/dispatch_kernel.hpp"
#include "topology/measured_kernels.hpp"

namespace epsim::topology {

// A GEMM library's share of the dtype's peak by shape:
//   max x M/(M + half_rows) x N/(N + half_n) x K/(K + half_k)
// (a half point of 0: no dependence). Each factor is one mechanism: tensor
// core occupancy on large shapes, waves of row tiles, column tiles, and
// the K loop's prologue and epilogue.
struct GemmEfficiency {
  double max = 1;
  double half_rows = 0;
  double half_n = 0;
  double half_k = 0;
  // A grouped GEMM the library issues as one GEMM per expert (grouped
  // tables' `launch = "per_expert"`: Transformer Engine's multi-stream
  // cuBLASLt path) rather than one kernel: the host issues each.
  bool per_expert_launch = false;
  // A grouped GEMM's own weight-streaming share of the HBM bandwidth (grouped
  // tables' `memory`; 0: the dense GEMMs' `[memory] gemm`): at few rows per
  // expert each expert's weights are read once, at the grouped kernel's rate.
  double memory = 0;
  static double factor(double x, double half) { return half > 0 && x > 0 ? x / (x + half) : 1.0; }
  double at(double m, double n, double k) const {
    return max * factor(m, half_rows) * factor(n, half_n) * factor(k, half_k);
  }
};

// The attention core's share of the BF16 peak: max x d/(d + half_dim) x
// c/(c + half_context), d the query/key channels per head, c the mean keys
// a query attends to (short or windowed contexts run small tiles).
struct AttentionEfficiency {
  double max = 1;
  double half_dim = 0;
  double half_context = 0;
  double at(double head_dim, double context) const {
    return max * GemmEfficiency::factor(head_dim, half_dim) * GemmEfficiency::factor(context, half_context);
  }
};

// The memory-bound operator classes a stack rates (workloads::OpClass's
// memory-bound members, in its order from kElementwise).
enum class MemoryClass { kElementwise, kNorm, kActivation, kGather, kScatterAdd, kRouter, kLoss, kOptimizer };
inline constexpr int kMemoryClasses = 8;
inline constexpr std::array<const char*, kMemoryClasses> kMemoryClassNames = {
    "elementwise", "norm", "activation", "gather", "scatter_add", "router", "loss", "optimizer"};

struct StackSpec {
  std::string name;    // "" for the plain roofline (no stack: an XML platform, a test)
  std::string source;  // the file it was read from
  std::vector<std::string> npus;  // npu.model values it has tables for; empty: any
  GemmEfficiency gemm_bf16, gemm_fp8, grouped_bf16, grouped_fp8;
  // A GEMM kernel's fixed time beside its FLOPs and bytes (prologue, the
  // first wave's ramp, epilogue): what a small GEMM costs above its
  // roofline ([gemm] fixed, [grouped_gemm] fixed).
  double gemm_fixed_s = 0;
  double grouped_fixed_s = 0;
  AttentionEfficiency attention, attention_backward;
  // The attention core of a decode step ([decode_attention]: a kernel that
  // reads each sequence's cache once for a few queries, FlashMLA's): its
  // share of the BF16 peak and of the HBM bandwidth. Unset: priced as the
  // forward's core, its bytes at the full HBM bandwidth.
  std::optional<AttentionEfficiency> decode_attention;
  double decode_attention_memory = 1;
  // Shares of the HBM bandwidth, forward and backward kernels per class;
  // `gemm_memory` the GEMMs' own memory roofline (small M: weight reads).
  std::array<double, kMemoryClasses> memory{1, 1, 1, 1, 1, 1, 1, 1};
  std::array<double, kMemoryClasses> memory_backward{1, 1, 1, 1, 1, 1, 1, 1};
  double gemm_memory = 1;
  // Framework: the GPU-side gap each kernel adds, the host time to issue
  // one (a task runs no faster than its kernels are issued), and the host
  // round trip each MoE layer's forward makes before its dispatch (the
  // token dispatcher reads the per-expert counts back).
  double launch_s = 0;
  double host_per_kernel_s = 0;
  // The host time to issue one FP8 GEMM where the library does more than
  // launch it (eager torch._scaled_mm: cuBLASLt's heuristic query and the
  // scales, per call); 0: host_per_kernel as any kernel.
  double host_per_fp8_gemm_s = 0;
  double moe_host_sync_s = 0;
  // Whether the plain SwiGLU runs as one fused streaming kernel (priced at
  // the elementwise rate) rather than as its eager kernels.
  bool fused_swiglu = false;
  // Whether the router's score function, top-k and normalisation run as
  // one fused kernel (Megatron's moe_router_fusion, DeepSeek's gating)
  // rather than as their eager kernels (workloads::kEagerRouterKernels).
  bool fused_router = false;
  // Bytes moved per element of an FP8 GEMM's activation operand to quantize
  // it in separate kernels (Transformer Engine's per-tensor current
  // scaling: an amax pass reads 2 B, the cast reads 2 B and writes 1 B: 5);
  // 0 where quantization is fused into the kernel before (DeepSeek's).
  double fp8_cast_bytes = 0;
  DispatchKernel dispatch = DispatchKernel::kDeepEpNormal;  // [dispatch] kernel
  // The collective library's cost per call beside its bytes ([collectives]:
  // NCCL's or HCCL's launch and protocol setup, and per peer of a grouped
  // send/recv such as its all-to-all): what a small collective costs above
  // its links' latency. DeepEP's kernels carry their own (the platform's
  // [kernels]) and pay none of these.
  double collective_launch_s = 0;
  double collective_peer_s = 0;
  // The share of an NPU's compute its communication kernels hold while they
  // run ([dispatch] compute_share: DeepEP's 20 of Hopper's 132 SMs);
  // replaces the platform's npu.comm_compute_share when given.
  std::optional<double> comm_compute_share;
  // Kernels measured on this stack's NPU ([tables] compute: compute files):
  // an operator is priced by the model times the measured / modelled ratio
  // of its nearest rows by shape (sim/replay/measured_pricing.hpp).
  std::vector<MeasuredKernel> measured;
  std::vector<std::string> measured_files;
  std::vector<SourceLocation> measured_at;  // where each file was named
};

// The stack `name` (a preset in stacks/ or a file), with `platform_stack`
// (the platform's [stack] table, `name` excepted) merged over it key by
// key, checked for `npu_model`. Throws InputError at file:line:col and key:
// unknown keys, values outside their physical ranges, an NPU the stack has
// no tables for.
StackSpec load_stack(const std::string& name, const toml::table* platform_stack, const std::string& npu_model,
                     const std::string& platform_source);

// Whether the stack's framework spends host time on the step (issuing each
// kernel, a host sync per MoE layer): a training framework's eager loop,
// which a serving framework's captured graphs do not pay.
bool issues_from_host(const StackSpec& stack);

// The stack presets with tables for `npu_model` (a named NPU list: not the
// roofline) whose framework spends no host time, sorted: what `serve`
// names beside a host-bound stack.
std::vector<std::string> stacks_without_host_time(const std::string& npu_model);

// A share (`what`: "a share of the peak", of the HBM bandwidth, of a line
// rate) inside the physical range of an efficiency, default 1 when absent;
// InputError at the key otherwise.
double read_efficiency_share(TableReader& t, std::string_view key, const char* what);

// comm_compute_share must stay below this (a communication kernel holding
// all of an NPU would starve its compute): the TOML readers and the
// platform contract check (sim/platform/npu_platform.hpp) all use it.
inline constexpr double kCommComputeShareLimit = 1;

// A share of compute held by communication kernels, in [0,
// kCommComputeShareLimit); nothing when absent.
std::optional<double> read_compute_share(TableReader& t, std::string_view key);

// Reads a stack from a parsed TOML tree (the stack file's keys); `sources`
// names the values merged in from elsewhere.
StackSpec read_stack(const toml::table& root, const std::string& source, const NodeSources* sources = nullptr);

}  // namespace epsim::topology
