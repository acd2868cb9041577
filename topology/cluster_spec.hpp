// ClusterSpec: a validated cluster description (plain structs, SI units),
// read from a platform TOML file or preset with --set overrides applied.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "topology/stack_spec.hpp"

#include "core/error.hpp"

namespace epsim::topology {

// One NPU (or GPU). Every rate is > 0 unless said otherwise.
struct NpuSpec {
  std::string model;              // free text, e.g. "Ascend 910B"
  double flops_bf16 = 0;          // FLOP/s, dense BF16 peak; the SimGrid host speed
  double flops_fp8 = 0;           // FLOP/s, 0 when the NPU has no FP8
  double flops_int8 = 0;          // OP/s, 0 when not given (only read when there is no FP8)
  double hbm_bandwidth_Bps = 0;   // bytes/s
  double hbm_capacity_bytes = 0;  // bytes
  double comm_compute_share = 0;  // [0, kCommComputeShareLimit): share of compute that communication kernels occupy
  // A package of `dies` dies (a 910C has 2). The file gives every figure per
  // package; with rank_per_die (npu.rank = "die") a rank is one die and the
  // reader divides the package's figures by `dies` (FLOP rates, HBM,
  // its port or NIC) and multiplies node.npus by it.
  int dies = 1;
  bool rank_per_die = false;
};

// "Ascend 910C" or "Ascend 910C, a rank per die (2 per package)": what a rank is, for reports.
std::string npu_description(const NpuSpec& npu);

// The fabric inside a node. `kMesh`: one point-to-point link per NPU pair
// (HCCS); `kSwitch`: one port per NPU into a switch (NVSwitch).
enum class NodeFabricKind { kMesh, kSwitch };

// The most NPUs a cluster may have (node.npus x node.count): 2^17; a node, 2^12.
inline constexpr std::int64_t kMaxClusterNpus = 131072;
inline constexpr std::int64_t kMaxNodeNpus = 4096;

struct NodeSpec {
  int npus = 0;   // NPUs per node, >= 1
  int count = 0;  // nodes in the cluster, >= 1
  // Where `npus` and `count` were read (file:line:col, or "--set ..."), for placement and memory errors.
  SourceLocation npus_given_at;
  SourceLocation count_given_at;
  NodeFabricKind fabric = NodeFabricKind::kMesh;
  double link_bandwidth_Bps = 0;  // line rate per pair (mesh) or per port (switch), each direction
  double link_efficiency = 1;     // [0.001, 1]: share of the line rate a transfer achieves
  double link_latency_s = 0;
  double effective_link_bandwidth_Bps() const { return link_efficiency * link_bandwidth_Bps; }
  // (0, 1]: share of the line rate the low-latency kernel's one write per
  // (token, expert) achieves on this fabric; absent: link_efficiency.
  double low_latency_efficiency = 1;
  double switch_latency_s = 0;  // switch fabric only, >= 0
};

// Efficiency keys (`node.link_efficiency`, `scaleout.nic_efficiency`) are
// read in [0.001, 1] (core/physical_ranges.hpp); the topology builds its links at the effective rate.
inline constexpr const char* kLinkEfficiencyKey = "node.link_efficiency";
inline constexpr const char* kNicEfficiencyKey = "scaleout.nic_efficiency";
inline constexpr const char* kLowLatencyEfficiencyKey = "scaleout.low_latency_efficiency";
inline constexpr const char* kPortEfficiencyKey = "supernode.port_efficiency";
inline constexpr const char* kNodeLowLatencyEfficiencyKey = "node.low_latency_efficiency";
inline constexpr const char* kPortLowLatencyEfficiencyKey = "supernode.low_latency_efficiency";

// The fabric between nodes. `kSwitch`: one switch; `kLeafSpine`: leaves of
// `nodes_per_leaf` nodes under one (aggregated) spine tier; `kRail`: NIC i of
// every node on rail i, modelled as one non-blocking switch (see docs/platform.md).
enum class ScaleoutKind { kSwitch, kLeafSpine, kRail };

struct ScaleoutSpec {
  ScaleoutKind kind = ScaleoutKind::kSwitch;
  bool nic_per_npu = true;       // false: one NIC per node, shared by its NPUs
  double nic_bandwidth_Bps = 0;  // line rate, each direction
  double nic_efficiency = 1;     // [0.001, 1]: share of the line rate a transfer achieves
  double nic_latency_s = 0;
  double effective_nic_bandwidth_Bps() const { return nic_efficiency * nic_bandwidth_Bps; }
  // [0.001, 1]: share of the NIC line rate the low-latency dispatch/combine
  // kernel's one-write-per-(token, expert) RDMA traffic achieves; absent:
  // nic_efficiency (docs/validation.md, "Low-latency kernels").
  double low_latency_efficiency = 1;
  double switch_latency_s = 0;  // >= 0, per switch crossed
  int nodes_per_leaf = 0;       // leaf_spine only
  double oversubscription = 1;  // leaf_spine only: leaf down / up capacity, >= 1
};

// A scale-up fabric spanning every node (CloudMatrix384's UB): each NPU has a
// port into one switch; in-node and cross-node traffic both use it.
struct SupernodeSpec {
  double port_bandwidth_Bps = 0;  // line rate, each direction
  double port_efficiency = 1;     // [0.001, 1]: share of the line rate a transfer achieves
  double effective_port_bandwidth_Bps() const { return port_efficiency * port_bandwidth_Bps; }
  double port_latency_s = 0;
  double switch_latency_s = 0;  // >= 0
  // (0, 1]: the low-latency kernel's share of the port line rate; absent: port_efficiency.
  double low_latency_efficiency = 1;
};

// [kernels]: what the dispatch/combine kernels cost beyond their bytes on
// the links (docs/platform.md, "[kernels]"; docs/simulator.md, "Kernel
// mechanisms"). The defaults (nothing beyond the bytes, one message per
// token and destination rank) are the model before these keys existed.
struct KernelSpec {
  // Normal (high-throughput) kernels, direct or relayed: paid before their copies.
  double launch_s = 0;              // s, >= 0: per kernel launch and host sync
  double dispatch_peer_cost_s = 0;  // s, >= 0: per peer of a dispatch phase (count exchange, layout, notify)
  double combine_peer_cost_s = 0;   // s, >= 0: per peer of a combine phase (flag handshakes)
  // Normal kernels: bytes per second one NPU's kernel cores copy (dispatch
  // quantises and lays out, combine pushes back); 0: unlimited (the links bind).
  double dispatch_copy_Bps = 0;
  double combine_copy_Bps = 0;
  // The normal direct exchange sends one message per (token, selected
  // expert) instead of one per (token, destination rank).
  bool per_selection = false;
  // Consecutive ranks sharing one package (npu.dies with npu.rank = "die",
  // not a key of its own): copies between them take the package's own link,
  // not the copy rate.
  int package_npus = 1;
  // Low-latency kernels: a control path (launch, flags) beside their copies.
  double low_latency_launch_s = 0;     // s, >= 0
  double low_latency_peer_cost_s = 0;  // s, >= 0, per peer
};

// Keys of [kernels] that `epsim validate` may calibrate (docs/validation.md).
inline constexpr const char* kKernelLaunchKey = "kernels.launch";
inline constexpr const char* kDispatchPeerCostKey = "kernels.dispatch_peer_cost";
inline constexpr const char* kCombinePeerCostKey = "kernels.combine_peer_cost";
inline constexpr const char* kDispatchCopyRateKey = "kernels.dispatch_copy_rate";
inline constexpr const char* kCombineCopyRateKey = "kernels.combine_copy_rate";
inline constexpr const char* kLowLatencyLaunchKey = "kernels.low_latency_launch";
inline constexpr const char* kLowLatencyPeerCostKey = "kernels.low_latency_peer_cost";

struct ClusterSpec {
  std::string name;
  std::string source;  // file the spec was read from (for messages)
  NpuSpec npu;
  StackSpec stack;  // the software stack ([stack] name, default: none, the plain roofline)
  KernelSpec kernels;
  NodeSpec node;
  std::optional<ScaleoutSpec> scaleout;
  std::optional<SupernodeSpec> supernode;

  int npu_count() const { return node.npus * node.count; }
};

// The schema version this code reads (TOML key `schema`).
inline constexpr int kClusterSchemaVersion = 1;

// Reads and validates a spec from a parsed TOML tree. Throws InputError at
// the offending key: wrong types, bad units, unknown keys (with a "did you
// mean"), missing fields, non-positive bandwidths, a disconnected cluster
// (several nodes and neither [scaleout] nor [supernode]).
// `stack`, when not empty, is the software stack the command line chose
// (`--stack`) in place of the file's `[stack] name`; the file's other
// [stack] keys still apply over it, and errors about the choice name the
// option.
ClusterSpec read_cluster_spec(const toml::table& root, const std::string& source, const std::string& stack = "");

// Loads a file or preset (see presets.hpp), applies `--set` overrides, reads it.
ClusterSpec load_cluster_spec(const std::string& file_or_preset, const std::vector<std::string>& overrides = {},
                              const std::string& stack = "");

}  // namespace epsim::topology
