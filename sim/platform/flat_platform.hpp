// A cluster's platform flattened for the replay: one Full zone whose route
// between every pair of NPUs is the topology's route, link for link, so
// SimGrid finds a route by a table read instead of walking zones (the
// dominant replay cost at EP256, docs/performance.md).
#pragma once

#include "topology/cluster_spec.hpp"

namespace epsim::sim {

// Builds `spec`'s hosts (speed and properties as topology/ builds them),
// every link its routes cross (a split-duplex link as its two one-way
// halves, each shared) and all NPU-to-NPU routes into the current engine.
// Timings equal those of the zoned platform `epsim platform xml` writes for
// `spec` (tested). Use open_platform (platform_loader.hpp), which checks the result.
void build_flat_platform(const topology::ClusterSpec& spec);

}  // namespace epsim::sim
