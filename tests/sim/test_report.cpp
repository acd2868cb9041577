// The report says what it measured: compute dtypes an NPU lacks are refused
// or run at the declared fallback's peak, the gap sim - bound is split into
// parts that sum to it, phase rows show the hot rank's max beside the mean,
// the layer straggler follows hot experts that move per layer, and link
// counters never exceed 100 % and are picked by utilisation.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "sim/report/trace.hpp"
#include "sim/simulate.hpp"
#include "sim_test_support.hpp"
#include "workloads/task_graph_builder.hpp"
#include "workloads/workload_loader.hpp"

using namespace epsim;
using namespace epsim::sim;
using epsim::sim::testing::in_child;
using epsim::sim::testing::moe_graph;
using epsim::sim::testing::MoeShape;
using epsim::sim::testing::one_compute_task;
using epsim::sim::testing::platform_path;
using epsim::sim::testing::sixteen_ranks;
using workloads::Dtype;

namespace {

// Two NPUs: bf16 1e14, and fp8 / int8 as given (0: absent).
PlatformFacts two_npus(double fp8, double int8) {
  PlatformFacts p;
  p.nodes = 1;
  p.npus_per_node = 2;
  for (int i = 0; i < 2; ++i) {
    NpuFacts n;
    n.name = fmt::format("node0.npu{}", i);
    n.local = i;
    n.flops_bf16_per_s = 1e14;
    n.flops_fp8_per_s = fp8;
    n.flops_int8_per_s = int8;
    n.flops_fp32_per_s = 1e14;
    n.hbm_bandwidth_Bps = 1e12;
    n.hbm_link = i;
    p.npus.push_back(n);
    p.links.push_back({n.name + ".hbm", 1e12, 0, true});
  }
  return p;
}

const ReportRow& phase(const Report& r, const std::string& name) {
  for (const ReportRow& p : r.phases)
    if (p.name == name) return p;
  FAIL("no phase " << name);
  return r.phases.front();
}

// Largest sum of concurrent span rates over a link's bandwidth, and the bytes
// the spans hold, per link.
struct LinkLoad {
  double peak_utilisation = 0;
  double bytes = 0;
};
std::map<int, LinkLoad> link_loads(const Timeline& t, const PlatformFacts& p) {
  std::map<int, std::map<double, double>> delta;
  std::map<int, LinkLoad> out;
  for (const LinkSpan& s : t.link_spans) {
    delta[s.link][s.start_s] += s.bytes / (s.end_s - s.start_s);
    delta[s.link][s.end_s] -= s.bytes / (s.end_s - s.start_s);
    out[s.link].bytes += s.bytes;
  }
  for (auto& [link, changes] : delta) {
    double rate = 0;
    for (const auto& [time_s, d] : changes) {
      rate += d;
      out[link].peak_utilisation = std::max(out[link].peak_utilisation, rate / p.links[link].bandwidth_Bps);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("an NPU without FP8 keeps an FP8 peak of 0 and refuses an fp8 GEMM without a fallback") {
  const PlatformFacts p = two_npus(0, 2e14);
  Placement placement{{0, 1}, 2, {}};
  auto graph = one_compute_task(2, 2, Dtype::kFp8, {1e12, 1e12}, {0, 0});
  CHECK(peak_flops_per_s(p.npus[0], Dtype::kFp8) == 0);
  CHECK(peak_flops_per_s(p.npus[0], Dtype::kInt8) == 2e14);
  CHECK_THROWS_WITH(check_compute_dtypes(p, placement, graph, std::nullopt, "a2.xml"),
                    "a2.xml: error: precision.gemm: fp8 GEMMs need an fp8 peak, and host node0.npu0 has none (no "
                    "flops_fp8 property); set precision.gemm_fallback = \"bf16\" in the workload to run them at the "
                    "BF16 peak");
  // An int8 GEMM runs at the int8 peak, never at an fp8 one.
  auto int8 = one_compute_task(2, 2, Dtype::kInt8, {1e12, 1e12}, {0, 0});
  CHECK(check_compute_dtypes(p, placement, int8, std::nullopt, "a2.xml").empty());
  ReplayOptions options = resolve({}, p, placement);
  CHECK(step_bounds(p, placement, int8, options).step_s == Approx(1e12 / 2e14).epsilon(1e-12));
}

TEST_CASE("with precision.gemm_fallback an fp8 GEMM is bounded at the fallback's peak and the substitution is listed") {
  const PlatformFacts p = two_npus(0, 2e14);
  Placement placement{{0, 1}, 2, {}};
  auto graph = one_compute_task(2, 2, Dtype::kFp8, {1e12, 3e12}, {0, 0});
  std::vector<DtypeFallback> f = check_compute_dtypes(p, placement, graph, Dtype::kBf16, "a2.xml");
  REQUIRE(f.size() == 1);
  CHECK(f[0].wanted == Dtype::kFp8);
  CHECK(f[0].used == Dtype::kBf16);
  CHECK(f[0].host == "node0.npu0");
  ReplayOptions options = resolve({}, p, placement);
  options.compute_fallback = Dtype::kBf16;
  CHECK(step_bounds(p, placement, graph, options).step_s == Approx(3e12 / 1e14).epsilon(1e-12));
  // A fallback the NPU lacks too is refused, naming the fallback key.
  CHECK_THROWS_WITH(check_compute_dtypes(two_npus(0, 0), placement, graph, Dtype::kInt8, "x.xml"),
                    "x.xml: error: precision.gemm_fallback: fp8 GEMMs need an fp8 peak, and host node0.npu0 has none "
                    "(no flops_fp8 property), and no int8 peak either");
}

TEST_CASE("the replay runs an fp8 GEMM at the BF16 peak on an NPU without FP8 when the workload says so") {
  auto graph = one_compute_task(2, 2, Dtype::kFp8, {1e12, 4e12}, {1e9, 1e9});
  ReplayOptions options;
  options.compute_fallback = Dtype::kBf16;
  Simulation s = simulate(platform_path("two_nodes_int8"), graph, options);
  // 4e12 FLOPs at the 1e14 BF16 peak: 40 ms (not 10 ms at the 4e14 INT8 peak).
  CHECK(s.timeline.step_s == Approx(4e12 / 1e14).epsilon(1e-9));
  CHECK(s.bounds.step_s == Approx(4e12 / 1e14).epsilon(1e-9));
  REQUIRE(s.report.fallbacks.size() == 1);
  CHECK(format_table(s.report).find("fp8 GEMMs run at the bf16 peak: node0.npu0 has no fp8 peak "
                                    "(precision.gemm_fallback = \"bf16\")") != std::string::npos);
}

TEST_CASE("the replay refuses an fp8 GEMM on an NPU without FP8 when no fallback is declared") {
  auto graph = one_compute_task(2, 2, Dtype::kFp8, {1e12, 4e12}, {1e9, 1e9});
  CHECK_THROWS_AS(simulate(platform_path("two_nodes_int8"), graph), InputError);
}

TEST_CASE("the gap's parts sum to sim - bound exactly, under both schedules and every algorithm and fidelity") {
  MoeShape shape = sixteen_ranks(3, 0.3);
  shape.grad_all_reduce = true;
  const workloads::TaskGraph graph = moe_graph(shape);
  for (Schedule schedule : {Schedule::kSerial, Schedule::kOverlap}) {
    for (AlltoallAlgorithm a : {AlltoallAlgorithm::kDirect, AlltoallAlgorithm::kHierarchical})
    for (Fidelity f : {Fidelity::kPerFlow, Fidelity::kAggregated}) {
      const std::string out = in_child([&] {
        ReplayOptions options;
        options.schedule = schedule;
        options.algorithm = a;
        options.fidelity = f;
        Simulation s = simulate(platform_path("four_nodes"), graph, options);
        const GapParts& p = s.report.gap;
        return fmt::format("{:.17g} {:.17g} {:.17g} {:.17g} {:.17g} {}", s.timeline.step_s - s.bounds.step_s,
                           p.total_s(), p.comm_excess_s, p.idle_s, s.timeline.step_s, p.path_tasks);
      });
      INFO(to_string(schedule) << " " << to_string(a) << " " << to_string(f) << ": " << out);
      double gap = 0, total = 0, contention = 0, idle = 0, step = 0;
      int tasks = 0;
      REQUIRE(std::sscanf(out.c_str(), "%lf %lf %lf %lf %lf %d", &gap, &total, &contention, &idle, &step, &tasks) == 6);
      CHECK(gap >= -1e-9 * step);
      CHECK(std::fabs(total - gap) <= 1e-9 * step);
      CHECK(contention >= -1e-9 * step);
      CHECK(idle >= -1e-9 * step);
      // The path covers at least one layer's chain: attention, gate, dispatch, experts, combine.
      CHECK(tasks >= 5);
    }
  }
}

TEST_CASE("a task alone has no gap and a path of one task") {
  auto graph = one_compute_task(2, 2, Dtype::kBf16, {1e12, 4e12}, {1e9, 1e9});
  Simulation s = simulate(platform_path("two_nodes"), graph);
  CHECK(s.report.gap.path_tasks == 1);
  CHECK(s.report.gap.end_rank == 1);
  CHECK(s.report.gap.path_compute_bound_s == Approx(4e12 / 1e14).epsilon(1e-12));
  CHECK(std::fabs(s.report.gap.total_s()) < 1e-15);
}

TEST_CASE("phase rows show the hot rank's max beside the mean and name it") {
  const workloads::TaskGraph graph = moe_graph(sixteen_ranks(5, 0.5));
  Simulation s = simulate(platform_path("four_nodes"), graph);
  const ReportRow& experts = phase(s.report, "expert GEMM");
  // The hot rank's expert GEMMs at their rooflines, summed independently of the report.
  double hot_s = 0;
  for (const workloads::Task& t : graph.tasks)
    if (t.kind == workloads::TaskKind::kExpertGemm)
      hot_s += roofline_s(s.platform.npus[s.placement.npu_of_rank[5]], t.dtype, t.flops[5], t.hbm_bytes[5]);
  CHECK(experts.max_rank == 5);
  CHECK(experts.sim_max_s == Approx(hot_s).epsilon(1e-9));
  CHECK(experts.bound_max_s == Approx(hot_s).epsilon(1e-9));
  CHECK(experts.sim_max_s > 3 * experts.sim_s);
  CHECK(experts.cause.find(fmt::format("skew: rank 5 x{:.3f} the mean", experts.sim_max_s / experts.sim_s)) !=
        std::string::npos);
  // Collectives: every participant spends the same span.
  const ReportRow& dispatch = phase(s.report, "dispatch fwd");
  CHECK(dispatch.max_rank == -1);
  CHECK(dispatch.sim_max_s == dispatch.sim_s);
  // Dispatch and combine have a row per direction, with what a rank sends
  // to others (own tokens excluded) and the rate it achieved.
  double sent = 0;
  for (const workloads::Task& t : graph.tasks) {
    if (t.kind != workloads::TaskKind::kDispatch || t.phase != workloads::Phase::kForward) continue;
    const workloads::TrafficMatrix& m = graph.traffic[static_cast<std::size_t>(t.traffic)];
    for (int src = 0; src < m.ranks; ++src)
      for (int dst = 0; dst < m.ranks; ++dst)
        if (src != dst) sent += static_cast<double>(m.at(src, dst)) * t.bytes_per_token / m.ranks;
  }
  CHECK(sent > 0);
  CHECK(dispatch.collective);
  CHECK(dispatch.bytes_per_rank == Approx(sent).epsilon(1e-12));
  CHECK(dispatch.achieved_Bps == Approx(sent / dispatch.sim_s).epsilon(1e-12));
  CHECK(phase(s.report, "combine fwd").collective);
  CHECK_FALSE(experts.collective);
  const std::string json = format_json(s.report);
  CHECK(json.find("\"sim_max_s\"") != std::string::npos);
  CHECK(json.find("\"max_rank\": 5") != std::string::npos);
}

TEST_CASE("a phase row names the first of the ranks whose times tie to rounding, and a rank clearly slower") {
  // Ranks 1 and 3 run the most work, rank 3 more by a part in 1e12 (a last-bit difference).
  // Each simulation in a child: the rank the row names, then its cause.
  const auto named = [](double rank3_scale) {
    return in_child([rank3_scale] {
      auto graph = one_compute_task(4, 2, Dtype::kBf16, {1e12, 2e12, 1e12, 2e12 * rank3_scale}, {1e9, 1e9, 1e9, 1e9});
      Simulation s = simulate(platform_path("two_nodes"), graph);
      const ReportRow& row = phase(s.report, "expert GEMM");
      return fmt::format("{} {}", row.max_rank, row.cause);
    });
  };
  const std::string tie = named(1 + 1e-12);
  CHECK(tie.rfind("1 ", 0) == 0);
  CHECK(tie.find("skew: rank 1 ") != std::string::npos);
  // A part in 1e6 is not rounding: the slower rank is named.
  CHECK(named(1 + 1e-6).rfind("3 ", 0) == 0);
}

TEST_CASE("idle time waiting at the all-to-alls for the hot rank is reported as load skew, apart from the bubble") {
  // Serial schedule, one hot rank: after each dispatch every rank runs its
  // experts, and the combine starts when the hot rank's are done; each
  // other rank waits the difference, idle. Summed over the expert GEMMs.
  const workloads::TaskGraph graph = moe_graph(sixteen_ranks(5, 0.5));
  ReplayOptions serial;
  serial.schedule = Schedule::kSerial;
  Simulation s = simulate(platform_path("four_nodes"), graph, serial);
  std::map<int, std::vector<double>> busy;  // expert GEMM task -> busy time per rank
  for (const Interval& iv : s.timeline.intervals) {
    if (graph.tasks[iv.task].kind != workloads::TaskKind::kExpertGemm) continue;
    std::vector<double>& b = busy[iv.task];
    b.resize(static_cast<std::size_t>(graph.ranks), 0.0);
    b[static_cast<std::size_t>(iv.rank)] += iv.end_s - iv.start_s;
  }
  double expected = 0;
  for (const auto& [task, b] : busy) {
    const double max_s = *std::max_element(b.begin(), b.end());
    for (double x : b) expected += (max_s - x) / graph.ranks;
  }
  const Report& r = s.report;
  REQUIRE(expected > 0);
  CHECK(r.idle_skew_mean_s == Approx(expected).epsilon(1e-9));
  CHECK(r.idle_pipeline_mean_s == 0);  // one stage, no pipeline
  CHECK(r.idle_skew_mean_s <= r.idle_mean_s * (1 + 1e-12));
  const std::string table = format_table(r);
  CHECK(table.find("    load skew ") != std::string::npos);
  CHECK(format_json(r).find("\"idle_skew_mean_s\"") != std::string::npos);
}

TEST_CASE("the layer straggler follows hot experts that move from layer to layer") {
  // tiny-moe: 8 ranks, 4 experts each, MoE layers 1..3. With hot_placement
  // "first" and order "per_layer", MoE layer m's hottest experts sit on rank m.
  const workloads::WorkloadSpec w = workloads::load_workload("tiny-moe", {"routing.hot_placement=first"});
  const workloads::TaskGraph graph = workloads::build_task_graph(w);
  Simulation s = simulate(platform_path("four_nodes"), graph);
  const Report& r = s.report;
  REQUIRE(r.layer_straggler_layer >= 1);
  CHECK(r.layer_straggler_rank == r.layer_straggler_layer - 1);
  CHECK(r.layer_straggler_compute_s > r.layer_mean_compute_s * 1.1);
  CHECK(format_table(r).find(fmt::format("layer: rank {} in layer {} computes", r.layer_straggler_rank,
                                         r.layer_straggler_layer)) != std::string::npos);
}

TEST_CASE("link counters never exceed 100 % and keep every byte (per-flow rounds ended by their first flow did)") {
  // Before counters followed sampled progress, this case showed NIC counters
  // up to 1918 % (a per-flow round's bytes spread over its first flow only).
  const workloads::WorkloadSpec w = workloads::load_workload("tiny-moe");
  const workloads::TaskGraph graph = workloads::build_task_graph(w);
  ReplayOptions options;
  options.algorithm = AlltoallAlgorithm::kDirect;
  options.fidelity = Fidelity::kPerFlow;
  Simulation s = simulate(platform_path("four_nodes"), graph, options);
  const std::map<int, LinkLoad> loads = link_loads(s.timeline, s.platform);
  REQUIRE(!loads.empty());
  double busiest = 0;
  for (const auto& [link, load] : loads) {
    INFO(s.platform.links[link].name);
    CHECK(load.peak_utilisation <= 1 + 1e-9);
    CHECK(load.bytes == Approx(s.timeline.link_bytes[link]).epsilon(1e-9));
    busiest = std::max(busiest, load.peak_utilisation);
  }
  CHECK(busiest > 0.999);  // some NIC runs flat out
  // The trace's counters, as written.
  std::ostringstream trace;
  write_trace(trace, s.timeline, s.platform, s.placement, graph);
  const std::string text = trace.str();
  const std::string key = "\"utilisation\":";
  int counters = 0;
  for (std::size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1), ++counters)
    CHECK(std::stod(text.substr(at + key.size())) <= 1.0 + 1e-6);
  CHECK(counters > 0);
}

TEST_CASE("HBM counters stay within 100 % while compute and communication share the HBM") {
  // A skewed step with its HBM shared by roofline kernels and transfers.
  const workloads::TaskGraph graph = moe_graph(sixteen_ranks(5, 0.5));
  Simulation s = simulate(platform_path("four_nodes"), graph);
  for (const auto& [link, load] : link_loads(s.timeline, s.platform)) {
    INFO(s.platform.links[link].name);
    CHECK(load.peak_utilisation <= 1 + 1e-9);
  }
}

TEST_CASE("trace slices of a collective carry the bytes the rank sends and its peers; the critical path is arrows") {
  const workloads::TaskGraph graph = moe_graph(sixteen_ranks(5, 0.5));
  Simulation s = simulate(platform_path("four_nodes"), graph);
  TraceOptions options;
  options.critical_path = s.report.gap.path_intervals;
  REQUIRE(options.critical_path.size() == static_cast<std::size_t>(s.report.gap.path_tasks));
  std::ostringstream out;
  write_trace(out, s.timeline, s.platform, s.placement, graph, options);
  const nlohmann::json trace = nlohmann::json::parse(out.str());
  CHECK(trace["otherData"]["task_kinds"].size() == static_cast<std::size_t>(kTaskKinds));
  CHECK(trace["otherData"]["task_kinds"][9] == "pipeline p2p");
  int checked = 0, starts = 0, finishes = 0;
  std::map<std::pair<int, int>, int> rank_of;  // track -> rank, from the tracks' metadata
  for (const nlohmann::json& e : trace["traceEvents"]) {
    starts += e["ph"] == "s";
    finishes += e["ph"] == "f";
    if (e["ph"] == "M" && e["name"] == "thread_name") rank_of[{e["pid"], e["tid"]}] = e["args"]["rank"];
  }
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e["ph"] != "X" || e.value("cat", "") != "comm" || checked == 20) continue;
    // The rank's row of its traffic matrix, its own tokens excluded, counted here.
    const workloads::Task& t = graph.tasks[e["args"]["task"].get<std::size_t>()];
    if (!t.uses_traffic() || !t.groups.empty()) continue;
    const int rank = rank_of.at({e["pid"], e["tid"]});
    const workloads::TrafficMatrix& m = graph.traffic[static_cast<std::size_t>(t.traffic)];
    double bytes = 0;
    int peers = 0;
    for (int dst = 0; dst < m.ranks; ++dst)
      if (dst != rank && m.at(rank, dst) > 0) {
        bytes += static_cast<double>(m.at(rank, dst)) * t.bytes_per_token;
        ++peers;
      }
    CHECK(e["args"]["bytes"].get<double>() == Approx(bytes).epsilon(1e-12));
    CHECK(e["args"]["peers"].get<int>() == peers);
    ++checked;
  }
  CHECK(checked == 20);
  // One arrow (start and finish) between consecutive intervals of the path.
  CHECK(starts == static_cast<int>(options.critical_path.size()) - 1);
  CHECK(finishes == starts);
}

TEST_CASE("trace counters pick the most utilised links, not the ones with most bytes") {
  // Two leaves of two nodes: the leaf-spine links carry the most bytes at
  // many times a NIC's bandwidth, and never bind.
  const workloads::WorkloadSpec w = workloads::load_workload("tiny-moe");
  const workloads::TaskGraph graph = workloads::build_task_graph(w);
  Simulation s = simulate(PlatformRequest{"a2", {"scaleout.nodes_per_leaf=2"}}, graph);
  TraceOptions options;
  options.counter_links = 3;
  options.counter_hbms = 0;
  std::ostringstream trace;
  write_trace(trace, s.timeline, s.platform, s.placement, graph, options);
  // Network links by bytes / bandwidth, computed here.
  std::vector<bool> is_hbm(s.platform.links.size(), false);
  for (const NpuFacts& n : s.platform.npus) is_hbm[n.hbm_link] = true;
  std::vector<std::pair<double, std::string>> by_busy;
  for (std::size_t l = 0; l < s.platform.links.size(); ++l)
    if (!is_hbm[l] && s.timeline.link_bytes[l] > 0)
      by_busy.emplace_back(-s.timeline.link_bytes[l] / s.platform.links[l].bandwidth_Bps, s.platform.links[l].name);
  std::sort(by_busy.begin(), by_busy.end());
  REQUIRE(by_busy.size() > 3);
  // The premise: by bytes alone another link would make the top 3.
  std::vector<std::pair<double, std::string>> by_bytes;
  for (std::size_t l = 0; l < s.platform.links.size(); ++l)
    if (!is_hbm[l] && s.timeline.link_bytes[l] > 0) by_bytes.emplace_back(-s.timeline.link_bytes[l], s.platform.links[l].name);
  std::sort(by_bytes.begin(), by_bytes.end());
  std::vector<std::string> top_busy, top_bytes;
  for (int i = 0; i < 3; ++i) {
    top_busy.push_back(by_busy[i].second);
    top_bytes.push_back(by_bytes[i].second);
  }
  std::sort(top_busy.begin(), top_busy.end());
  std::sort(top_bytes.begin(), top_bytes.end());
  CHECK(top_busy != top_bytes);
  const std::string text = trace.str();
  for (int i = 0; i < 3; ++i) CHECK(text.find("\"name\":\"" + by_busy[i].second + "\"") != std::string::npos);
  CHECK(text.find("\"name\":\"" + by_busy[3].second + "\"") == std::string::npos);
}

TEST_CASE("the report's header and JSON name the scenario and the version") {
  auto graph = one_compute_task(2, 2, Dtype::kBf16, {1e12, 4e12}, {1e9, 1e9});
  Scenario scenario{"tests/sim/platforms/two_nodes.xml", "", "", "tiny.toml", "tiny", 2, 2, 2, 7, {"routing.seed=7"}};
  Simulation s = simulate(platform_path("two_nodes"), graph, {}, {}, scenario);
  const std::string table = format_table(s.report);
  CHECK(table.rfind(fmt::format("epsim {} run report\n", epsim_version()), 0) == 0);
  CHECK(table.find("  platform   tests/sim/platforms/two_nodes.xml (2 nodes)\n") != std::string::npos);
  CHECK(table.find("  workload   tiny.toml (model tiny), routing seed 7\n") != std::string::npos);
  CHECK(table.find("  layout     TP 1 x DP 2 x PP 1 = 2 ranks, a stage's EP 2 x ETP 1 x EDP 1, 2 ranks per node, on 1 "
                   "of 2 nodes\n") != std::string::npos);
  // Without a batch there is no batch line and no throughput.
  CHECK(table.find("  batch ") == std::string::npos);
  CHECK(!s.report.has_throughput);
  CHECK(table.find("  overrides  --set routing.seed=7\n") != std::string::npos);
  const std::string json = format_json(s.report);
  CHECK(json.find(fmt::format("\"epsim_version\": \"{}\"", epsim_version())) != std::string::npos);
  CHECK(json.find("\"workload\": \"tiny.toml\"") != std::string::npos);
  CHECK(json.find("\"seed\": 7") != std::string::npos);
  CHECK(json.find("\"nodes\": 1") != std::string::npos);
  CHECK(json.find("\"throughput\"") == std::string::npos);
  // The version is the CMake project's.
  std::ifstream cmake(std::string(EPSIM_SOURCE_DIR) + "/CMakeLists.txt");
  std::stringstream text;
  text << cmake.rdbuf();
  CHECK(text.str().find(fmt::format("project(epsim VERSION {} ", epsim_version())) != std::string::npos);
}

TEST_CASE("throughput: tokens per step over the step time, model FLOPs per NPU against the mean peak") {
  auto graph = one_compute_task(2, 2, Dtype::kBf16, {1e12, 4e12}, {1e9, 1e9});
  Scenario scenario{"tests/sim/platforms/two_nodes.xml", "", "", "tiny.toml", "tiny", 2, 2, 2, 7, {}};
  scenario.global_batch = 8;
  scenario.micro_batch = 2;
  scenario.micro_batches = 2;
  scenario.sequence_length = 1024;
  scenario.model_flops_per_token = 3e9;
  scenario.active_params = 5e8;
  Simulation s = simulate(platform_path("two_nodes"), graph, {}, {}, scenario);
  REQUIRE(s.report.has_throughput);
  const Throughput& t = s.report.throughput;
  const double step_s = s.report.step.sim_s;
  const double peak = s.platform.npus[0].flops_bf16_per_s;
  CHECK(t.tokens_per_step == 8192);
  CHECK(t.tokens_per_s == Approx(8192 / step_s).epsilon(1e-12));
  CHECK(t.tokens_per_s_per_npu == Approx(4096 / step_s).epsilon(1e-12));
  CHECK(t.model_flops_per_s_per_npu == Approx(3e9 * 4096 / step_s).epsilon(1e-12));
  CHECK(t.peak_flops_per_s_per_npu == Approx(peak).epsilon(1e-12));
  CHECK(t.mfu == Approx(3e9 * 4096 / step_s / peak).epsilon(1e-12));
  const std::string table = format_table(s.report);
  CHECK(table.find("  batch      8 sequences x 1024 tokens per step: 2 micro-batches of 2 sequences per DP rank\n") !=
        std::string::npos);
  const std::string json = format_json(s.report);
  for (const char* key : {"\"tokens_per_s\"", "\"tokens_per_s_per_npu\"", "\"model_flops_per_s_per_npu\"", "\"mfu\""})
    CHECK(json.find(key) != std::string::npos);
}
