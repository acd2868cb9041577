// DeepEP's message sizes and benchmark byte counts.
#include "sim/validation/deepep_bytes.hpp"

#include <cmath>

namespace epsim::sim {

namespace {

double padded16(double bytes) { return std::ceil(bytes / 16.0) * 16.0; }

}  // namespace

const char* to_string(DeepEpKernel k) { return k == DeepEpKernel::kNormal ? "normal" : "low_latency"; }

DeepEpTokenBytes deepep_token_bytes(int hidden, int top_k, DeepEpKernel kernel) {
  DeepEpTokenBytes b;
  const double h = hidden;
  if (kernel == DeepEpKernel::kLowLatency) {
    const double header = 16.0;  // DeepEP LL: an int4 of source index and metadata before the payload
    b.dispatch_counted = b.dispatch_moved = h + 4.0 * std::ceil(h / 128.0) + header;
    b.combine_counted = b.combine_moved = 2.0 * h;
    return b;
  }
  b.dispatch_counted = h * (1.0 + 4.0 / 128.0);
  b.combine_counted = h * 2.0;
  const double scales = 4.0 * std::ceil(h / 128.0);
  const double source_record = 8.0;
  b.dispatch_moved = padded16(h + scales + 4.0 * top_k + 4.0 * top_k + source_record);
  b.combine_moved = padded16(2.0 * h + 4.0 * top_k + source_record);
  return b;
}

DeepEpCountedBytes deepep_counted_bytes(const workloads::TrafficMatrix& traffic, const DeepEpTokenBytes& token_bytes,
                                        DeepEpKernel kernel) {
  DeepEpCountedBytes out;
  double counted_tokens = 0;
  if (kernel == DeepEpKernel::kLowLatency) {
    counted_tokens = static_cast<double>(traffic.selections_per_rank) * traffic.ranks;
  } else if (traffic.nodes() == 1) {
    for (std::int32_t t : traffic.tokens) counted_tokens += t;
  } else {
    double local_node_tokens = 0;
    for (int s = 0; s < traffic.ranks; ++s)
      for (int m = 0; m < traffic.nodes(); ++m) {
        counted_tokens += static_cast<double>(traffic.to_node(s, m));
        if (m == s / traffic.ranks_per_node) local_node_tokens += static_cast<double>(traffic.to_node(s, m));
      }
    out.local_node_share = counted_tokens > 0 ? local_node_tokens / counted_tokens : 0;
  }
  out.dispatch_bytes = counted_tokens * token_bytes.dispatch_counted / traffic.ranks;
  out.combine_bytes = counted_tokens * token_bytes.combine_counted / traffic.ranks;
  return out;
}

}  // namespace epsim::sim
