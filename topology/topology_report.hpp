// What `epsim platform show` prints: the cluster, its NPU (peak rates per
// dtype, HBM), its links, the route of each class of NPU pairs, bisection
// bandwidth and diameter; text or JSON.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "topology/topology_checks.hpp"
#include "topology/topology_graph.hpp"

namespace epsim::topology {

// A link class whose transfers achieve a share of the line rate (the
// platform keys node.link_efficiency and scaleout.nic_efficiency).
struct LinkRate {
  std::string link_class;  // "scale-up link" or "NIC"
  double line_rate_Bps = 0;
  double efficiency = 1;
  double effective_Bps() const { return efficiency * line_rate_Bps; }
};

struct TopologyReport {
  std::string name;
  std::string source;
  NpuSpec npu;  // as the simulator gets it (fp32 runs at the bf16 peak: the TOML has no fp32 figure)
  int npus = 0;
  int nodes = 0;
  int switches = 0;
  int links = 0;  // SimGrid links (a split-duplex cable counts once)
  std::vector<LinkRate> link_rates;  // each direction; the links are built at the effective rate
  KernelSpec kernels;                // the dispatch/combine kernels' [kernels] (printed when not the defaults)
  std::string stack, stack_source;   // the software stack pricing its kernels (docs/stacks.md); "": none
  std::vector<PairClass> classes;
  double bisection_Bps = 0;
  int diameter_hops = 0;
  bool connected = false;
};

// Computes the report (graph algorithms only, no SimGrid).
TopologyReport make_report(const TopologyGraph& topo);

// Human-readable: TFLOP/s (TOP/s for int8), GB/s, GB (1e9 bytes) and us.
std::string format_report(const TopologyReport& report);

// The same figures in SI units (bytes/s, seconds).
nlohmann::json report_json(const TopologyReport& report);

}  // namespace epsim::topology
