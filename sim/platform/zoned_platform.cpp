// The plan's zones, hosts, links and routes through SimGrid's C++ API.
#include "sim/platform/zoned_platform.hpp"

#include <string>
#include <unordered_map>
#include <vector>

#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include "topology/platform_plan.hpp"
#include "topology/topology_graph.hpp"

namespace epsim::sim {

namespace s4u = simgrid::s4u;

namespace {

using NetPoint = simgrid::kernel::routing::NetPoint;

// Name -> element, filled while building, so that routes find their ends.
struct Built {
  std::unordered_map<std::string, NetPoint*> points;
  std::unordered_map<std::string, const s4u::Link*> links;
};

s4u::LinkInRoute link_in_route(const Built& built, const topology::PlanLinkUse& use) {
  const s4u::Link* link = built.links.at(use.link);
  if (use.direction == "UP") return s4u::LinkInRoute(link, s4u::LinkInRoute::Direction::UP);
  if (use.direction == "DOWN") return s4u::LinkInRoute(link, s4u::LinkInRoute::Direction::DOWN);
  return s4u::LinkInRoute(link);
}

// Every link of the plan, in one zone of their own. SimGrid checks a new
// link's name against every zone of the platform, so links created while
// a thousand node zones exist cost a thousand lookups each; created first,
// they cost one. Routes refer to links wherever they live, as the XML's
// link_ctn does.
void build_links(const topology::PlanZone& plan, s4u::NetZone* zone, Built& built) {
  for (const topology::LinkSpec& l : plan.links) {
    built.links[l.name] = l.sharing == topology::LinkSharing::kSplitDuplex
                              ? zone->create_split_duplex_link(l.name, l.bandwidth_Bps)->set_latency(l.latency_s)->seal()
                              : zone->create_link(l.name, l.bandwidth_Bps)->set_latency(l.latency_s)->seal();
  }
  for (const topology::PlanZone& child : plan.children) build_links(child, zone, built);
}

void build_zone(const topology::PlanZone& plan, s4u::NetZone* zone, Built& built) {
  built.points[plan.name] = zone->get_netpoint();
  for (const topology::PlanHost& h : plan.hosts) {
    s4u::Host* host = zone->create_host(h.name, h.speed_flops);
    for (const auto& [key, value] : h.properties) host->set_property(key, value);
    built.points[h.name] = host->seal()->get_netpoint();
  }
  for (const std::string& r : plan.routers) built.points[r] = zone->create_router(r);
  for (const topology::PlanZone& child : plan.children)
    build_zone(child, s4u::create_full_zone(child.name)->set_parent(zone), built);
  std::vector<s4u::LinkInRoute> links;
  for (const topology::PlanRoute& r : plan.routes) {
    links.clear();
    for (const topology::PlanLinkUse& u : r.links) links.push_back(link_in_route(built, u));
    NetPoint* gw_src = r.gw_src.empty() ? nullptr : built.points.at(r.gw_src);
    NetPoint* gw_dst = r.gw_dst.empty() ? nullptr : built.points.at(r.gw_dst);
    zone->add_route(built.points.at(r.src), built.points.at(r.dst), gw_src, gw_dst, links, r.symmetrical);
  }
  zone->seal();
}

}  // namespace

void build_zoned_platform(const topology::ClusterSpec& spec) {
  const topology::TopologyGraph topo(spec);
  const topology::PlatformPlan plan = topology::make_platform_plan(topo);
  Built built;
  s4u::NetZone* root = s4u::create_full_zone(plan.root.name);
  s4u::NetZone* links = s4u::create_empty_zone(plan.root.name + ".all-links")->set_parent(root);
  build_links(plan.root, links, built);
  links->seal();
  build_zone(plan.root, root, built);
}

}  // namespace epsim::sim
