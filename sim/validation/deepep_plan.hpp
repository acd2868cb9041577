// DeepEP's normal dispatch/combine kernels as plain-data flows between
// ranks, and the bytes its benchmarks count beside the bytes that move.
// Pure: no SimGrid (sim/deepep_kernels.* replays the flows).
#pragma once

#include <vector>

#include "workloads/task_graph.hpp"

namespace epsim::sim {

// Tokens from one rank to another in one stage of a kernel (a token counts
// once per (token, destination) of the stage).
struct TokenFlow {
  int src = 0;
  int dst = 0;
  double tokens = 0;
};

// The dispatch direction; combine runs the same flows reversed, stages in
// reverse order. Intranode: `network` empty, `nvlink` = source -> every
// rank holding one of the token's experts. Internode (hierarchical):
// `network` = source -> the GPU with the source's local index in every
// other destination node, once per (token, node); `nvlink` = that GPU (or
// the source itself for its own node) -> the token's target GPUs there.
// Flows to the sender itself are local copies and are left out.
struct DeepEpPlan {
  bool internode = false;
  int ranks = 0;
  int ranks_per_node = 0;
  std::vector<TokenFlow> network;
  std::vector<TokenFlow> nvlink;
};

// Intranode when all ranks sit in one node, internode otherwise.
DeepEpPlan plan_deepep(const workloads::TrafficMatrix& traffic);

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
DeepEpTokenBytes deepep_token_bytes(int hidden, int top_k);

// Per-rank byte figures, means over ranks.
struct DeepEpBytes {
  // What DeepEP's benchmark counts per rank (the rank's own tokens included):
  // intranode, tokens received x token bytes ("NVL" bytes); internode,
  // tokens sent once per (token, destination node), the sender's node
  // included ("RDMA" bytes).
  double dispatch_counted_bytes = 0;
  double combine_counted_bytes = 0;
  // What crosses the links per rank in dispatch (combine moves the same
  // tokens back, at combine token bytes).
  double dispatch_nvlink_bytes = 0;
  double dispatch_network_bytes = 0;
  double combine_nvlink_bytes = 0;
  double combine_network_bytes = 0;
  // Share of the counted internode tokens that stay in the sender's node
  // (counted by the benchmark, never on the NIC); 0 intranode.
  double counted_local_node_share = 0;
};
DeepEpBytes deepep_bytes(const workloads::TrafficMatrix& traffic, const DeepEpPlan& plan,
                         const DeepEpTokenBytes& token_bytes);

}  // namespace epsim::sim
