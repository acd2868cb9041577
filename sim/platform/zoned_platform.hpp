// A cluster's platform as the zones of its plan (topology/platform_plan.hpp,
// what `epsim platform xml` writes), built through SimGrid's C++ API: routes
// grow with nodes, not with NPU pairs, so thousands of NPUs fit where the
// flat zone's NPUs^2 routes would not (open_platform chooses, docs/platform.md).
#pragma once

#include "topology/cluster_spec.hpp"

namespace epsim::sim {

// Builds `spec`'s plan into the current engine: the same hosts, links and
// routes as its XML export loaded back, without the parser. Use
// open_platform (platform_loader.hpp), which checks the result.
void build_zoned_platform(const topology::ClusterSpec& spec);

}  // namespace epsim::sim
