// Pipeline parallelism as the replay runs it: on a uniform toy model (every
// layer the same HBM-bound expert GEMM, point-to-point transfers under 1 %
// of a pass) the bubble that emerges matches the schedules' closed forms:
// 1F1B idles (pp-1)/(m+pp-1) of the pipeline span, interleaving with vpp
// chunks per stage cuts the idle time by vpp. Each simulation runs in a
// forked child (one SimGrid engine per process).
#include <algorithm>
#include <cstdio>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "core/toml_reader.hpp"
#include "sim/simulate.hpp"
#include "sim_test_support.hpp"
#include "workloads/task_graph_builder.hpp"
#include "workloads/workload_loader.hpp"

using namespace epsim;
using namespace epsim::sim;
using epsim::sim::testing::in_child;
using epsim::sim::testing::platform_path;

namespace {

// pp stages of one rank each (one per node of four_nodes.xml), every layer
// a one-expert MoE layer whose 128 tokens all go to the rank's own expert:
// no all-to-all bytes, identical passes. Forward pass of a layer ~2.15 ms
// (the expert weights at 1 TB/s); a p2p transfer of 128 x 256 BF16 ~7 us.
workloads::WorkloadSpec toy(int pp, int vpp, int micro_batches, int layers, const char* schedule = nullptr) {
  const std::string text = fmt::format(R"(schema = 1
[model]
layers = {}
hidden = 256
expert_ffn = 1048576
experts = 1
top_k = 1
vocab = 1
[model.attention]
kind = "gqa"
heads = 1
kv_heads = 1
head_dim = 16
[parallel]
ep = 1
pp = {}
vpp = {}
micro_batch = 1
sequence_length = 128
micro_batches = {}{}
[precision]
dispatch = "bf16"
)",
                                       layers, pp, vpp, micro_batches,
                                       schedule ? fmt::format("\nschedule = \"{}\"", schedule) : std::string());
  toml::table root = parse_toml_text(text, "toy.toml");
  return workloads::read_workload(root, "toy.toml", "");
}

struct Bubble {
  double span_s = 0;    // step start to the last forward/backward compute end
  double idle_s = 0;    // mean over ranks of the span minus their forward/backward compute
  double report_idle_s = 0;  // the report's "idle per rank": neither compute nor communication runs
  double share() const { return idle_s / span_s; }
};

// Runs the toy step; returns "span idle".
std::string run_toy(int pp, int vpp, int micro_batches, int layers, const char* schedule = nullptr) {
  return in_child([=] {
    const workloads::WorkloadSpec w = toy(pp, vpp, micro_batches, layers, schedule);
    const workloads::TaskGraph g = workloads::build_task_graph(w);
    const Simulation s = simulate(platform_path("four_nodes"), g);
    double span_s = 0;
    std::vector<double> busy(static_cast<std::size_t>(g.ranks), 0.0);
    for (const Interval& iv : s.timeline.intervals) {
      const workloads::Task& t = g.tasks[iv.task];
      if (t.is_collective() || (t.phase != workloads::Phase::kForward && t.phase != workloads::Phase::kBackward))
        continue;
      span_s = std::max(span_s, iv.end_s);
      busy[static_cast<std::size_t>(iv.rank)] += iv.end_s - iv.start_s;
    }
    double idle_s = 0;
    for (double b : busy) idle_s += (span_s - b) / g.ranks;
    return fmt::format("{:.17g} {:.17g} {:.17g}", span_s, idle_s, s.report.idle_mean_s);
  });
}

Bubble bubble(const std::string& out) {
  Bubble b;
  INFO(out);
  REQUIRE(std::sscanf(out.c_str(), "%lf %lf %lf", &b.span_s, &b.idle_s, &b.report_idle_s) == 3);
  return b;
}

}  // namespace

TEST_CASE("1F1B: the bubble share is (pp-1)/(m+pp-1) on a uniform model") {
  for (auto [pp, m] : {std::pair{4, 8}, {2, 4}, {4, 4}, {3, 12}}) {
    const Bubble b = bubble(run_toy(pp, 1, m, 2 * pp));
    const double expected = (pp - 1.0) / (m + pp - 1.0);
    // The report's idle time is that bubble (the p2p transfers, under 1 % of a pass, are not idle).
    CHECK(b.report_idle_s == Approx(b.idle_s).epsilon(0.02));
    INFO("pp " << pp << " m " << m << ": span " << b.span_s << " s, bubble " << b.share());
    CHECK(b.share() == Approx(expected).epsilon(0.01));
  }
}

