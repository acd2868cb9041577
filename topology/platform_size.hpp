// How big a cluster's platform is, counted from its spec without building
// anything (a node of 4,096 NPUs as a full mesh has 8.4 million links), and
// what the topology graph built from it will hold in memory: the terms of
// the memory estimates every command checks before it builds.
#pragma once

#include <cstdint>
#include <string>

#include "topology/cluster_spec.hpp"

namespace epsim::topology {

struct PlatformSize {
  std::int64_t npus = 0;
  std::int64_t cables = 0;        // split-duplex edges (mesh pairs, ports, NICs, spine uplinks)
  std::int64_t node_cables = 0;   // of which inside nodes (mesh pairs or node-switch ports)
  std::int64_t shared_links = 0;  // HBM and switch backplanes
  // SimGrid links: a cable is one per direction (_UP, _DOWN).
  std::int64_t simgrid_links() const { return 2 * cables + shared_links; }
  // Routes of the flat platform: one per ordered NPU pair, loopbacks included.
  std::int64_t routes() const { return npus * npus; }
};

// The counts TopologyGraph(spec) and the flat SimGrid platform will have.
PlatformSize platform_size(const ClusterSpec& spec);

// The topology graph's memory: Boost.Graph edges with their link names,
// ~550 B per edge (measured: a node of 2,048 NPUs as a full mesh, 2.1
// million edges, peaks at 1.16 GB in `platform show`).
inline constexpr double kGraphBytesPerEdge = 550;
double topology_graph_bytes(const PlatformSize& size);

// Throws InputError when `bytes` (an estimate of building `spec`, `what`
// says of which parts) is above the memory limit (core/memory_limit.hpp),
// at node.npus when the links inside nodes are most of the platform (a
// large full mesh), else at node.count.
void check_build_memory(const ClusterSpec& spec, double bytes, const std::string& what);

}  // namespace epsim::topology
