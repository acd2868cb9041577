// DeepEP's message sizes and benchmark byte counts.
#include "sim/validation/deepep_bytes.hpp"

#include <cmath>

#include "core/error.hpp"
#include "core/moe_formulas.hpp"

namespace epsim::sim {

namespace {

double padded16(double bytes) { return std::ceil(bytes / 16.0) * 16.0; }

// Payload of one token on the wire.
double payload_bytes(int hidden, workloads::Dtype wire, const char* kernel) {
  const double h = hidden;
  switch (wire) {
    case workloads::Dtype::kBf16: return 2.0 * h;
    case workloads::Dtype::kFp8: return h + static_cast<double>(fp8_scale_bytes(hidden));
    case workloads::Dtype::kInt8: return h + 4.0;  // one FP32 scale per token
    case workloads::Dtype::kFp32: break;
  }
  throw InputError({}, kernel, "DeepEP's kernels send fp8, int8 or bf16 tokens");
}

}  // namespace

const char* to_string(DeepEpKernel k) { return k == DeepEpKernel::kNormal ? "normal" : "low_latency"; }

DeepEpTokenBytes deepep_token_bytes(int hidden, int top_k, DeepEpKernel kernel, workloads::Dtype dispatch,
                                    workloads::Dtype combine, CountedAs counted) {
  DeepEpTokenBytes b;
  const double d = payload_bytes(hidden, dispatch, "dispatch");
  const double c = payload_bytes(hidden, combine, "combine");
  const double d_counted = counted == CountedAs::kFp8    ? payload_bytes(hidden, workloads::Dtype::kFp8, "dispatch")
                           : counted == CountedAs::kBf16 ? payload_bytes(hidden, workloads::Dtype::kBf16, "dispatch")
                                                         : d;
  if (kernel == DeepEpKernel::kLowLatency) {
    const double header = 16.0;  // DeepEP LL: an int4 of source index and metadata before the payload
    b.dispatch_moved = d + header;
    b.dispatch_counted = d_counted + header;
    b.combine_counted = b.combine_moved = c;
    return b;
  }
  b.dispatch_counted = d_counted;
  b.combine_counted = c;
  const double source_record = 8.0;
  b.dispatch_moved = padded16(d + 4.0 * top_k + 4.0 * top_k + source_record);
  b.combine_moved = padded16(c + 4.0 * top_k + source_record);
  return b;
}

DeepEpTokenBytes with_counted_metadata(DeepEpTokenBytes bytes, int top_k) {
  bytes.dispatch_counted += static_cast<double>(top_k) * static_cast<double>(kRoutingIndexBytes + kRoutingWeightBytes);
  return bytes;
}

DeepEpCountedBytes deepep_counted_bytes(const workloads::TrafficMatrix& traffic, const DeepEpTokenBytes& token_bytes,
                                        DeepEpKernel kernel, bool flat, bool per_selection) {
  DeepEpCountedBytes out;
  double counted_tokens = 0;
  if (kernel == DeepEpKernel::kLowLatency || (flat && per_selection)) {
    counted_tokens = static_cast<double>(traffic.selections_per_rank) * traffic.ranks;
  } else if (traffic.nodes() == 1 || flat) {
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
