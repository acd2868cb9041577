// Building the Boost.Graph topology from a ClusterSpec, and routes on it.
#include "topology/topology_graph.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "topology/names.hpp"
#include "topology/platform_size.hpp"

namespace epsim::topology {

namespace {

// Switch backplanes are non-blocking: twice the ports' capacity (both
// directions share a SHARED link), so they never bind.
LinkSpec backplane(const std::string& name, double ports_Bps, double latency_s) {
  return LinkSpec{name, 2 * ports_Bps, latency_s, LinkSharing::kShared};
}

LinkSpec cable(const std::string& name, double bandwidth_Bps, double latency_s) {
  return LinkSpec{name, bandwidth_Bps, latency_s, LinkSharing::kSplitDuplex};
}

}  // namespace

Vertex TopologyGraph::add_vertex(TopoVertex v) { return boost::add_vertex(std::move(v), graph_); }

void TopologyGraph::add_edge(Vertex lower, Vertex upper, LinkSpec link, bool internal) {
  boost::add_edge(lower, upper, TopoEdge{std::move(link), lower, internal}, graph_);
}

TopologyGraph::TopologyGraph(const ClusterSpec& spec) : spec_(spec) {
  const PlatformSize size = platform_size(spec);
  check_build_memory(spec, topology_graph_bytes(size),
                     fmt::format("the topology graph: {} links x ~{:.0f} B", size.cables, kGraphBytesPerEdge));
  const NodeSpec& node = spec.node;
  const NpuSpec& npu = spec.npu;
  const int n_npus = spec.npu_count();
  npus_.reserve(static_cast<std::size_t>(n_npus));
  node_uplink_.assign(static_cast<std::size_t>(n_npus), 0);

  for (int n = 0; n < node.count; ++n) {
    for (int i = 0; i < node.npus; ++i) {
      TopoVertex v{names::npu(n, i), VertexKind::kNpu, n, i,
                   LinkSpec{names::hbm(n, i), npu.hbm_bandwidth_Bps, 0, LinkSharing::kShared}};
      npus_.push_back(add_vertex(std::move(v)));
    }
  }
  auto rank = [&](int n, int i) { return static_cast<std::size_t>(n * node.npus + i); };

  // Scale-up inside each node (a supernode replaces it).
  if (!spec.supernode) {
    for (int n = 0; n < node.count; ++n) {
      if (node.fabric == NodeFabricKind::kMesh) {
        for (int i = 0; i < node.npus; ++i) {
          for (int j = i + 1; j < node.npus; ++j) {
            add_edge(npus_[rank(n, i)], npus_[rank(n, j)],
                     cable(names::pair(n, i, j), node.effective_link_bandwidth_Bps(), node.link_latency_s));
          }
        }
      } else {
        Vertex sw = add_vertex(TopoVertex{
            names::node_switch(n), VertexKind::kSwitch, n, -1,
            backplane(names::node_switch(n), node.npus * node.effective_link_bandwidth_Bps(),
                      node.switch_latency_s)});
        node_switch_.push_back(sw);
        for (int i = 0; i < node.npus; ++i) {
          add_edge(npus_[rank(n, i)], sw,
                   cable(names::port(n, i), node.effective_link_bandwidth_Bps(), node.link_latency_s));
        }
      }
    }
  }

  if (spec.supernode) {
    const SupernodeSpec& s = *spec.supernode;
    top_ = add_vertex(
        TopoVertex{names::kSupernode, VertexKind::kSwitch, -1, -1,
                   backplane(names::kSupernode, n_npus * s.effective_port_bandwidth_Bps(), s.switch_latency_s)});
    has_top_ = true;
    for (int n = 0; n < node.count; ++n) {
      for (int i = 0; i < node.npus; ++i) {
        add_edge(npus_[rank(n, i)], top_, cable(names::port(n, i), s.effective_port_bandwidth_Bps(), s.port_latency_s));
        node_uplink_[rank(n, i)] = top_;
      }
    }
    return;
  }
  if (!spec.scaleout) return;

  const ScaleoutSpec& so = *spec.scaleout;
  const int nics_per_node = so.nic_per_npu ? node.npus : 1;
  const double node_nic_Bps = nics_per_node * so.effective_nic_bandwidth_Bps();

  // The switch each node's NICs plug into: a leaf, or the one fabric switch.
  std::vector<Vertex> node_switch_above(static_cast<std::size_t>(node.count));
  if (so.kind == ScaleoutKind::kLeafSpine) {
    leaves_ = (node.count + so.nodes_per_leaf - 1) / so.nodes_per_leaf;
    for (int x = 0; x < leaves_; ++x) {
      int nodes_here = std::min(so.nodes_per_leaf, node.count - x * so.nodes_per_leaf);
      double down_Bps = nodes_here * node_nic_Bps;
      double up_Bps = leaves_ > 1 ? down_Bps / so.oversubscription : 0;
      leaf_.push_back(
          add_vertex(TopoVertex{names::leaf(x), VertexKind::kSwitch, -1, -1,
                                backplane(names::leaf(x), down_Bps + up_Bps, so.switch_latency_s)}));
    }
    if (leaves_ > 1) {
      double total_up_Bps = node.count * node_nic_Bps / so.oversubscription;
      top_ = add_vertex(TopoVertex{names::kSpine, VertexKind::kSwitch, -1, -1,
                                   backplane(names::kSpine, total_up_Bps, so.switch_latency_s)});
      has_top_ = true;
      for (int x = 0; x < leaves_; ++x) {
        int nodes_here = std::min(so.nodes_per_leaf, node.count - x * so.nodes_per_leaf);
        add_edge(leaf_[static_cast<std::size_t>(x)], top_,
                 cable(names::spine_leaf(x), nodes_here * node_nic_Bps / so.oversubscription, 0));
      }
    }
    for (int n = 0; n < node.count; ++n) {
      node_switch_above[static_cast<std::size_t>(n)] = leaf_[static_cast<std::size_t>(leaf_of_node(n))];
    }
  } else {
    const char* name = so.kind == ScaleoutKind::kRail ? names::kRails : names::kFabric;
    top_ = add_vertex(TopoVertex{name, VertexKind::kSwitch, -1, -1,
                                 backplane(name, node.count * node_nic_Bps, so.switch_latency_s)});
    has_top_ = true;
    std::fill(node_switch_above.begin(), node_switch_above.end(), top_);
  }

  for (int n = 0; n < node.count; ++n) {
    Vertex above = node_switch_above[static_cast<std::size_t>(n)];
    if (so.nic_per_npu) {
      for (int i = 0; i < node.npus; ++i) {
        add_edge(npus_[rank(n, i)], above,
                 cable(names::nic(n, i), so.effective_nic_bandwidth_Bps(), so.nic_latency_s));
        node_uplink_[rank(n, i)] = above;
      }
    } else {
      Vertex nic = add_vertex(TopoVertex{names::node_nic(n), VertexKind::kNic, n, -1, LinkSpec{}});
      add_edge(nic, above, cable(names::node_nic(n), so.effective_nic_bandwidth_Bps(), so.nic_latency_s));
      for (int i = 0; i < node.npus; ++i) {
        add_edge(npus_[rank(n, i)], nic, LinkSpec{"", std::numeric_limits<double>::infinity(), 0}, true);
        node_uplink_[rank(n, i)] = nic;
      }
    }
  }
}

int TopologyGraph::leaf_of_node(int node) const {
  if (!spec_.scaleout || spec_.scaleout->kind != ScaleoutKind::kLeafSpine) return 0;
  return node / spec_.scaleout->nodes_per_leaf;
}

std::vector<Vertex> TopologyGraph::up_chain(int rank) const {
  std::vector<Vertex> chain{npus_.at(static_cast<std::size_t>(rank))};
  if (!has_top_ && leaf_.empty()) return chain;
  Vertex v = node_uplink_[static_cast<std::size_t>(rank)];
  chain.push_back(v);
  if (graph_[v].kind == VertexKind::kNic) {
    // A node NIC has exactly one switch above it (its other edges go down to NPUs).
    for (auto [e, end] = boost::out_edges(v, graph_); e != end; ++e) {
      if (!graph_[*e].internal) {
        v = boost::target(*e, graph_);
        chain.push_back(v);
        break;
      }
    }
  }
  if (has_top_ && v != top_) chain.push_back(top_);
  return chain;
}

Route TopologyGraph::route(int src, int dst) const {
  std::vector<Vertex> path;
  const int per_node = spec_.node.npus;
  if (src == dst) {
    path = {npu(src)};
  } else if (src / per_node == dst / per_node && !spec_.supernode) {
    path = {npu(src)};
    if (spec_.node.fabric == NodeFabricKind::kSwitch)
      path.push_back(node_switch_.at(static_cast<std::size_t>(src / per_node)));
    path.push_back(npu(dst));
  } else {
    // Up from src to the lowest switch both chains share, then down to dst.
    std::vector<Vertex> up = up_chain(src);
    std::vector<Vertex> down = up_chain(dst);
    std::size_t meet_up = 0, meet_down = 0;
    bool found = false;
    for (std::size_t i = 0; i < up.size() && !found; ++i) {
      for (std::size_t j = 0; j < down.size(); ++j) {
        if (up[i] == down[j]) {
          meet_up = i;
          meet_down = j;
          found = true;
          break;
        }
      }
    }
    path.assign(up.begin(), up.begin() + static_cast<long>(meet_up) + 1);
    for (std::size_t j = meet_down; j-- > 0;) path.push_back(down[j]);
  }

  Route r;
  r.bottleneck_Bps = std::numeric_limits<double>::infinity();
  auto add = [&r](const std::string& name, const LinkSpec& link) {
    r.links.push_back(RouteLink{name, link.bandwidth_Bps, link.latency_s});
    r.latency_s += link.latency_s;
    r.bottleneck_Bps = std::min(r.bottleneck_Bps, link.bandwidth_Bps);
  };
  for (std::size_t k = 0; k < path.size(); ++k) {
    if (k > 0) {
      auto [e, exists] = boost::edge(path[k - 1], path[k], graph_);
      (void)exists;
      const TopoEdge& edge = graph_[e];
      if (!edge.internal) {
        bool up = edge.lower == path[k - 1];
        add(up ? up_name(edge.link.name) : down_name(edge.link.name), edge.link);
        ++r.hops;
      }
    }
    const TopoVertex& v = graph_[path[k]];
    if (!v.link.name.empty()) add(v.link.name, v.link);
  }
  return r;
}

}  // namespace epsim::topology
