// Laying a topology out as SimGrid zones and routes (see platform_plan.hpp).
#include "topology/platform_plan.hpp"

#include <fmt/format.h>

#include "topology/names.hpp"

namespace epsim::topology {

namespace {

std::string number(double v) { return fmt::format("{:.17g}", v); }

// "node0.npu1.nic_UP" -> {"node0.npu1.nic", "UP"}.
PlanLinkUse link_use(const std::string& simgrid_name) {
  for (const char* dir : {"UP", "DOWN"}) {
    std::string suffix = std::string("_") + dir;
    if (simgrid_name.size() > suffix.size() &&
        simgrid_name.compare(simgrid_name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      return PlanLinkUse{simgrid_name.substr(0, simgrid_name.size() - suffix.size()), dir};
    }
  }
  return PlanLinkUse{simgrid_name, ""};
}

std::vector<PlanLinkUse> uses(const Route& r) {
  std::vector<PlanLinkUse> out;
  for (const RouteLink& l : r.links) out.push_back(link_use(l.name));
  return out;
}

// [kernels] as host properties (sim/platform/npu_platform.hpp), only those
// that differ from the defaults, so a platform without them exports as before.
void add_kernel_properties(const KernelSpec& k, PlanHost& h) {
  const std::pair<const char*, double> values[] = {
      {"kernel_launch", k.launch_s},
      {"kernel_dispatch_peer_cost", k.dispatch_peer_cost_s},
      {"kernel_combine_peer_cost", k.combine_peer_cost_s},
      {"kernel_dispatch_copy_rate", k.dispatch_copy_Bps},
      {"kernel_combine_copy_rate", k.combine_copy_Bps},
      {"low_latency_launch", k.low_latency_launch_s},
      {"low_latency_peer_cost", k.low_latency_peer_cost_s},
  };
  for (const auto& [name, value] : values)
    if (value > 0) h.properties.emplace_back(name, number(value));
  if (k.per_selection) h.properties.emplace_back("kernel_messages", "selection");
  if (k.package_npus > 1) h.properties.emplace_back("kernel_package_npus", std::to_string(k.package_npus));
}

PlanHost npu_host(const TopologyGraph& topo, int node, int local) {
  const NpuSpec& npu = topo.spec().npu;
  PlanHost h{names::npu(node, local), npu.flops_bf16, {}};
  h.properties.emplace_back("flops_bf16", number(npu.flops_bf16));
  if (npu.flops_fp8 > 0) h.properties.emplace_back("flops_fp8", number(npu.flops_fp8));
  else h.properties.emplace_back("flops_int8", number(npu.flops_int8));
  h.properties.emplace_back("hbm_bandwidth", number(npu.hbm_bandwidth_Bps));
  h.properties.emplace_back("hbm_capacity", number(npu.hbm_capacity_bytes));
  h.properties.emplace_back("comm_compute_share", number(npu.comm_compute_share));
  const ClusterSpec& spec = topo.spec();
  if (const auto& so = spec.scaleout)  // the low-latency kernel's NIC rate, relative to the NIC link's
    h.properties.emplace_back("low_latency_nic_share", number(so->low_latency_efficiency / so->nic_efficiency));
  // The low-latency kernel's rate on the scale-up fabric (a supernode's ports
  // carry every pair), relative to the links it crosses; 1 is the default.
  const double node_share = spec.supernode ? spec.supernode->low_latency_efficiency / spec.supernode->port_efficiency
                                           : spec.node.low_latency_efficiency / spec.node.link_efficiency;
  if (node_share != 1) h.properties.emplace_back("low_latency_node_share", number(node_share));
  if (spec.supernode && node_share != 1) h.properties.emplace_back("low_latency_nic_share", number(node_share));
  add_kernel_properties(spec.kernels, h);
  for (const auto& [name, value] : {std::pair{"collective_launch", spec.stack.collective_launch_s},
                                     std::pair{"collective_peer_cost", spec.stack.collective_peer_s}})
    if (value > 0) h.properties.emplace_back(name, number(value));
  if (spec.stack.dispatch != DispatchKernel::kDeepEpNormal)  // the default: absent
    h.properties.emplace_back("dispatch_kernel", kDispatchKernelNames[static_cast<int>(spec.stack.dispatch)]);
  h.properties.emplace_back("node", std::to_string(node));
  h.properties.emplace_back("local", std::to_string(local));
  return h;
}

bool has_outside_fabric(const ClusterSpec& spec) { return spec.scaleout || spec.supernode; }

// The one switch joining every node when there is no spine tier.
const char* single_switch(const ClusterSpec& spec) {
  if (spec.supernode) return names::kSupernode;
  switch (spec.scaleout->kind) {
    case ScaleoutKind::kLeafSpine: return "leaf0";
    case ScaleoutKind::kRail: return names::kRails;
    case ScaleoutKind::kSwitch: break;
  }
  return names::kFabric;
}

PlanZone node_zone(const TopologyGraph& topo, int n, const std::vector<LinkSpec>& links) {
  const ClusterSpec& spec = topo.spec();
  const int per_node = spec.node.npus;
  PlanZone z;
  z.name = names::node(n);
  z.links = links;
  for (int i = 0; i < per_node; ++i) z.hosts.push_back(npu_host(topo, n, i));
  for (int i = 0; i < per_node; ++i) {
    const int a = n * per_node + i;
    z.routes.push_back(PlanRoute{names::npu(n, i), names::npu(n, i), "", "", uses(topo.route(a, a)), false});
    for (int j = i + 1; j < per_node; ++j) {
      z.routes.push_back(
          PlanRoute{names::npu(n, i), names::npu(n, j), "", "", uses(topo.route(a, a + j - i)), true});
    }
  }
  if (has_outside_fabric(spec)) {
    z.routers.push_back(names::node_gateway(n));
    for (int i = 0; i < per_node; ++i) {
      std::vector<PlanLinkUse> up{PlanLinkUse{names::hbm(n, i), ""}};
      if (spec.supernode) up.push_back(PlanLinkUse{names::port(n, i), "UP"});
      else if (spec.scaleout->nic_per_npu) up.push_back(PlanLinkUse{names::nic(n, i), "UP"});
      else up.push_back(PlanLinkUse{names::node_nic(n), "UP"});
      z.routes.push_back(PlanRoute{names::npu(n, i), names::node_gateway(n), "", "", up, true});
    }
  }
  return z;
}

// Zone routes between every pair of `zones` (by name) through `gateways`, over `links`.
void connect_all(PlanZone& parent, const std::vector<std::string>& zones,
                 const std::vector<std::string>& gateways, const std::vector<PlanLinkUse>& links) {
  for (std::size_t a = 0; a < zones.size(); ++a) {
    for (std::size_t b = a + 1; b < zones.size(); ++b) {
      parent.routes.push_back(PlanRoute{zones[a], zones[b], gateways[a], gateways[b], links, true});
    }
  }
}

}  // namespace

std::vector<PlanHost> plan_npu_hosts(const TopologyGraph& topo) {
  std::vector<PlanHost> hosts;
  for (int n = 0; n < topo.spec().node.count; ++n)
    for (int i = 0; i < topo.spec().node.npus; ++i) hosts.push_back(npu_host(topo, n, i));
  return hosts;
}

PlatformPlan make_platform_plan(const TopologyGraph& topo) {
  const ClusterSpec& spec = topo.spec();
  const Graph& g = topo.graph();
  std::vector<std::vector<LinkSpec>> node_links(static_cast<std::size_t>(spec.node.count));
  PlatformPlan plan;
  plan.root.name = names::kClusterZone;

  // Declare every link once: in its node's zone when it belongs to one node
  // (HBM, HCCS, ports, NICs, node switch), else in the root zone.
  auto declare = [&](const LinkSpec& link, int node) {
    if (link.name.empty()) return;
    if (node >= 0) node_links[static_cast<std::size_t>(node)].push_back(link);
    else plan.root.links.push_back(link);
    ++plan.link_count;
  };
  for (auto [v, end] = boost::vertices(g); v != end; ++v) declare(g[*v].link, g[*v].node);
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    if (!g[*e].internal) declare(g[*e].link, g[g[*e].lower].node);
  }

