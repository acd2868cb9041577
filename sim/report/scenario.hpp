// What a report is about: the platform, workload, layout and seed it was
// run with and the epsim version that ran it, so that a report (text or
// JSON) read on its own says what it is. The caller fills it; plain data.
#pragma once

#include <string>
#include <vector>

namespace epsim::sim {

struct Scenario {
  std::string platform;        // as given: preset name, cluster TOML or SimGrid XML path
  std::string platform_name;   // the cluster's own name ("atlas-800t-a2"); "" when not known (XML)
  std::string npu_model;       // "Ascend 910B"; "" when not known (XML)
  std::string workload;        // as given: preset name or workload TOML path
  std::string model;           // model.name
  int ep = 0;                  // expert-parallel ranks
  int dp = 0;                  // data-parallel replicas
  int ranks_per_node = 0;
  long long seed = 0;          // routing.seed
  std::vector<std::string> overrides;  // --set key=value, as given
};

// The project version (CMake project VERSION), e.g. "0.1.0".
const char* epsim_version();

}  // namespace epsim::sim
