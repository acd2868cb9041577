// The SimGrid side of topology/: configuring the engine, building a
// cluster's platform into it, and loading a hand-written platform XML.
// Only simgrid_platform.cpp includes SimGrid; this header stays plain.
#pragma once

#include <string>
#include <vector>

#include "topology/cluster_spec.hpp"
#include "topology/platform_plan.hpp"

namespace epsim::topology {

// An NPU host as the simulator needs it, read back from its properties.
struct NpuHost {
  std::string name;  // "node3.npu5": SimGrid host name
  int node = 0;
  int local = 0;
  double flops_bf16 = 0;  // FLOP/s (= host speed)
  double flops_fp8 = 0;   // FLOP/s, 0 when absent
  double flops_int8 = 0;  // OP/s, 0 when absent
  double hbm_bandwidth_Bps = 0;
  double hbm_capacity_bytes = 0;
  double comm_compute_share = 0;
};

// Sets the models epsim relies on (host/model:ptask_L07, network/TCP-gamma:0)
// and, unless `verbose`, silences SimGrid's log below critical. Call after
// the s4u::Engine is constructed and before any platform is built or loaded.
void configure_engine(bool verbose = false);

// Builds the cluster's platform (the same zones and routes as
// `epsim platform xml` writes) into the current engine and seals it.
// Returns the NPU hosts in rank order (node, then local index).
std::vector<NpuHost> build_platform(const ClusterSpec& spec);
std::vector<NpuHost> build_platform(const PlatformPlan& plan);

// Loads a SimGrid platform XML into the current engine and validates it
// against the naming contract (docs/platform.md). A malformed file (one
// SimGrid would abort on) is first tried in a child process, so it becomes
// an InputError naming the file and SimGrid's message instead of an abort.
// Throws InputError when no host is named nodeN.npuI, a required property
// is missing or not a number, or an NPU's loopback route is not its HBM link.
std::vector<NpuHost> load_platform_xml(const std::string& path);

// Checks a platform XML file in a fresh engine of its own (for tools that
// run no simulation): load_platform_xml's checks, same errors.
std::vector<NpuHost> check_platform_xml(const std::string& path);

// The NPU hosts of the platform in the current engine, validated as above;
// `source` names the platform in error messages.
std::vector<NpuHost> find_npu_hosts(const std::string& source);

}  // namespace epsim::topology
