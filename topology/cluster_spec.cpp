// Reading a ClusterSpec from TOML: every key is read once, here, with its
// type, unit and range; docs/platform.md documents the same keys.
#include "topology/cluster_spec.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/overrides.hpp"
#include "core/physical_ranges.hpp"
#include "core/toml_reader.hpp"
#include "topology/presets.hpp"

namespace epsim::topology {

namespace {

// A time that may be zero ("0us"): switch latencies are often negligible.
double latency_or_zero(TableReader& t, std::string_view key) {
  const toml::node* n = t.node(key);
  if (!n) return 0;
  if (!n->is_string()) t.fail(key, "expected " + describe(Quantity::kTime));
  double v = 0;
  try {
    v = parse_quantity(*n->value<std::string>(), Quantity::kTime);
  } catch (const std::invalid_argument& e) {
    t.fail(key, e.what());
  }
  if (v < 0) t.fail(key, "must be >= 0, got \"" + *n->value<std::string>() + "\"");
  const std::string out_of_range = physical_range_problem(Quantity::kTime, v);
  if (!out_of_range.empty()) t.fail(key, out_of_range + ", got \"" + *n->value<std::string>() + "\"");
  return v;
}

// A share of a line rate inside the physical range of an efficiency, default 1.
double read_efficiency(TableReader& t, std::string_view key) {
  return read_efficiency_share(t, key, "a share of the line rate");
}

// A kernel's copy rate: a bandwidth in the physical range, default 0 (unlimited).
double copy_rate_or_unlimited(TableReader& t, std::string_view key) {
  return t.has(key) ? t.quantity(key, Quantity::kBandwidth) : 0.0;
}

KernelSpec read_kernels(TableReader t) {
  KernelSpec k;
  k.launch_s = latency_or_zero(t, "launch");
  k.dispatch_peer_cost_s = latency_or_zero(t, "dispatch_peer_cost");
  k.combine_peer_cost_s = latency_or_zero(t, "combine_peer_cost");
  k.dispatch_copy_Bps = copy_rate_or_unlimited(t, "dispatch_copy_rate");
  k.combine_copy_Bps = copy_rate_or_unlimited(t, "combine_copy_rate");
  k.per_selection = t.choice_or("messages", "rank", {"rank", "selection"}) == "selection";
  k.low_latency_launch_s = latency_or_zero(t, "low_latency_launch");
  k.low_latency_peer_cost_s = latency_or_zero(t, "low_latency_peer_cost");
  t.finish();
  return k;
}

NpuSpec read_npu(TableReader t) {
  NpuSpec npu;
  npu.model = t.string_or("model", "");
  npu.flops_bf16 = t.quantity("flops_bf16", Quantity::kFlopRate);
  npu.flops_fp8 = t.quantity_or("flops_fp8", 0, Quantity::kFlopRate);
  npu.flops_int8 = t.quantity_or("flops_int8", 0, Quantity::kFlopRate);
  if (npu.flops_fp8 == 0 && npu.flops_int8 == 0) {
    t.fail("flops_fp8", "missing required key (give flops_fp8, or flops_int8 when the NPU has no FP8)");
  }
  npu.hbm_bandwidth_Bps = t.quantity("hbm_bandwidth", Quantity::kBandwidth);
  npu.hbm_capacity_bytes = t.quantity("hbm_capacity", Quantity::kBytes);
  npu.comm_compute_share = read_compute_share(t, "comm_compute_share").value_or(0);
  npu.dies = static_cast<int>(t.integer_or("dies", 1, 1, 16));
  npu.rank_per_die = t.choice_or("rank", "package", {"package", "die"}) == "die";
  if (npu.rank_per_die && npu.dies < 2)
    t.fail("rank", "\"die\" needs npu.dies >= 2 (the dies of one package)");
  t.finish();
  return npu;
}

// npu.rank = "die": one rank per die. Every per-package figure is split
// evenly over the dies and every node holds `dies` times as many ranks, so
// the package's totals are kept. A full-mesh node's pair links are not
// per package, so a die split there is refused.
void split_into_dies(ClusterSpec& spec, const toml::table& root) {
  NpuSpec& npu = spec.npu;
  if (!npu.rank_per_die) return;
  const double d = npu.dies;
  if (!spec.supernode && spec.node.fabric == NodeFabricKind::kMesh) {
    TableReader t(*root.get("npu")->as_table(), "npu");
    t.fail("rank", "\"die\" is modelled for switched nodes and supernodes (a port per package); a full-mesh "
                   "node's pair links are not per package");
  }
  // A figure inside its range per package may fall below it per die: the
  // range is checked again after the split, at the key that gave the figure.
  const auto split = [&](const char* table, const char* key, double& figure, Physical kind) {
    if (figure == 0) return;  // an optional figure not given (flops_fp8 of an NPU without FP8)
    figure /= d;
    const std::string problem = physical_range_problem(kind, figure);
    if (problem.empty()) return;
    TableReader t(*root.get(table)->as_table(), table);
    t.fail(key, fmt::format("npu.rank = \"die\" splits it over {} dies: {}", npu.dies, problem));
  };
  split("npu", "flops_bf16", npu.flops_bf16, Physical::kFlopRate);
  split("npu", "flops_fp8", npu.flops_fp8, Physical::kFlopRate);
  split("npu", "flops_int8", npu.flops_int8, Physical::kFlopRate);
  split("npu", "hbm_bandwidth", npu.hbm_bandwidth_Bps, Physical::kBandwidth);
  split("npu", "hbm_capacity", npu.hbm_capacity_bytes, Physical::kMemoryBytes);
  if (spec.supernode) split("supernode", "port_bandwidth", spec.supernode->port_bandwidth_Bps, Physical::kBandwidth);
  // The package's port into the node switch.
  if (!spec.supernode) split("node", "link_bandwidth", spec.node.link_bandwidth_Bps, Physical::kBandwidth);
  if (spec.scaleout && spec.scaleout->nic_per_npu)
    split("scaleout", "nic_bandwidth", spec.scaleout->nic_bandwidth_Bps, Physical::kBandwidth);
  spec.node.npus *= npu.dies;
  spec.kernels.package_npus = npu.dies;  // a package's dies copy to each other over its own link
  if (static_cast<std::int64_t>(spec.node.count) * spec.node.npus > kMaxClusterNpus ||
      spec.node.npus > kMaxNodeNpus)
    throw InputError(spec.node.npus_given_at, "node.npus",
                     fmt::format("{} packages of {} dies per node: {} ranks per node, {} in all, above what epsim "
                                 "models ({} per node, {} in all)",
                                 spec.node.npus / npu.dies, npu.dies, spec.node.npus,
                                 static_cast<std::int64_t>(spec.node.count) * spec.node.npus, kMaxNodeNpus,
                                 kMaxClusterNpus));
}

NodeSpec read_node(TableReader t, bool supernode) {
  NodeSpec node;
  node.npus = static_cast<int>(t.integer("npus", 1, kMaxNodeNpus));
  node.count = static_cast<int>(t.integer("count", 1, 65536));
  node.npus_given_at = location_of(*t.node("npus"));
  node.count_given_at = location_of(*t.node("count"));
  // The largest clusters built today have ~10^5 accelerators; beyond this the
  // topology graph alone (names, links, routes) costs gigabytes.
  if (static_cast<std::int64_t>(node.count) * node.npus > kMaxClusterNpus)
    t.fail("count", fmt::format("{} nodes x {} NPUs = {} NPUs, above the {} epsim models", node.count, node.npus,
                                static_cast<std::int64_t>(node.count) * node.npus, kMaxClusterNpus));
  if (!supernode) {
    node.fabric =
        t.choice("fabric", {"mesh", "switch"}) == "mesh" ? NodeFabricKind::kMesh : NodeFabricKind::kSwitch;
    node.link_bandwidth_Bps = t.quantity("link_bandwidth", Quantity::kBandwidth);
    node.link_efficiency = read_efficiency(t, "link_efficiency");
    node.low_latency_efficiency =
        t.has("low_latency_efficiency") ? read_efficiency(t, "low_latency_efficiency") : node.link_efficiency;
    node.link_latency_s = latency_or_zero(t, "link_latency");
    if (node.fabric == NodeFabricKind::kSwitch) node.switch_latency_s = latency_or_zero(t, "switch_latency");
  }
  t.finish();
  return node;
}

ScaleoutSpec read_scaleout(TableReader t) {
  ScaleoutSpec s;
  std::string fabric = t.choice("fabric", {"switch", "leaf_spine", "rail"});
  s.kind = fabric == "switch" ? ScaleoutKind::kSwitch
           : fabric == "rail" ? ScaleoutKind::kRail
                              : ScaleoutKind::kLeafSpine;
  s.nic_per_npu = t.choice_or("nics", "per_npu", {"per_npu", "per_node"}) == "per_npu";
  s.nic_bandwidth_Bps = t.quantity("nic_bandwidth", Quantity::kBandwidth);
  s.nic_efficiency = read_efficiency(t, "nic_efficiency");
  s.low_latency_efficiency = t.has("low_latency_efficiency") ? read_efficiency(t, "low_latency_efficiency") : s.nic_efficiency;
  s.nic_latency_s = latency_or_zero(t, "nic_latency");
  s.switch_latency_s = latency_or_zero(t, "switch_latency");
  if (s.kind == ScaleoutKind::kLeafSpine) {
    s.nodes_per_leaf = static_cast<int>(t.integer("nodes_per_leaf", 1, 65536));
    s.oversubscription = t.number_or("oversubscription", 1, 1, 1e6);
  } else {
    for (const char* key : {"nodes_per_leaf", "oversubscription"}) {
      if (t.has(key)) t.fail(key, "only for fabric = \"leaf_spine\", not \"" + fabric + "\"");
    }
  }
  if (s.kind == ScaleoutKind::kRail && !s.nic_per_npu) {
    t.fail("nics", "a rail-optimized fabric needs one NIC per NPU (nics = \"per_npu\")");
  }
  t.finish();
  return s;
}

SupernodeSpec read_supernode(TableReader t) {
  SupernodeSpec s;
  s.port_bandwidth_Bps = t.quantity("port_bandwidth", Quantity::kBandwidth);
  s.port_efficiency = read_efficiency(t, "port_efficiency");
  s.low_latency_efficiency =
      t.has("low_latency_efficiency") ? read_efficiency(t, "low_latency_efficiency") : s.port_efficiency;
  s.port_latency_s = latency_or_zero(t, "port_latency");
  s.switch_latency_s = latency_or_zero(t, "switch_latency");
  t.finish();
  return s;
}

}  // namespace

namespace {

// The stack `[stack] name` or the command line's `--stack` names, with the
// platform's other [stack] keys over it; a name that is no stack, or one
// without tables for the NPU, is told where it was given.
StackSpec read_platform_stack(TableReader* table, const std::string& option_stack, const std::string& npu_model,
                              const std::string& source) {
  const std::string file_name = table && table->has("name") ? table->string("name") : "";
  const bool from_option = !option_stack.empty();
  const std::string name = from_option ? option_stack : file_name;
  try {
    return load_stack(name, table ? &table->raw() : nullptr, npu_model, source);
  } catch (const FileError& e) {
    if (e.path() != name) throw;  // an error inside the stack's file, told there
    if (from_option) throw option_error("--stack", e.path() + ": " + e.problem());
    throw named_at(e, table->location("name"), "stack.name");
  } catch (const InputError& e) {
    if (!from_option || e.key() != "stack.name") throw;
    throw option_error("--stack", e.problem());
  }
}

}  // namespace

ClusterSpec read_cluster_spec(const toml::table& root_table, const std::string& source, const std::string& stack) {
  TableReader root(root_table, "");
  std::int64_t schema = root.integer("schema", 1);
  if (schema != kClusterSchemaVersion) {
    root.fail("schema", "unsupported schema version " + std::to_string(schema) + " (this epsim reads " +
                            std::to_string(kClusterSchemaVersion) + ")");
  }
  ClusterSpec spec;
  spec.source = source;
  spec.name = root.string("name");
  spec.npu = read_npu(root.table("npu"));
  bool supernode = root.has("supernode");
  if (supernode && root.has("scaleout")) {
    root.fail("scaleout", "a supernode has no separate scale-out fabric; remove [scaleout] or [supernode]");
  }
  spec.node = read_node(root.table("node"), supernode);
  if (auto t = root.optional_table("scaleout")) spec.scaleout = read_scaleout(*t);
  if (auto t = root.optional_table("supernode")) spec.supernode = read_supernode(*t);
  if (root.has("compute"))
    root.fail("compute", "kernel efficiencies belong to a software stack now (docs/stacks.md): name one with "
                         "[stack] name = \"...\" and set its keys as stack.<key>");
  {
    auto t = root.optional_table("stack");
    if (t && stack.empty() && !t->has("name")) t->string("name");  // required: says so at the table
    if (t || !stack.empty()) spec.stack = read_platform_stack(t ? &*t : nullptr, stack, spec.npu.model, source);
    // The dispatch kernels' share is the stack's where it gives one (a
    // kernel library's SMs), the NPU's otherwise.
    if (spec.stack.comm_compute_share) spec.npu.comm_compute_share = *spec.stack.comm_compute_share;
  }
  if (auto t = root.optional_table("kernels")) spec.kernels = read_kernels(*t);
  root.finish();
  split_into_dies(spec, root_table);

  if (spec.node.count > 1 && !spec.scaleout && !spec.supernode) {
    TableReader node(*root_table.get("node")->as_table(), "node");
    node.fail("count", "disconnected topology: " + std::to_string(spec.node.count) +
                           " nodes but neither [scaleout] nor [supernode] connects them");
  }
  return spec;
}

std::string npu_description(const NpuSpec& npu) {
  if (!npu.rank_per_die) return npu.model;
  return fmt::format("{}{}a rank per die ({} per package)", npu.model, npu.model.empty() ? "" : ", ", npu.dies);
}

ClusterSpec load_cluster_spec(const std::string& file_or_preset, const std::vector<std::string>& overrides,
                              const std::string& stack) {
  std::string file = resolve_platform_file(file_or_preset);
  toml::table root = load_toml_file(file);
  apply_overrides(root, overrides);
  return read_cluster_spec(root, file, stack);
}

}  // namespace epsim::topology
