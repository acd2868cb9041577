// TopologyGraph: the cluster as a Boost.Graph (vertices NPUs, NICs and
// switches; edges links) and the route SimGrid takes between two NPUs.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "topology/cluster_spec.hpp"

namespace epsim::topology {

// How a link shares its capacity: SHARED between both directions (HBM,
// switch backplanes) or one capacity per direction (SPLITDUPLEX: cables).
enum class LinkSharing { kShared, kSplitDuplex };

// A physical resource with the SimGrid link name it becomes.
struct LinkSpec {
  std::string name;  // "" when the element has no link (a NIC vertex)
  double bandwidth_Bps = 0;
  double latency_s = 0;
  LinkSharing sharing = LinkSharing::kShared;
};

enum class VertexKind { kNpu, kNic, kSwitch };

// A vertex: an NPU (whose link is its HBM), a per-node NIC (no link: its
// port is an edge), or a switch (whose link is its backplane).
struct TopoVertex {
  std::string name;
  VertexKind kind = VertexKind::kSwitch;
  int node = -1;   // NPUs and NICs: the node index
  int local = -1;  // NPUs: the index inside the node
  LinkSpec link;
};

// An edge: a cable or port. `lower` is the endpoint from which the edge is
// crossed "UP" (SimGrid's split-duplex direction). Internal edges (an NPU to
// its node's shared NIC) carry no SimGrid link.
struct TopoEdge {
  LinkSpec link;
  std::size_t lower = 0;
  bool internal = false;
};

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, TopoVertex, TopoEdge>;
using Vertex = boost::graph_traits<Graph>::vertex_descriptor;

// One link of a route, named as SimGrid names it ("node0.npu1.nic_UP").
struct RouteLink {
  std::string name;
  double bandwidth_Bps = 0;
  double latency_s = 0;
};

struct Route {
  std::vector<RouteLink> links;
  double latency_s = 0;       // sum of link latencies
  double bottleneck_Bps = 0;  // smallest link bandwidth
  int hops = 0;               // graph edges crossed (internal ones excluded)
};

class TopologyGraph {
 public:
  // Throws InputError before building when the graph's memory estimate
  // (platform_size.hpp) is above the memory limit.
  explicit TopologyGraph(const ClusterSpec& spec);

  const Graph& graph() const { return graph_; }
  const ClusterSpec& spec() const { return spec_; }
  int npu_count() const { return static_cast<int>(npus_.size()); }
  // NPU of rank r = node * npus_per_node + local.
  Vertex npu(int rank) const { return npus_.at(static_cast<std::size_t>(rank)); }
  // The leaf (0-based) holding a node; 0 for fabrics without leaves.
  int leaf_of_node(int node) const;
  int leaf_count() const { return leaves_; }

  // The links SimGrid crosses from NPU `src` to NPU `dst` (ranks), HBM of
  // both ends included; src == dst gives the HBM loopback alone.
  Route route(int src, int dst) const;

 private:
  Vertex add_vertex(TopoVertex v);
  void add_edge(Vertex lower, Vertex upper, LinkSpec link, bool internal = false);
  // Vertices from an NPU up to the top of the scale-out tree.
  std::vector<Vertex> up_chain(int rank) const;

  ClusterSpec spec_;
  Graph graph_;
  std::vector<Vertex> npus_;
  std::vector<Vertex> node_switch_;  // per node, switch fabric only
  std::vector<Vertex> node_uplink_;  // per NPU: the first vertex above it in the scale-out tree
  std::vector<Vertex> leaf_;         // per leaf
  Vertex top_ = 0;                   // fabric / spine / supernode switch
  bool has_top_ = false;
  int leaves_ = 0;
};

// SimGrid's split-duplex direction suffixes.
inline std::string up_name(const std::string& link) { return link + "_UP"; }
inline std::string down_name(const std::string& link) { return link + "_DOWN"; }

}  // namespace epsim::topology
