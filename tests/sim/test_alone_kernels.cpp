// A compute part whose NPU nothing else loads runs outside SimGrid's solver
// (ReplayOptions::alone_kernels) and becomes a SimGrid activity with its
// remaining work when a round starts to share its NPU. The replay must not
// see the difference: every interval equals, to 1e-9 of the step, the
// replay in which every part is a SimGrid activity. Each simulation runs
// in a forked child.
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "sim/simulate.hpp"
#include "sim_test_support.hpp"
#include "workloads/task_graph_builder.hpp"
#include "workloads/workload_loader.hpp"

using namespace epsim;
using namespace epsim::sim;
using epsim::sim::testing::in_child;
using workloads::Task;
using workloads::TaskGraph;
using workloads::TaskKind;

namespace {

constexpr int kRanks = 16;  // two a2 nodes of 8
constexpr int kPerNode = 8;

struct Row {
  int rank = 0;
  int stream = 0;
  long task = 0;
  double ready_s = 0, start_s = 0, end_s = 0;
};

struct Outcome {
  double step_s = 0;
  std::vector<double> task_bound_s;  // per task: its roofline alone (StepBounds::task_s)
  std::vector<Row> rows;
};

Outcome replay(const TaskGraph& graph, bool alone, const PlatformRequest& platform) {
  const std::string out = in_child([&] {
    ReplayOptions options;
    options.alone_kernels = alone;
    options.record_link_spans = true;  // a kernel that stops being alone goes on with its link spans
    options.compute_fallback = workloads::Dtype::kBf16;  // the 910B has no fp8 peak
    const Simulation s = simulate(platform, graph, options);
    std::string text = fmt::format("{:.17g} {}", s.timeline.step_s, s.bounds.task_s.size());
    for (double b : s.bounds.task_s) text += fmt::format(" {:.17g}", b);
    text += "\n";
    for (const Interval& i : s.timeline.intervals)
      text += fmt::format("{} {} {} {:.17g} {:.17g} {:.17g}\n", i.rank, static_cast<int>(i.stream), i.task, i.ready_s,
                          i.start_s, i.end_s);
    return text;
  });
  std::istringstream in(out);
  Outcome o;
  std::size_t tasks = 0;
  REQUIRE(in >> o.step_s >> tasks);
  o.task_bound_s.resize(tasks);
  for (double& b : o.task_bound_s) REQUIRE(in >> b);
  Row r;
  while (in >> r.rank >> r.stream >> r.task >> r.ready_s >> r.start_s >> r.end_s) o.rows.push_back(r);
  return o;
}

// Both replays, every interval compared; returns the one with kernels alone.
Outcome same_replay(const TaskGraph& graph, const PlatformRequest& platform) {
  const Outcome alone = replay(graph, true, platform);
  const Outcome shared = replay(graph, false, platform);
  const double tolerance = 1e-9 * shared.step_s;
  CAPTURE(alone.step_s, shared.step_s);
  CHECK(std::abs(alone.step_s - shared.step_s) <= tolerance);
  REQUIRE(alone.rows.size() == shared.rows.size());
  int differ = 0;
  for (std::size_t k = 0; k < alone.rows.size(); ++k) {
    const Row& a = alone.rows[k];
    const Row& b = shared.rows[k];
    differ += a.rank != b.rank || a.stream != b.stream || a.task != b.task ||
              std::abs(a.ready_s - b.ready_s) > tolerance || std::abs(a.start_s - b.start_s) > tolerance ||
              std::abs(a.end_s - b.end_s) > tolerance;
  }
  CHECK(differ == 0);
  return alone;
}

const Row& row_of(const Outcome& o, int rank, long task) {
  for (const Row& r : o.rows)
    if (r.rank == rank && r.task == task) return r;
  FAIL("no interval for rank " << rank << " task " << task);
  return o.rows.front();
}

// A short kernel on every rank but rank 0 (task 0), a memory-bound kernel
// on rank 0 (task 1: `kernel_bytes` of HBM traffic), and a uniform
// dispatch (task 2: 4096 tokens per rank, hidden 7168) that waits for the
// short kernels: it starts while rank 0's kernel runs and moves bytes
// through rank 0's HBM.
TaskGraph kernel_under_dispatch(double kernel_bytes) {
  TaskGraph g = testing::one_dispatch(kRanks, kPerNode, std::vector<std::int32_t>(kRanks * kRanks, 4096 / kRanks), 7168);
  Task dispatch = g.tasks.front();
  g.tasks.clear();
  Task short_kernel;
  short_kernel.id = 0;
  short_kernel.kind = TaskKind::kAttention;
  short_kernel.flops.assign(kRanks, 1e9);
  short_kernel.hbm_bytes.assign(kRanks, 1e6);
  short_kernel.flops[0] = 0;
  short_kernel.hbm_bytes[0] = 0;
  g.tasks.push_back(short_kernel);
  Task long_kernel = short_kernel;
  long_kernel.id = 1;
  long_kernel.flops.assign(kRanks, 0.0);
  long_kernel.hbm_bytes.assign(kRanks, 0.0);
  long_kernel.flops[0] = 1e9;
  long_kernel.hbm_bytes[0] = kernel_bytes;
  g.tasks.push_back(long_kernel);
  dispatch.id = 2;
  dispatch.deps = {0};
  g.tasks.push_back(dispatch);
  return g;
}

const PlatformRequest kA2{"a2", {"node.count=2"}};

}  // namespace

TEST_CASE("a kernel alone on its NPU ends at its roofline, as the solver would end it") {
  const Outcome o = same_replay(kernel_under_dispatch(4e8), kA2);
  // The short kernels run alone from the start: each takes its roofline.
  for (int rank = 1; rank < kRanks; ++rank) {
    const Row& k = row_of(o, rank, 0);
    CHECK(k.start_s == 0);
    CHECK(k.end_s == Approx(o.task_bound_s[0]).epsilon(1e-12));
  }
}

TEST_CASE("a round that starts mid-kernel shares the kernel's HBM: the kernel slows, the replay is unchanged") {
  // 4 GB at the 910B's HBM bandwidth: milliseconds, far longer than the short kernels.
  const Outcome shared = same_replay(kernel_under_dispatch(4e9), kA2);
  const Row& k = row_of(shared, 0, 1);
  const Row& dispatch = row_of(shared, 1, 2);
  // The dispatch started while rank 0's kernel ran...
  CHECK(dispatch.start_s < k.end_s);
  // ... and the kernel, memory-bound, took longer than its roofline alone.
  CHECK(k.end_s > shared.task_bound_s[1] * (1 + 1e-6));
}

TEST_CASE("pipeline stages and communication kernels holding SMs: every interval unchanged to 1e-9") {
  // tiny-moe in two stages on four H800 nodes: DeepEP holds 20 of 132 SMs
  // (hopper-deepseek), so rounds share every NPU they touch with its kernels.
  const workloads::WorkloadSpec w = workloads::load_workload(
      "tiny-moe", {"parallel.pp=2", "parallel.ep=16", "parallel.ranks_per_node=8", "parallel.micro_batches=4"});
  const TaskGraph graph = workloads::build_task_graph(w);
  same_replay(graph, PlatformRequest{"h800", {"node.count=4"}});
}
