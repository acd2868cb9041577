// What the simulator knows about a loaded platform, as plain data: NPUs in
// rank order, links, and the route between every pair of NPUs. No SimGrid
// types, so bounds and collective plans are pure functions of it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <utility>
#include <string>
#include <vector>

#include "topology/dispatch_kernel.hpp"

namespace epsim::sim {

// What a dispatch/combine kernel costs beyond its bytes on the links (the
// platform's [kernels], docs/platform.md); the defaults cost nothing more.
struct KernelCosts {
  // Normal kernels: a fixed cost and a cost per peer, paid before the copies.
  double launch_s = 0;
  double dispatch_peer_s = 0;
  double combine_peer_s = 0;
  // Normal kernels: bytes per second one NPU's kernel copies; 0: unlimited.
  double dispatch_copy_Bps = 0;
  double combine_copy_Bps = 0;
  bool per_selection = false;  // the direct exchange sends one message per (token, selected expert)
  // The stack's dispatch/combine kernels (property dispatch_kernel): they
  // choose the exchange when --algorithm does not.
  topology::DispatchKernel dispatch = topology::DispatchKernel::kDeepEpNormal;
  int package_npus = 1;        // consecutive NPUs per package: copies between them are not rate-limited
  // Low-latency kernels: a control path beside the copies, launch + peers x cost.
  double low_latency_launch_s = 0;
  double low_latency_peer_s = 0;
  // The collective library's cost per call (the stack's [collectives],
  // properties collective_launch and collective_peer_cost): every group
  // collective, pipeline transfer and framework all-to-all pays the launch
  // before its first round, an exchange (all-to-all, pipeline transfer)
  // also its most peers x the cost per peer (plan_collective).
  double collective_launch_s = 0;
  double collective_peer_s = 0;
};

struct NpuFacts {
  std::string name;  // "node{N}.npu{I}"
  int node = 0;
  int local = 0;
  double flops_bf16_per_s = 0;    // = host speed
  double flops_fp8_per_s = 0;     // property flops_fp8; 0: the NPU has no FP8 (never another dtype's peak)
  double flops_fp32_per_s = 0;    // flops_fp32 when given, else bf16 peak (optimistic: keeps bounds valid)
  double hbm_bandwidth_Bps = 0;
  double hbm_capacity_bytes = 0;
  double comm_compute_share = 0;  // share of compute a communication kernel holds while it runs, in [0, 1)
  int hbm_link = -1;              // index into PlatformFacts::links
  double flops_int8_per_s = 0;    // property flops_int8 (OP/s); 0 when absent
  // Property low_latency_nic_share: the low-latency kernel's RDMA rate over
  // the NIC link's (scaleout.low_latency_efficiency / nic_efficiency); 1 when absent.
  double low_latency_nic_share = 1;
  // Property low_latency_node_share: the same inside a node (on a supernode,
  // over its ports); 1 when absent.
  double low_latency_node_share = 1;
  KernelCosts kernels = {};  // properties kernel_* and low_latency_launch/peer_cost; the defaults when absent
};

struct LinkFacts {
  std::string name;
  double bandwidth_Bps = 0;
  double latency_s = 0;
  bool shared = true;  // false for FATPIPE: each flow gets the full bandwidth
};

// Routes between NPUs as link indices, stored flat (CSR) because EP256
// has 65,536 of them. route(s, s) is the NPU's HBM loopback. Routes are
// either set() up front or fetched from the resolver on first use (an EP256
// collective touches a fraction of the pairs); not thread-safe. A pair finds
// its route through a dense NPUs^2 index up to kDenseRouteIndexNpus NPUs
// (16 MB at 2048), through a hash map beyond (thousands of NPUs touch a
// small share of their millions of pairs).
class RouteTable {
 public:
  // Fills `links` and `latency_s` for src -> dst; may throw.
  using Resolver = std::function<void(int src, int dst, std::vector<int>& links, double& latency_s)>;
  static constexpr int kDenseRouteIndexNpus = 2048;

  RouteTable() = default;
  explicit RouteTable(int npus, Resolver resolver = {});
  void set(int src, int dst, const std::vector<int>& links, double latency_s);
  // Links of the route src -> dst; valid until the next route is added.
  // Inline: the collectives' plans and costs call it per transfer.
  std::pair<const int*, const int*> links(int src, int dst) const {
    const Entry& e = entry(src, dst);
    return {links_.data() + e.begin, links_.data() + e.begin + e.count};
  }
  double latency_s(int src, int dst) const { return entry(src, dst).latency_s; }
  int npus() const { return npus_; }

 private:
  struct Entry {
    std::int64_t begin = 0;  // offset in links_
    std::int32_t count = 0;
    double latency_s = 0;
  };
  std::uint64_t key(int src, int dst) const { return static_cast<std::uint64_t>(src) * npus_ + dst; }
  const Entry& entry(int src, int dst) const {
    const std::int32_t i = dense_ ? slot_[key(src, dst)] : find(src, dst);
    return entries_[static_cast<std::size_t>(i >= 0 ? i : resolve(src, dst))];
  }
  std::int32_t find(int src, int dst) const;
  std::int32_t resolve(int src, int dst) const;
  std::int32_t add(int src, int dst, const std::vector<int>& links, double latency_s);
  int npus_ = 0;
  bool dense_ = true;
  Resolver resolver_;
  std::vector<std::int32_t> slot_;                       // dense: [src * npus + dst] -> entry; -1: not fetched yet
  std::unordered_map<std::uint64_t, std::int32_t> map_;  // sparse: key -> entry
  std::vector<Entry> entries_;
  std::vector<int> links_;
  mutable std::vector<int> scratch_;
};

struct PlatformFacts {
  std::vector<NpuFacts> npus;  // ordered by (node, local): index = rank when placement is identity
  std::vector<LinkFacts> links;
  int nodes = 0;
  int npus_per_node = 0;
  RouteTable routes;

  int npu_index(int node, int local) const { return node * npus_per_node + local; }
};

}  // namespace epsim::sim
