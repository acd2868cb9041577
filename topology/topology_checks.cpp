// Connectivity and diameter by breadth-first search; bisection by push-relabel max-flow.
#include "topology/topology_checks.hpp"

#include <algorithm>
#include <limits>

#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>

namespace epsim::topology {

namespace {

// Hop distances from one vertex to all others (max() when unreachable).
std::vector<int> distances_from(const Graph& g, Vertex from) {
  std::vector<int> dist(boost::num_vertices(g), std::numeric_limits<int>::max());
  dist[from] = 0;
  std::vector<Vertex> queue{from};
  for (std::size_t head = 0; head < queue.size(); ++head) {
    Vertex u = queue[head];
    for (auto [e, end] = boost::out_edges(u, g); e != end; ++e) {
      Vertex v = boost::target(*e, g);
      if (dist[v] == std::numeric_limits<int>::max()) {
        dist[v] = dist[u] + 1;
        queue.push_back(v);
      }
    }
  }
  return dist;
}

}  // namespace

std::vector<PairClass> pair_classes(const TopologyGraph& topo) {
  const ClusterSpec& spec = topo.spec();
  const int per_node = spec.node.npus;
  std::vector<PairClass> classes;
  if (per_node > 1) classes.push_back(PairClass{"same node", 0, 1, topo.route(0, 1)});
  // Another node under the same leaf (or the same fabric), then another leaf.
  for (int n = 1; n < spec.node.count; ++n) {
    if (topo.leaf_of_node(n) == 0) {
      classes.push_back(PairClass{"other node", 0, n * per_node, topo.route(0, n * per_node)});
      break;
    }
  }
  for (int n = 1; n < spec.node.count; ++n) {
    if (topo.leaf_of_node(n) != 0) {
      classes.push_back(PairClass{"other leaf", 0, n * per_node, topo.route(0, n * per_node)});
      break;
    }
  }
  return classes;
}

bool is_connected(const TopologyGraph& topo) {
  std::vector<int> dist = distances_from(topo.graph(), topo.npu(0));
  for (int r = 0; r < topo.npu_count(); ++r) {
    if (dist[topo.npu(r)] == std::numeric_limits<int>::max()) return false;
  }
  return true;
}

int diameter_hops_every_npu(const TopologyGraph& topo) {
  int diameter = 0;
  for (int r = 0; r < topo.npu_count(); ++r) {
    std::vector<int> dist = distances_from(topo.graph(), topo.npu(r));
    for (int s = 0; s < topo.npu_count(); ++s) diameter = std::max(diameter, dist[topo.npu(s)]);
  }
  return diameter;
}

int diameter_hops(const TopologyGraph& topo) {
  // Every node is built from the one node spec and differs from the others
  // only by the leaf it hangs from: nodes under one leaf are interchangeable,
  // and so are full leaves; only the last leaf may be partial. Inside a
  // node every NPU is wired alike (a full mesh, or one port into the node
  // switch, and one NIC or port into the same switch above), so an NPU's
  // eccentricity is that of local index 0 of node 0 or of the last node:
  // two searches give the exact diameter (tests compare with
  // diameter_hops_every_npu) in O(links), not O(NPUs x links) (a node of
  // 2,048 NPUs as a full mesh: a minute).
  const ClusterSpec& spec = topo.spec();
  int diameter = 0;
  for (int node : {0, spec.node.count - 1}) {
    std::vector<int> dist = distances_from(topo.graph(), topo.npu(node * spec.node.npus));
    for (int s = 0; s < topo.npu_count(); ++s) diameter = std::max(diameter, dist[topo.npu(s)]);
  }
  return diameter;
}

double bisection_bandwidth_Bps(const TopologyGraph& topo) {
  const int n = topo.npu_count();
  if (n < 2) return 0;
  using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
  using FlowGraph = boost::adjacency_list<
      boost::vecS, boost::vecS, boost::directedS, boost::no_property,
      boost::property<boost::edge_capacity_t, double,
                      boost::property<boost::edge_residual_capacity_t, double,
                                      boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;
  const Graph& g = topo.graph();
  const std::size_t nv = boost::num_vertices(g);
  FlowGraph flow(nv + 2);
  const auto source = nv, sink = nv + 1;
  auto capacity = boost::get(boost::edge_capacity, flow);
  auto reverse = boost::get(boost::edge_reverse, flow);
  // Each arc comes with a zero-capacity twin, as push-relabel requires.
  auto add_arc = [&](std::size_t u, std::size_t v, double c) {
    auto [e, ok1] = boost::add_edge(u, v, flow);
    auto [r, ok2] = boost::add_edge(v, u, flow);
    (void)ok1;
    (void)ok2;
    capacity[e] = c;
    capacity[r] = 0;
    reverse[e] = r;
    reverse[r] = e;
  };
  const double unlimited = 1e30;
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    double c = g[*e].internal ? unlimited : g[*e].link.bandwidth_Bps;
    add_arc(boost::source(*e, g), boost::target(*e, g), c);
    add_arc(boost::target(*e, g), boost::source(*e, g), c);
  }
  for (int r = 0; r < n; ++r) {
    if (r < n / 2) add_arc(source, topo.npu(r), unlimited);
    else add_arc(topo.npu(r), sink, unlimited);
  }
  return boost::push_relabel_max_flow(flow, source, sink);
}

}  // namespace epsim::topology
