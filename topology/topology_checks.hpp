// Whole-topology figures computed on the graph: connectivity, diameter,
// bisection bandwidth (max-flow), and the route of each class of NPU pairs.
#pragma once

#include <string>
#include <vector>

#include "topology/topology_graph.hpp"

namespace epsim::topology {

// A class of NPU pairs and one sample pair's route (presets are symmetric,
// so every pair of a class has the same route shape).
struct PairClass {
  std::string name;  // "same node", "other node", "other leaf"
  int src = 0;       // sample ranks
  int dst = 0;
  Route route;
};

// The classes present in this topology, in order of distance.
std::vector<PairClass> pair_classes(const TopologyGraph& topo);

// True when every NPU reaches every other one.
bool is_connected(const TopologyGraph& topo);

// The largest number of graph edges on a shortest path between two NPUs.
int diameter_hops(const TopologyGraph& topo);
// The same by a search from every NPU: the reference diameter_hops is tested against.
int diameter_hops_every_npu(const TopologyGraph& topo);

// Max-flow (bytes/s, one direction) from the first half of the ranks to the
// second half; 0 with one NPU. Split-duplex links count their per-direction
// bandwidth; shared backplanes their full bandwidth.
double bisection_bandwidth_Bps(const TopologyGraph& topo);

}  // namespace epsim::topology
