// Finds the NPUs of a loaded SimGrid platform and checks the platform
// contract (names, properties, HBM loopback routes), so that a hand-written
// XML that breaks it fails with a message naming the host or link.
#pragma once

#include <string>
#include <vector>

#include "sim/platform/platform_facts.hpp"

namespace simgrid::s4u {
class Engine;
class Host;
}  // namespace simgrid::s4u

namespace epsim::sim {

struct LoadedPlatform {
  PlatformFacts facts;
  std::vector<simgrid::s4u::Host*> hosts;  // parallel to facts.npus
};

// The contract (docs/platform.md, "Contract for hand-written SimGrid XML"):
// hosts named node{N}.npu{I} (no leading zeros) forming a full grid of N nodes x I NPUs; host speed = bf16 peak FLOP/s; properties
// hbm_bandwidth (B/s, required), flops_bf16 (= speed when given), flops_fp8
// and flops_int8 (0 when absent: the NPU lacks that dtype), flops_fp32, hbm_capacity (B), comm_compute_share (in [0,1),
// default 0), node and local (= the name's numbers when given); a link
// node{N}.npu{I}.hbm with the HBM bandwidth and latency 0; the loopback
// route of an NPU is exactly its HBM link; routes between NPUs start with
// the source's HBM link and end with the destination's.
// Properties are plain SI numbers or unit strings ("1.6TBps"), except
// comm_compute_share, node and local (plain numbers); optional
// low_latency_nic_share and low_latency_node_share (> 0, default 1), and the
// [kernels] costs (KernelCosts: kernel_launch, kernel_dispatch_peer_cost,
// kernel_combine_peer_cost, low_latency_launch, low_latency_peer_cost in s;
// kernel_dispatch_copy_rate, kernel_combine_copy_rate in B/s;
// kernel_messages "rank" or "selection"; kernel_package_npus in [1, 64]).
// Throws InputError naming `platform_path` and the offending host or link.
// Loopbacks are checked here, other routes when first used (check_all_routes).
LoadedPlatform discover_platform(const simgrid::s4u::Engine& engine, const std::string& platform_path);

// Fetches and checks the route between every pair of NPUs (npus^2 routes):
// the full contract, for checks that run no simulation. Throws as discover_platform.
void check_all_routes(const PlatformFacts& facts);

}  // namespace epsim::sim