TEST_CASE("interleaved 1F1B: vpp chunks per stage cut the bubble time by vpp") {
  // 8 layers: pp 4 x 1 chunk of 2 layers, or pp 4 x vpp 2 chunks of 1 layer.
  const Bubble plain = bubble(run_toy(4, 1, 8, 8));
  const Bubble interleaved = bubble(run_toy(4, 2, 8, 8));
  INFO("1F1B idle " << plain.idle_s << " s, interleaved idle " << interleaved.idle_s << " s");
  CHECK(interleaved.idle_s == Approx(plain.idle_s / 2).epsilon(0.01));
  // Share: (pp-1)/(vpp m + pp-1) = 3/19.
  CHECK(interleaved.share() == Approx(3.0 / 19.0).epsilon(0.01));
  // The work is the same: the spans differ by the idle time saved.
  CHECK(plain.span_s - plain.idle_s == Approx(interleaved.span_s - interleaved.idle_s).epsilon(1e-3));
}

TEST_CASE("tensor parallelism: sharded kernels, and each TP all-reduce alone lands on its bound") {
  // tiny-moe at TP2: dp 4, so a stage of 8 ranks (4 nodes of 2) holds one EP8 group.
  const std::string out = in_child([] {
    const workloads::WorkloadSpec w = workloads::load_workload("tiny-moe", {"parallel.tp=2"});
    const workloads::WorkloadSpec w1 = workloads::load_workload("tiny-moe");
    const workloads::TaskGraph g = workloads::build_task_graph(w);
    const workloads::TaskGraph g1 = workloads::build_task_graph(w1);
    ReplayOptions options;
    options.schedule = Schedule::kSerial;
    const Simulation s = simulate(platform_path("four_nodes"), g, options);
    int tp_tasks = 0, on_bound = 0;
    double attention_flops = 0, attention_flops_tp1 = 0;
    for (const workloads::Task& t : g.tasks) {
      if (t.kind == workloads::TaskKind::kAttention && attention_flops == 0) attention_flops = t.flops[0];
      if (t.kind != workloads::TaskKind::kTpAllReduce) continue;
      ++tp_tasks;
      if (t.groups.size() != 4 || t.groups[0] != std::vector<int>{0, 1} || t.bytes != 256.0 * 512 * 2)
        return std::string("bad TP all-reduce shape");
    }
    for (const workloads::Task& t : g1.tasks)
      if (t.kind == workloads::TaskKind::kAttention) {
        attention_flops_tp1 = t.flops[0];
        break;
      }
    for (const CollectiveSpan& c : s.timeline.collectives)
      if (g.tasks[c.task].kind == workloads::TaskKind::kTpAllReduce &&
          std::abs((c.end_s - c.start_s) - s.bounds.task_s[c.task]) <= 1e-9 * s.bounds.task_s[c.task])
        ++on_bound;
    return fmt::format("{} {} {:.17g}", tp_tasks, on_bound, attention_flops / attention_flops_tp1);
  });
  int tp_tasks = 0, on_bound = 0;
  double ratio = 0;
  INFO(out);
  REQUIRE(std::sscanf(out.c_str(), "%d %d %lf", &tp_tasks, &on_bound, &ratio) == 3);
  // Per micro-batch (2) and layer (4: 1 dense, 3 MoE with a shared expert),
  // forward and backward: after attention and after the FFN or shared expert.
  CHECK(tp_tasks == 2 * 4 * 2 * 2);
  CHECK(on_bound == tp_tasks);
  // Attention on half the heads of the same micro-batch: half the FLOPs of TP1.
  CHECK(ratio == Approx(0.5).epsilon(1e-12));
}

TEST_CASE("DualPipe: the bubble is (pp/2 - 1)(F&B + B), smaller than 1F1B's") {
  // epsim does not split a backward into input and weight gradients, so
  // DualPipe's W (the deferred weight half) is 0 and B is the whole
  // backward (twice F here); with no all-to-all to hide, an overlapped pair
  // F&B takes F + B on the one compute stream. Bubble per rank:
  // (pp/2 - 1)(F + 2B) = (pp/2 - 1) x 5F, against 1F1B's (pp - 1)(F + B).
  // (four_nodes.xml has 4 nodes: pp 4 at most. At pp 2 the bubble is 0.)
  for (auto [pp, m] : {std::pair{4, 8}, {4, 12}, {4, 20}, {2, 4}, {2, 8}}) {
    const Bubble dual = bubble(run_toy(pp, 1, m, 2 * pp, "dualpipe"));
    const Bubble plain = bubble(run_toy(pp, 1, m, 2 * pp));
    // Every rank runs each micro-batch's forward and backward of one slice: busy m (F + B) = 3 m F.
    const double f = (dual.span_s - dual.idle_s) / (3.0 * m);
    INFO("pp " << pp << " m " << m << ": F " << f << " s, DualPipe idle " << dual.idle_s << " s, 1F1B idle "
               << plain.idle_s << " s");
    CHECK(dual.idle_s == Approx((pp / 2.0 - 1) * 5 * f).epsilon(0.01).margin(0.01 * f));
    CHECK(plain.idle_s == Approx((pp - 1.0) * 3 * f).epsilon(0.01));
    CHECK(dual.span_s < plain.span_s);
    // The same work: only the idle time differs.
    CHECK(dual.span_s - dual.idle_s == Approx(plain.span_s - plain.idle_s).epsilon(1e-3));
  }
}
