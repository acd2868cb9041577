// check_platform / open_platform: reading, probing, building, loading and
// checking a platform, in that order (platform_loader.hpp).
#include "sim/platform/platform_loader.hpp"


#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <utility>

#include <fmt/format.h>
#include <simgrid/s4u/Engine.hpp>

#include "core/error.hpp"
#include "core/toml_reader.hpp"
#include "sim/platform/child_probe.hpp"
#include "sim/platform/flat_platform.hpp"
#include "sim/platform/zoned_platform.hpp"
#include "sim/platform/placement.hpp"
#include "topology/platform_size.hpp"

namespace epsim::sim {

namespace {

void load_xml(SimEngine& engine, const std::string& path) {
  try {
    engine.engine().load_platform(path);
  } catch (const std::exception& e) {
    throw InputError({path, 0, 0}, "", std::string("not a valid SimGrid platform: ") + e.what());
  }
}

// Loads and checks the XML in a child (where an abort costs only the child):
// the contract check with every NPU route, as the run would meet them.
PlatformShape probe_xml(const std::string& path) {
  read_input_file(path);  // a regular file under the size cap, before SimGrid reads it unbounded
  std::string summary;
  try {
    summary = run_in_child(path, [&path] {
      SimEngine engine(path);
      load_xml(engine, path);
      const LoadedPlatform loaded = discover_platform(engine.engine(), path);
      check_all_routes(loaded.facts);
      return fmt::format("{} {}", loaded.facts.nodes, loaded.facts.npus_per_node);
    });
  } catch (const InputError& e) {
    if (e.problem().find("in prolog") == std::string::npos) throw;
    throw InputError(e.where(), e.key(),
                     e.problem() + " (SimGrid requires the line <!DOCTYPE platform SYSTEM "
                                   "\"https://simgrid.org/simgrid.dtd\">)");
  }
  PlatformShape shape;
  shape.source = path;
  if (std::sscanf(summary.c_str(), "%d %d", &shape.nodes, &shape.npus_per_node) != 2)
    throw std::logic_error("platform probe of " + path + " answered \"" + summary + "\"");
  return shape;
}

PlatformShape cluster_shape(topology::ClusterSpec cluster) {
  PlatformShape shape;
  shape.source = cluster.source;
  shape.nodes = cluster.node.count;
  shape.npus_per_node = cluster.node.npus;
  shape.cluster = std::move(cluster);
  return shape;
}

}  // namespace

bool uses_flat_platform(const topology::ClusterSpec& cluster) {
  return static_cast<long long>(cluster.node.count) * cluster.node.npus <= kFlatPlatformMaxNpus;
}

// The zoned build's routes inside its node zones: one per ordered NPU pair of a node.
static double node_routes(const topology::ClusterSpec& cluster) {
  return static_cast<double>(cluster.node.count) * cluster.node.npus * cluster.node.npus;
}

double platform_memory_bytes(const topology::ClusterSpec& cluster) {
  const topology::PlatformSize size = topology::platform_size(cluster);
  const double nodes = cluster.node.count;
  const double layout_bytes = uses_flat_platform(cluster)
                                  ? kPlatformBytesPerRoute * static_cast<double>(size.routes())
                                  : kZonedPlatformBytesPerNpu * static_cast<double>(size.npus) +
                                        kZonedPlatformBytesPerNodeRoute * node_routes(cluster) +
                                        kZonedPlatformBytesPerNodePair * nodes * nodes;
  return kPlatformBaseBytes + layout_bytes + kPlatformBytesPerLink * static_cast<double>(size.simgrid_links()) +
         topology::topology_graph_bytes(size);
}

// Refuses, before SimGrid allocates it, a platform whose routes and links would not fit.
void check_platform_memory(const topology::ClusterSpec& cluster) {
  const topology::PlatformSize size = topology::platform_size(cluster);
  const std::string layout_terms =
      uses_flat_platform(cluster)
          ? fmt::format("{}^2 routes x ~{:.0f} B", size.npus, kPlatformBytesPerRoute)
          : fmt::format("~{:.0f} kB per NPU + {} nodes x {}^2 routes x ~{:.0f} B + ~{:.0f} B per pair of nodes",
                        kZonedPlatformBytesPerNpu / 1e3, cluster.node.count, cluster.node.npus,
                        kZonedPlatformBytesPerNodeRoute, kZonedPlatformBytesPerNodePair);
  topology::check_build_memory(
      cluster, platform_memory_bytes(cluster),
      fmt::format("{} + {} links x ~{:.0f} B + the topology graph's {} x ~{:.0f} B", layout_terms,
                  size.simgrid_links(), kPlatformBytesPerLink, size.cables, topology::kGraphBytesPerEdge));
}

bool is_platform_xml(const std::string& platform) {
  return platform.size() > 4 && platform.compare(platform.size() - 4, 4, ".xml") == 0;
}

PlatformShape check_platform(const PlatformRequest& request) {
  if (!is_platform_xml(request.platform))
    return cluster_shape(topology::load_cluster_spec(request.platform, request.overrides, request.stack));
  if (!request.stack.empty())
    throw option_error("--stack", "a SimGrid XML platform runs no software stack (its hosts carry their own rates); "
                                  "give a cluster TOML or preset");
  if (!request.overrides.empty())
    throw InputError({request.platform, 0, 0}, "",
                     "a SimGrid XML platform takes no overrides, got \"" + request.overrides.front() + "\"");
  return probe_xml(request.platform);
}

OpenPlatform open_platform(const topology::ClusterSpec& cluster, const EngineOptions& options,
                           std::optional<bool> flat) {
  OpenPlatform out;
  out.shape = cluster_shape(cluster);
  check_platform_memory(cluster);
  out.engine = std::make_unique<SimEngine>(cluster.source, options);
  try {
    if (flat.value_or(uses_flat_platform(cluster)))
      build_flat_platform(cluster);
    else
      build_zoned_platform(cluster);
  } catch (const std::exception& e) {
    throw InputError({cluster.source, 0, 0}, "", std::string("SimGrid could not build the platform: ") + e.what());
  }
  out.loaded = discover_platform(out.engine->engine(), cluster.source);
  return out;
}

OpenPlatform open_platform(const PlatformRequest& request, const EngineOptions& options) {
  return open_platform(check_platform(request), options);
}

OpenPlatform open_platform(PlatformShape shape, const EngineOptions& options) {
  if (shape.cluster) return open_platform(*shape.cluster, options);
  OpenPlatform out;
  out.shape = std::move(shape);
  out.engine = std::make_unique<SimEngine>(out.shape.source, options);
  load_xml(*out.engine, out.shape.source);
  out.loaded = discover_platform(out.engine->engine(), out.shape.source);
  return out;
}

void check_ranks_fit(const PlatformShape& platform, int ranks, int ranks_per_node) {
  if (platform.cluster && ranks_per_node >= 1 && ranks % ranks_per_node == 0 &&
      ranks_per_node <= platform.npus_per_node && ranks / ranks_per_node > platform.nodes) {
    throw InputError(platform.cluster->node.count_given_at, "node.count",
                     fmt::format("{} ranks at {} per node need {} nodes; the platform has {}", ranks,
                                 ranks_per_node, ranks / ranks_per_node, platform.nodes));
  }
  check_ranks_fit(ranks, ranks_per_node, platform.nodes, platform.npus_per_node);
}

}  // namespace epsim::sim
