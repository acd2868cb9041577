// Byte counts per element and per token, and the distinct-rank expectations.
#include "workloads/workload_spec.hpp"

#include <algorithm>
#include <cmath>

#include "core/moe_formulas.hpp"

namespace epsim::workloads {

double dtype_bytes(Dtype dtype) {
  switch (dtype) {
    case Dtype::kFp8:
    case Dtype::kInt8: return 1;
    case Dtype::kBf16: return 2;
    case Dtype::kFp32: return 4;
  }
  return 2;
}

double token_bytes(Dtype dtype, std::int64_t hidden, int scale_block) {
  double bytes = static_cast<double>(hidden) * dtype_bytes(dtype);
  if (dtype == Dtype::kFp8) bytes += static_cast<double>(fp8_scale_bytes(hidden, scale_block));
  return bytes;
}

double dispatch_bytes_per_token(const WorkloadSpec& w) {
  double bytes = token_bytes(w.precision.dispatch, w.model.hidden, w.precision.scale_block);
  if (w.precision.routing_metadata)
    bytes += w.model.top_k * static_cast<double>(kRoutingIndexBytes + kRoutingWeightBytes);
  return bytes;
}

double combine_bytes_per_token(const WorkloadSpec& w) {
  double bytes = token_bytes(w.precision.combine, w.model.hidden, w.precision.scale_block);
  if (w.precision.routing_metadata) bytes += w.model.top_k * static_cast<double>(kRoutingWeightBytes);
  return bytes;
}

double distinct_ranks_exact(int ranks, int experts, int top_k) {
  // A rank is missed when all k draws fall among the other ranks' experts:
  // C(E-m, k)/C(E, k) = prod_{i<k} (E-m-i)/(E-i).
  const auto missed = [&](int owned) {
    double p = 1;
    for (int i = 0; i < top_k; ++i) {
      const double left = static_cast<double>(experts - owned - i);
      p *= left > 0 ? left / (experts - i) : 0.0;
    }
    return p;
  };
  if (experts % ranks == 0) return ranks * (1.0 - missed(experts / ranks));
  double reached = 0;
  for (int r = 0; r < ranks; ++r)
    reached += 1.0 - missed(first_expert_of_rank(r + 1, experts, ranks) - first_expert_of_rank(r, experts, ranks));
  return reached;
}

const char* to_string(RoutingKind kind) {
  switch (kind) {
    case RoutingKind::kUniform: return "uniform";
    case RoutingKind::kZipf: return "zipf";
    case RoutingKind::kHot: return "hot";
    case RoutingKind::kTrace: return "trace";
  }
  return "?";
}

const char* to_string(ServingPhase phase) { return phase == ServingPhase::kPrefill ? "prefill" : "decode"; }

std::int64_t expert_capacity(const WorkloadSpec& w) {
  if (!(w.routing.capacity_factor > 0)) return 0;
  const double mean = static_cast<double>(w.parallel.tokens_per_micro_batch) * w.model.top_k / w.model.experts;
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(mean * w.routing.capacity_factor - 1e-9)));
}

}  // namespace epsim::workloads
