// `epsim platform` as jobs: a cluster looked at before simulating on it.
// Each takes the platform and the user's --set, and returns what tools/
// prints: the topology report, the SimGrid platform plan, the verdict
// `run` and `sweep` give a platform, the presets.
#pragma once

#include <string>
#include <vector>

#include "sim/platform/platform_loader.hpp"
#include "topology/platform_plan.hpp"
#include "topology/topology_report.hpp"

namespace epsim::app {

struct PlatformJob {
  std::string platform;                // cluster TOML or preset name (check: a SimGrid XML too)
  std::vector<std::string> overrides;  // the user's --set key=value
  std::string stack = {};              // --stack: the software stack in place of the platform's; "": its own
};

// NPUs, links, routes per class of NPU pairs, bisection, diameter.
topology::TopologyReport platform_report(const PlatformJob& job);

// The SimGrid platform the simulator builds, and the cluster's name.
struct PlatformXml {
  std::string name;
  topology::PlatformPlan plan;
};
PlatformXml platform_xml(const PlatformJob& job);

// The platform checked as run and sweep check it (an XML in a child process).
sim::PlatformShape check_platform(const PlatformJob& job);

// The bundled cluster presets, sorted.
std::vector<std::string> platform_presets();

}  // namespace epsim::app
