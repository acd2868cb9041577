// Peaks by dtype and the check that every compute kernel has one.
#include "sim/replay/compute_precision.hpp"

#include <array>

#include <fmt/format.h>

#include "core/error.hpp"

namespace epsim::sim {

using workloads::Dtype;

double peak_flops_per_s(const NpuFacts& npu, Dtype dtype) {
  switch (dtype) {
    case Dtype::kFp8: return npu.flops_fp8_per_s;
    case Dtype::kInt8: return npu.flops_int8_per_s;
    case Dtype::kFp32: return npu.flops_fp32_per_s;
    case Dtype::kBf16: return npu.flops_bf16_per_s;
  }
  return npu.flops_bf16_per_s;
}

Dtype effective_dtype(const NpuFacts& npu, Dtype dtype, std::optional<Dtype> fallback) {
  if (peak_flops_per_s(npu, dtype) > 0 || !fallback) return dtype;
  return *fallback;
}

namespace {

// The platform property that would give `dtype` a peak.
const char* property_of(Dtype dtype) {
  switch (dtype) {
    case Dtype::kFp8: return "flops_fp8";
    case Dtype::kInt8: return "flops_int8";
    case Dtype::kFp32: return "flops_fp32";
    case Dtype::kBf16: return "speed";
  }
  return "?";
}

}  // namespace

std::vector<DtypeFallback> check_compute_dtypes(const PlatformFacts& platform, const Placement& placement,
                                                const workloads::TaskGraph& graph, std::optional<Dtype> fallback,
                                                const std::string& platform_source) {
  constexpr int kDtypes = 4;
  std::array<bool, kDtypes> used{};
  for (const workloads::Task& t : graph.tasks)
    if (!t.is_collective()) used[static_cast<std::size_t>(t.dtype)] = true;
  std::vector<DtypeFallback> out;
  for (int d = 0; d < kDtypes; ++d) {
    if (!used[static_cast<std::size_t>(d)]) continue;
    const auto dtype = static_cast<Dtype>(d);
    for (int npu : placement.npu_of_rank) {
      const NpuFacts& n = platform.npus[static_cast<std::size_t>(npu)];
      if (peak_flops_per_s(n, dtype) > 0) continue;
      const std::string missing =
          fmt::format("{} GEMMs need an {} peak, and host {} has none (no {} property)", to_string(dtype),
                      to_string(dtype), n.name, property_of(dtype));
      if (!fallback)
        throw InputError({platform_source}, "precision.gemm",
                         missing + "; set precision.gemm_fallback = \"bf16\" in the workload to run them at the "
                                   "BF16 peak");
      if (!(peak_flops_per_s(n, *fallback) > 0))
        throw InputError({platform_source}, "precision.gemm_fallback",
                         fmt::format("{}, and no {} peak either", missing, to_string(*fallback)));
      out.push_back({dtype, *fallback, n.name});
      break;
    }
  }
  return out;
}

}  // namespace epsim::sim
