// Replay benchmark: the DeepSeek-V3 preset (61 layers, forward + backward)
// on the A2 preset at a given EP, or one skewed dispatch (zipf 1.0) alone.
// Prints one JSON line: wall and CPU time of the replay, SimGrid activities, peak
// RSS and the simulated step. Usage:
//   bench_replay --ep 64 [--schedule serial|overlap] [--algorithm direct|hierarchical]
//     [--fidelity per-flow|aggregated] [--chunks N]
//   bench_replay --ep 256 --skewed-dispatch
//   --zoned: the zoned XML export (epsim platform xml) instead of the flattened build the replay uses
//   --set key=value: a workload override (model.layers=13, parallel.micro_batches=4, ...)
//   --no-fusion: a kernel per rank (ReplayOptions::fuse_identical_compute = false)
//   --no-stand-ins: rounds carry their own transfers (ReplayOptions::solver_stand_ins = false)
//   --link-spans: record link spans (what `epsim run --trace` does; off by default, as in `epsim run`)
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "sim/simulate.hpp"
#include "topology/cluster_spec.hpp"
#include "topology/platform_plan.hpp"
#include "topology/platform_xml.hpp"
#include "workloads/task_graph_builder.hpp"
#include "workloads/workload_loader.hpp"

using namespace epsim;

namespace {

// One dispatch task of `g` (the first) with its traffic matrix, alone.
workloads::TaskGraph first_dispatch(const workloads::TaskGraph& g) {
  workloads::TaskGraph out;
  out.ranks = g.ranks;
  out.ranks_per_node = g.ranks_per_node;
  for (const workloads::Task& t : g.tasks) {
    if (t.kind != workloads::TaskKind::kDispatch) continue;
    workloads::Task d = t;
    d.id = 0;
    d.deps.clear();
    out.traffic.push_back(g.traffic[t.traffic]);
    d.traffic = 0;
    out.tasks.push_back(d);
    break;
  }
  return out;
}

// User + system CPU seconds of this process so far (the replay is single-threaded).
double cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

double peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) * 1024.0;
}

}  // namespace

int main(int argc, char** argv) {
  int ep = 64;
  bool skewed_dispatch = false;
  bool zoned = false;  // the zoned XML export instead of the flattened build
  std::vector<std::string> workload_sets;
  sim::ReplayOptions options;
  options.record_link_spans = false;  // as `epsim run` without --trace
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const std::string v = i + 1 < argc ? argv[i + 1] : "";
    if (a == "--ep") ep = std::stoi(v), ++i;
    else if (a == "--skewed-dispatch") skewed_dispatch = true;
    else if (a == "--zoned") zoned = true;
    else if (a == "--link-spans") options.record_link_spans = true;
    else if (a == "--set") workload_sets.push_back(v), ++i;
    else if (a == "--schedule") options.schedule = v == "serial" ? sim::Schedule::kSerial : sim::Schedule::kOverlap, ++i;
    else if (a == "--algorithm")
      options.algorithm = v == "direct" ? sim::AlltoallAlgorithm::kDirect : sim::AlltoallAlgorithm::kHierarchical, ++i;
    else if (a == "--fidelity")
      options.fidelity = v == "per-flow" ? sim::Fidelity::kPerFlow : sim::Fidelity::kAggregated, ++i;
    else if (a == "--chunks")
      options.pipeline_chunks = std::stoi(v), ++i;
    else if (a == "--no-fusion")
      options.fuse_identical_compute = false;
    else if (a == "--no-stand-ins")
      options.solver_stand_ins = false;
    else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  try {
    const int nodes = (ep + 7) / 8;
    const topology::ClusterSpec cluster =
        topology::load_cluster_spec("a2", {"node.count=" + std::to_string(nodes)});
    std::vector<std::string> overrides = {"parallel.ep=" + std::to_string(ep)};
    if (skewed_dispatch) overrides.insert(overrides.end(), {"routing.kind=zipf", "routing.zipf_s=1.0"});
    overrides.insert(overrides.end(), workload_sets.begin(), workload_sets.end());
    const workloads::WorkloadSpec w = workloads::load_workload("deepseek-v3", overrides);
    options.compute_fallback = w.precision.gemm_fallback;  // as `epsim run` does
    auto t0 = std::chrono::steady_clock::now();
    workloads::TaskGraph graph = workloads::build_task_graph(w);
    if (skewed_dispatch) graph = first_dispatch(graph);
    auto t1 = std::chrono::steady_clock::now();
    const double cpu0_s = cpu_s();
    const std::string xml = "/tmp/bench_replay_" + std::to_string(::getpid()) + ".xml";
    if (zoned) {
      std::ofstream out(xml);
      topology::write_platform_xml(topology::make_platform_plan(topology::TopologyGraph(cluster)), cluster.name, out);
    }
    sim::Simulation s = zoned ? sim::simulate(xml, graph, options)
                              : sim::simulate(sim::PlatformRequest{"a2", {"node.count=" + std::to_string(nodes)}},
                                              graph, options);
    if (zoned) std::remove(xml.c_str());
    auto t2 = std::chrono::steady_clock::now();
    const double replay_cpu_s = cpu_s() - cpu0_s;
    std::printf("%s\n", fmt::format(R"({{"ep":{},"layers":{},"micro_batches":{},"what":"{}","schedule":"{}","algorithm":"{}","fidelity":"{}","chunks":{},"tasks":{},)"
                                    R"("graph_wall_s":{:.3f},"replay_wall_s":{:.3f},"replay_cpu_s":{:.3f},"activities":{},"peak_rss_MB":{:.0f},)"
                                    R"("step_s":{:.6f},"bound_s":{:.6f}}})",
                                    ep, w.model.layers, w.parallel.micro_batches, skewed_dispatch ? "skewed dispatch" : "step", sim::to_string(s.options.schedule),
                                    sim::to_string(*s.options.algorithm), sim::to_string(*s.options.fidelity),
                                    s.options.pipeline_chunks, graph.tasks.size(),
                                    std::chrono::duration<double>(t1 - t0).count(),
                                    std::chrono::duration<double>(t2 - t1).count(), replay_cpu_s, s.timeline.activities,
                                    peak_rss_bytes() / 1e6, s.timeline.step_s, s.bounds.step_s)
                            .c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
