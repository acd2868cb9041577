// Counting a cluster's links from its spec, as topology_graph.cpp builds them.
#include "topology/platform_size.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/memory_limit.hpp"

namespace epsim::topology {

PlatformSize platform_size(const ClusterSpec& spec) {
  PlatformSize s;
  const std::int64_t per_node = spec.node.npus, nodes = spec.node.count;
  s.npus = per_node * nodes;
  s.shared_links = s.npus;  // HBM
  if (spec.supernode) {
    s.cables = s.npus;  // one port per NPU into the supernode switch
    s.shared_links += 1;
    return s;
  }
  if (spec.node.fabric == NodeFabricKind::kMesh) {
    s.node_cables = nodes * (per_node * (per_node - 1) / 2);
  } else {
    s.node_cables = s.npus;
    s.shared_links += nodes;  // node switches
  }
  s.cables = s.node_cables;
  if (!spec.scaleout) return s;
  const ScaleoutSpec& so = *spec.scaleout;
  s.cables += so.nic_per_npu ? s.npus : nodes;
  if (so.kind == ScaleoutKind::kLeafSpine) {
    const std::int64_t leaves = (nodes + so.nodes_per_leaf - 1) / so.nodes_per_leaf;
    s.shared_links += leaves;
    if (leaves > 1) {
      s.shared_links += 1;  // spine
      s.cables += leaves;   // leaf uplinks
    }
  } else {
    s.shared_links += 1;  // the fabric switch or the rails
  }
  return s;
}

double topology_graph_bytes(const PlatformSize& size) { return kGraphBytesPerEdge * static_cast<double>(size.cables); }

void check_build_memory(const ClusterSpec& spec, double bytes, const std::string& what) {
  if (bytes <= memory_limit_GiB() * kBytesPerGiB) return;
  const PlatformSize size = platform_size(spec);
  const std::string problem = fmt::format("building {} NPUs needs an estimated {:.1f} GiB ({}), {}", size.npus,
                                          bytes / kBytesPerGiB, what, memory_limit_clause());
  // A node's own links grow with its NPUs squared (a full mesh): then it is node.npus to lower.
  if (2 * size.node_cables > size.cables && size.node_cables > size.npus)
    throw InputError(spec.node.npus_given_at, "node.npus", problem);
  throw InputError(spec.node.count_given_at, "node.count", problem);
}

}  // namespace epsim::topology
