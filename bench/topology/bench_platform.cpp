// Times each stage of turning a cluster TOML into a loaded SimGrid platform,
// once, in one process (SimGrid allows one engine per process).
//   bench_platform build|xml PRESET [key=value]...
// build: spec -> graph -> plan -> one flat SimGrid zone in C++ + contract check (what `epsim run` does);
// xml:   spec -> graph -> plan -> zoned XML file -> probe, SimGrid's parser, contract (platform xml + run).
// Prints one line of "stage=seconds" figures.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>

#include "sim/platform/flat_platform.hpp"
#include "sim/platform/platform_loader.hpp"
#include "topology/cluster_spec.hpp"
#include "topology/platform_plan.hpp"
#include "topology/platform_xml.hpp"
#include "topology/topology_checks.hpp"

namespace sg4 = simgrid::s4u;
using namespace epsim::topology;

namespace {
double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: bench_platform build|xml PRESET [key=value]...\n");
    return 2;
  }
  const std::string mode = argv[1];
  std::vector<std::string> overrides(argv + 3, argv + argc);
  auto t0 = std::chrono::steady_clock::now();
  ClusterSpec spec = load_cluster_spec(argv[2], overrides);
  TopologyGraph topo(spec);
  double graph_s = seconds_since(t0);

  auto t1 = std::chrono::steady_clock::now();
  PlatformPlan plan = make_platform_plan(topo);
  double plan_s = seconds_since(t1);

  double xml_write_s = 0;
  auto t2 = std::chrono::steady_clock::now();
  epsim::sim::OpenPlatform open;
  if (mode == "xml") {
    std::string path = "/tmp/bench_platform_" + std::to_string(::getpid()) + ".xml";
    {
      std::ofstream out(path);
      write_platform_xml(plan, spec.name, out);
    }
    xml_write_s = seconds_since(t2);
    t2 = std::chrono::steady_clock::now();
    open = epsim::sim::open_platform(epsim::sim::PlatformRequest{path, {}});  // probe, load, contract
    std::remove(path.c_str());
  } else {
    open = epsim::sim::open_platform(spec);  // the replay's flat build, contract
  }
  const std::vector<sg4::Host*>& hosts = open.loaded.hosts;
  double load_s = seconds_since(t2);

  // Route lookups the simulator will make: 10,000 random NPU pairs.
  auto t3 = std::chrono::steady_clock::now();
  std::mt19937 rng(42);
  std::uniform_int_distribution<std::size_t> pick(0, hosts.size() - 1);
  double latency_sum = 0;
  for (int i = 0; i < 10000; ++i) {
    std::vector<sg4::Link*> links;
    double latency = 0;
    hosts[pick(rng)]->route_to(hosts[pick(rng)], links, &latency);
    latency_sum += latency;
  }
  double routes_s = seconds_since(t3);

  auto t4 = std::chrono::steady_clock::now();
  double bisection = bisection_bandwidth_Bps(topo);
  int diameter = diameter_hops(topo);
  double checks_s = seconds_since(t4);

  fmt::print(
      "npus={} routes={} graph_s={:.4f} plan_s={:.4f} xml_write_s={:.4f} load_s={:.4f} "
      "total_s={:.4f} route_lookups_10k_s={:.4f} checks_s={:.4f} bisection_GBps={:.0f} diameter={} "
      "mean_latency_us={:.3f}\n",
      hosts.size(), plan.route_count, graph_s, plan_s, xml_write_s, load_s,
      graph_s + plan_s + xml_write_s + load_s, routes_s, checks_s, bisection / 1e9, diameter,
      latency_sum / 10000 * 1e6);
  return 0;
}
