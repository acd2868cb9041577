// A cluster alone: its topology report, its SimGrid plan, its verdict.
#include "app/platform_job.hpp"

#include "topology/cluster_spec.hpp"
#include "topology/presets.hpp"
#include "topology/topology_graph.hpp"

namespace epsim::app {

topology::TopologyReport platform_report(const PlatformJob& job) {
  const topology::ClusterSpec spec = topology::load_cluster_spec(job.platform, job.overrides, job.stack);
  return topology::make_report(topology::TopologyGraph(spec));
}

PlatformXml platform_xml(const PlatformJob& job) {
  const topology::ClusterSpec spec = topology::load_cluster_spec(job.platform, job.overrides, job.stack);
  return {spec.name, topology::make_platform_plan(topology::TopologyGraph(spec))};
}

sim::PlatformShape check_platform(const PlatformJob& job) {
  return sim::check_platform(sim::PlatformRequest{job.platform, job.overrides, job.stack});
}

std::vector<std::string> platform_presets() { return topology::preset_names(); }

}  // namespace epsim::app