  std::vector<PlanZone> nodes;
  std::vector<std::string> node_names, node_gateways;
  for (int n = 0; n < spec.node.count; ++n) {
    nodes.push_back(node_zone(topo, n, node_links[static_cast<std::size_t>(n)]));
    node_names.push_back(names::node(n));
    node_gateways.push_back(names::node_gateway(n));
    plan.host_count += static_cast<std::size_t>(spec.node.npus);
  }

  const bool leaves = spec.scaleout && spec.scaleout->kind == ScaleoutKind::kLeafSpine;
  if (!has_outside_fabric(spec)) {
    plan.root.children = std::move(nodes);
  } else if (!leaves || topo.leaf_count() == 1) {
    connect_all(plan.root, node_names, node_gateways, {PlanLinkUse{single_switch(spec), ""}});
    plan.root.children = std::move(nodes);
  } else {
    std::vector<std::string> leaf_zones, leaf_routers;
    for (int x = 0; x < topo.leaf_count(); ++x) {
      PlanZone leaf;
      leaf.name = names::leaf(x) + ".zone";
      std::vector<std::string> members, gateways;
      for (int n = 0; n < spec.node.count; ++n) {
        if (topo.leaf_of_node(n) != x) continue;
        members.push_back(names::node(n));
        gateways.push_back(names::node_gateway(n));
        leaf.children.push_back(std::move(nodes[static_cast<std::size_t>(n)]));
      }
      PlanZone sw;
      sw.name = names::leaf_switch_zone(x);
      sw.routers.push_back(names::leaf_router(x));
      leaf.children.push_back(std::move(sw));
      members.push_back(names::leaf_switch_zone(x));
      gateways.push_back(names::leaf_router(x));
      // Node to node and node to the leaf's own router both cross the leaf
      // backplane; the switch zone is where routes to other leaves start.
      connect_all(leaf, members, gateways, {PlanLinkUse{names::leaf(x), ""}});
      plan.root.children.push_back(std::move(leaf));
      leaf_zones.push_back(names::leaf(x) + ".zone");
      leaf_routers.push_back(names::leaf_router(x));
    }
    for (std::size_t x = 0; x < leaf_zones.size(); ++x) {
      for (std::size_t y = x + 1; y < leaf_zones.size(); ++y) {
        plan.root.routes.push_back(PlanRoute{
            leaf_zones[x],
            leaf_zones[y],
            leaf_routers[x],
            leaf_routers[y],
            {PlanLinkUse{names::spine_leaf(static_cast<int>(x)), "UP"}, PlanLinkUse{names::kSpine, ""},
             PlanLinkUse{names::spine_leaf(static_cast<int>(y)), "DOWN"}},
            true});
      }
    }
  }

  // Count routes for the performance notes.
  std::vector<const PlanZone*> stack{&plan.root};
  while (!stack.empty()) {
    const PlanZone* z = stack.back();
    stack.pop_back();
    plan.route_count += z->routes.size();
    for (const PlanZone& c : z->children) stack.push_back(&c);
  }
  return plan;
}

}  // namespace epsim::topology
