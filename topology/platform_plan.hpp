// PlatformPlan: the SimGrid platform of a cluster as plain data (zones,
// hosts, links, routes). The C++ builder and the XML writer both walk the
// same plan, so `epsim platform xml` and the simulator get one platform.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "topology/topology_graph.hpp"

namespace epsim::topology {

struct PlanHost {
  std::string name;
  double speed_flops = 0;
  std::vector<std::pair<std::string, std::string>> properties;  // in XML order
};

// A link crossed in a route; `direction` is "UP", "DOWN" or "" (SHARED links).
struct PlanLinkUse {
  std::string link;
  std::string direction;
};

// A route in a Full zone. Between hosts/routers when gw_src is empty;
// between child zones (through gateways) otherwise. Symmetrical routes
// serve both directions, SimGrid flipping UP/DOWN on the way back.
struct PlanRoute {
  std::string src, dst, gw_src, gw_dst;
  std::vector<PlanLinkUse> links;
  bool symmetrical = true;
};

// A Full-routing zone: either a leaf zone (hosts, routers, links, routes)
// or an inner zone (links, child zones, zone routes), as SimGrid's XML requires.
struct PlanZone {
  std::string name;
  std::vector<PlanHost> hosts;
  std::vector<std::string> routers;
  std::vector<LinkSpec> links;
  std::vector<PlanZone> children;
  std::vector<PlanRoute> routes;
};

struct PlatformPlan {
  PlanZone root;
  std::size_t host_count = 0;
  std::size_t link_count = 0;
  std::size_t route_count = 0;
};

// The plan for a topology. Zones: one per node (its NPUs, HBM and scale-up
// links, and a gateway router reached through each NPU's NIC or port); for
// leaf/spine one zone per leaf around its nodes; a root zone "cluster".
// Route count grows with nodes, never with NPU pairs across nodes.
PlatformPlan make_platform_plan(const TopologyGraph& topo);

// The plan's NPU hosts alone, in rank order (node by node): what a builder
// that lays out its own routes needs, without the plan's routes (a node of
// n NPUs has n^2/2 of them).
std::vector<PlanHost> plan_npu_hosts(const TopologyGraph& topo);

}  // namespace epsim::topology
