// Times sampling the routing and building the task graph of one training
// step, median over repetitions. Usage:
//   bench_workload_step [PRESET|FILE] [--reps N] [--threads N] [--set k=v]...
// Defaults: deepseek-v3 (EP256, 2 x 4096 tokens per rank, 58 MoE layers), 5 reps.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "workloads/task_graph_builder.hpp"
#include "workloads/workload_loader.hpp"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace epsim::workloads;
  std::string workload = "deepseek-v3";
  std::vector<std::string> overrides;
  int reps = 5, threads = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc) reps = std::stoi(argv[++i]);
    else if (a == "--threads" && i + 1 < argc) threads = std::stoi(argv[++i]);
    else if (a == "--set" && i + 1 < argc) overrides.push_back(argv[++i]);
    else workload = a;
  }
  try {
    const WorkloadSpec w = load_workload(workload, overrides);
    // Wall time, and CPU time of all threads: on a shared, loaded machine
    // the CPU time is the steadier figure (wall ~ CPU / cores when idle).
    std::vector<double> sample_s, build_s, sample_cpu_s;
    std::size_t tasks = 0;
    for (int r = 0; r < reps; ++r) {
      auto start = std::chrono::steady_clock::now();
      const std::clock_t cpu_start = std::clock();
      RoutingSample s = sample_routing(w, threads);
      sample_s.push_back(seconds_since(start));
      sample_cpu_s.push_back(static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC);
      start = std::chrono::steady_clock::now();
      TaskGraph g = build_task_graph(w, s);
      build_s.push_back(seconds_since(start));
      tasks = g.tasks.size();
    }
    const double token_draws = static_cast<double>(w.parallel.ranks()) * w.parallel.tokens_per_micro_batch *
                               w.parallel.micro_batches * w.model.moe_layers();
    std::printf("workload %s: ep %d x dp %d, %lld tokens x %d micro-batches per rank, %d MoE layers, top-%d\n",
                workload.c_str(), w.parallel.ep, w.parallel.dp,
                static_cast<long long>(w.parallel.tokens_per_micro_batch), w.parallel.micro_batches,
                w.model.moe_layers(), w.model.top_k);
    std::printf("token draws %.3g, tasks %zu, reps %d\n", token_draws, tasks, reps);
    std::printf("sample median %.3f s wall, %.3f s CPU (%.1f ns CPU per token); build median %.3f s; total %.3f s wall\n",
                median(sample_s), median(sample_cpu_s), median(sample_cpu_s) / token_draws * 1e9, median(build_s),
                median(sample_s) + median(build_s));
  } catch (const epsim::InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return epsim::kExitBadInput;
  }
  return 0;
}
