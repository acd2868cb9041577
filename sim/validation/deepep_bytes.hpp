// What DeepEP's normal dispatch/combine kernels send per token and what
// its benchmark counts (the bytes it divides by the kernel time). Pure: no
// SimGrid; the kernels themselves are the replay's hierarchical alltoallv.
#pragma once

#include "workloads/task_graph.hpp"

namespace epsim::sim {

// DeepEP's two kernel families: normal (high-throughput, hierarchical
// relay, tokens deduplicated per rank/node) and low-latency (one message
// per (token, selected expert), straight to the expert's rank over RDMA).
enum class DeepEpKernel { kNormal, kLowLatency };
const char* to_string(DeepEpKernel k);  // "normal", "low_latency"

// Bytes per token. `counted` is what DeepEP's tests divide by the kernel
// time: hidden x (1 + 4/128) for FP8 dispatch (one FP32 scale per 128
// channels), hidden x 2 for BF16 combine. `moved` is the message DeepEP's
// kernels send per token: the counted payload plus int32 top-k indices,
// FP32 top-k weights (dispatch; weights only in combine) and an 8-byte
// source record, padded to 16 bytes.
struct DeepEpTokenBytes {
  double dispatch_counted = 0;
  double combine_counted = 0;
  double dispatch_moved = 0;
  double combine_moved = 0;
};
// How a benchmark counts a dispatched token (a measurement file's
// `dispatch_counted`): as its wire payload, or at DeepEP's FP8 size (hidden
// + one FP32 scale per 128 channels) or at BF16's (2 B per channel)
// whatever the wire: sgl-kernel-npu's A3 test divides the received tensor
// cast back to BF16, its low-latency test DeepEP's FP8 formula, for INT8 kernels.
enum class CountedAs { kWire, kFp8, kBf16 };

// Low-latency: one message per selection, counted as sent: FP8 hidden, one
// FP32 scale per 128 channels and a 16-byte header (DeepEP's LL message and
// its test's count), BF16 hidden in combine.
// Wire types (`dispatch`, `combine`): kFp8 carries one FP32 scale per 128
// channels (DeepEP's block quantization), kInt8 one FP32 scale per token
// (DeepEP-Ascend's dynamic quantization), kBf16 two bytes per channel and
// no scale; the defaults are DeepEP's FP8 dispatch and BF16 combine.
// `counted` sets the dispatch count (the low-latency header is counted
// either way). InputError for another dtype.
DeepEpTokenBytes deepep_token_bytes(int hidden, int top_k, DeepEpKernel kernel = DeepEpKernel::kNormal,
                                    workloads::Dtype dispatch = workloads::Dtype::kFp8,
                                    workloads::Dtype combine = workloads::Dtype::kBf16,
                                    CountedAs counted = CountedAs::kWire);

// The same with the routing metadata counted as DeepEP-Ascend's test counts
// it: a dispatched token's top-k int64 indices and FP32 weights added to
// dispatch_counted (7168 + 224 + 48 + 24 = 7464 B at top-6); combine's count
// and the moved messages unchanged.
DeepEpTokenBytes with_counted_metadata(DeepEpTokenBytes bytes, int top_k);

// What DeepEP's benchmark counts per rank (the rank's own tokens included),
// means over ranks: in one node, tokens received x token bytes ("NVL"
// bytes); across nodes, tokens sent once per (token, destination node), the
// sender's node included ("RDMA" bytes).
struct DeepEpCountedBytes {
  double dispatch_bytes = 0;
  double combine_bytes = 0;
  // Share of the counted internode tokens that stay in the sender's node
  // (counted by the benchmark, never on the NIC); 0 in one node.
  double local_node_share = 0;
};
// Low-latency, or a normal kernel sending one message per selection
// (`per_selection`, flat): every selection of the rank's tokens
// (traffic.selections_per_rank), its own rank's included.
// `flat` (a normal kernel on a supernode, one hop to every rank): tokens
// received per destination rank at every EP, as in one node.
DeepEpCountedBytes deepep_counted_bytes(const workloads::TrafficMatrix& traffic, const DeepEpTokenBytes& token_bytes,
                                        DeepEpKernel kernel = DeepEpKernel::kNormal, bool flat = false,
                                        bool per_selection = false);

}  // namespace epsim::sim
