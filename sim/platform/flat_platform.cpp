// Flattened platform: hosts from topology's platform plan, routes from its
// topology graph, all in one Full zone.
#include "sim/platform/flat_platform.hpp"

#include <map>
#include <string>
#include <vector>

#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include "topology/platform_plan.hpp"
#include "topology/topology_graph.hpp"

namespace epsim::sim {

namespace s4u = simgrid::s4u;

void build_flat_platform(const topology::ClusterSpec& spec) {
  const topology::TopologyGraph topo(spec);
  s4u::NetZone* zone = s4u::create_full_zone("flat");
  std::map<std::string, s4u::Host*> hosts;
  // The plan's hosts, without its per-node routes: this zone routes every pair itself.
  for (const topology::PlanHost& h : topology::plan_npu_hosts(topo)) {
    s4u::Host* host = zone->create_host(h.name, h.speed_flops);
    for (const auto& [key, value] : h.properties) host->set_property(key, value);
    hosts[h.name] = host->seal();
  }
  std::map<std::string, s4u::Link*> links;
  auto link = [&](const topology::RouteLink& l) {
    auto it = links.find(l.name);
    if (it != links.end()) return it->second;
    s4u::Link* created = zone->create_link(l.name, l.bandwidth_Bps)->set_latency(l.latency_s)->seal();
    links.emplace(l.name, created);
    return created;
  };
  const int n = topo.npu_count();
  std::vector<s4u::Host*> npus(n);
  for (int r = 0; r < n; ++r) npus[r] = hosts.at(topo.graph()[topo.npu(r)].name);
  std::vector<s4u::LinkInRoute> route;
  for (int s = 0; s < n; ++s) {
    for (int d = 0; d < n; ++d) {
      route.clear();
      for (const topology::RouteLink& l : topo.route(s, d).links) route.emplace_back(link(l));
      zone->add_route(npus[s]->get_netpoint(), npus[d]->get_netpoint(), nullptr, nullptr, route, false);
    }
  }
  zone->seal();
}

}  // namespace epsim::sim
