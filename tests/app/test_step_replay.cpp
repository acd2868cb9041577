// The exact reductions (docs/simulator.md, "Exact reductions") against the
// full replay they stand for, on layouts small enough to replay both ways
// on one engine: a stage's identical EP groups replayed once, and a
// pipeline's steady state carried in closed form, for one stage, 1F1B,
// interleaved and DualPipe. "Identical" is made exact here: every EP group (and, for the
// steady state, every micro-batch) draws the routing of the first, so the
// reduced step must equal the full one to rounding. With routing drawn per
// group and micro-batch the two differ by sampling (checked at the end).
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "app/step_replay.hpp"
#include "sim/platform/platform_loader.hpp"
#include "workloads/replica_fold.hpp"
#include "workloads/routing_sampler.hpp"
#include "workloads/task_graph_builder.hpp"
#include "workloads/workload_loader.hpp"

using namespace epsim;

namespace {

struct Layout {
  const char* schedule;
  int vpp;
  int micro_batches;
  int pp = 2;
  bool a2a_overlap = false;  // Megatron's 1F1B all-to-all overlap
  // The stack's NCCL costs per call (launch, per peer) on pipeline transfers
  // and gradient syncs. They lengthen the pipeline's transient beyond the
  // short replays: exactness is checked without them, closeness with them.
  bool library_costs = false;
};

// tiny-moe (2 ranks per node) as pp stages (2: 16 nodes; 4: 32) of two EP
// groups of 8, with one dense and two MoE layers per stage.
workloads::WorkloadSpec spec(const Layout& l) {
  std::vector<std::string> set = {"model.layers=" + std::to_string(2 * l.pp + 1),
                                  "parallel.pp=" + std::to_string(l.pp),
                                  "parallel.dp=16",
                                  "parallel.vpp=" + std::to_string(l.vpp),
                                  std::string("parallel.schedule=\"") + l.schedule + "\"",
                                  "parallel.micro_batches=" + std::to_string(l.micro_batches),
                                  std::string("parallel.moe_a2a_overlap=") + (l.a2a_overlap ? "true" : "false")};
  return workloads::load_workload("tiny-moe", set);
}

// `w`'s routing with every micro-batch and EP group drawing what the first
// group draws in micro-batch 0 (or, without `same_micro_batches`, what the
// first group draws in that micro-batch).
workloads::RoutingSample alike(const workloads::WorkloadSpec& w, bool same_micro_batches) {
  const workloads::WorkloadSpec one = w.parallel.edp() > 1 ? workloads::fold_replicas(w) : w;
  const workloads::RoutingSample drawn = workloads::sample_routing(one);
  const int groups = w.parallel.ranks() / one.parallel.ranks();
  workloads::RoutingSample out = drawn;
  out.ranks = w.parallel.ranks();
  for (int layer = 0; layer < w.model.moe_layers(); ++layer)
    for (int mb = 0; mb < w.parallel.micro_batches; ++mb) {
      const workloads::LayerRouting& src = drawn.at(layer, same_micro_batches ? 0 : mb);
      workloads::LayerRouting& dst = out.layers[static_cast<std::size_t>(layer * w.parallel.micro_batches + mb)];
      dst = src;
      dst.micro_batch = mb;
      const workloads::TrafficMatrix& m = src.traffic;
      workloads::TrafficMatrix& t = dst.traffic;
      t.ranks = m.ranks * groups;
      t.tokens.assign(static_cast<std::size_t>(t.ranks) * t.ranks, 0);
      t.node_tokens.assign(static_cast<std::size_t>(t.ranks) * t.nodes(), 0);
      dst.expert_tokens.clear();
      for (int g = 0; g < groups; ++g) {
        for (int s = 0; s < m.ranks; ++s) {
          for (int d = 0; d < m.ranks; ++d)
            t.tokens[static_cast<std::size_t>(g * m.ranks + s) * t.ranks + g * m.ranks + d] = m.at(s, d);
          for (int n = 0; n < m.nodes(); ++n)
            t.node_tokens[static_cast<std::size_t>(g * m.ranks + s) * t.nodes() + g * m.nodes() + n] = m.to_node(s, n);
        }
        dst.expert_tokens.insert(dst.expert_tokens.end(), src.expert_tokens.begin(), src.expert_tokens.end());
      }
    }
  return out;
}

// One replay of `graph` on the open platform (its options resolved there first).
sim::Simulation replay(sim::OpenPlatform& open, const workloads::TaskGraph& graph) {
  const sim::ReplayOptions options = sim::resolve_for(open.loaded, graph, {});
  return sim::simulate_on(open, graph, options);
}

sim::OpenPlatform h800(const Layout& l) {
  std::vector<std::string> set = {"node.count=" + std::to_string(8 * l.pp)};
  if (!l.library_costs) set.insert(set.end(), {"stack.collectives.launch=0us", "stack.collectives.peer_cost=0us"});
  return sim::open_platform(sim::PlatformRequest{"h800", set});
}


// The full step of identical EP groups, then the kept group's, on one engine.
void check_fold(const Layout& l) {
  const workloads::WorkloadSpec w = spec(l);
  REQUIRE(workloads::fold_refusal(w.parallel).empty());
  const workloads::WorkloadSpec folded = workloads::fold_replicas(w);
  CHECK(folded.parallel.folded_replicas == 2);
  const workloads::TaskGraph full = workloads::build_task_graph(w, alike(w, false));
  const workloads::TaskGraph kept = workloads::build_task_graph(folded, workloads::sample_routing(folded));
  CHECK(kept.ranks * 2 == full.ranks);
  CHECK(kept.ranks + kept.phantom_ranks() == full.ranks);
  sim::OpenPlatform open = h800(l);
  const double full_s = replay(open, full).report.step.sim_s;  // before the fold shares any link
  const sim::Simulation reduced = replay(open, kept);
  CHECK(reduced.report.step.sim_s == Approx(full_s).epsilon(1e-9));
  CHECK(reduced.report.step.sim_s > 0);
}

// The carried report against the full replay's, figure by figure: the
// means, and the maxima and the ranks and links they name, which are
// carried per rank and per link (a maximum carried as a maximum mixes two
// ranks). `exact`: to rounding, the ranks named alike; otherwise within
// 0.5 % of the step (DualPipe: the step is exact, but which kernels a
// dispatch or combine slows in the pairs around the inserted micro-batches
// is not, so times move between rows and ranks), and always consistent:
// every max at least its mean, the links by utilisation.
void check_carried_report(const sim::Report& carried, const sim::Report& whole, bool exact) {
  const double margin = (exact ? 1e-9 : 5e-3) * whole.step.sim_s;
  REQUIRE(carried.phases.size() == whole.phases.size());
  for (std::size_t i = 0; i < whole.phases.size(); ++i) {
    const sim::ReportRow& c = carried.phases[i];
    const sim::ReportRow& f = whole.phases[i];
    INFO(f.name);
    CHECK(c.name == f.name);
    CHECK(c.sim_s == Approx(f.sim_s).margin(margin));
    CHECK(c.sim_max_s == Approx(f.sim_max_s).margin(margin));
    CHECK(c.sim_max_s >= c.sim_s * (1 - 1e-12));
    CHECK(c.bound_s == Approx(f.bound_s).margin(margin));
    CHECK(c.bound_max_s == Approx(f.bound_max_s).margin(margin));
    if (exact) CHECK(c.max_rank == f.max_rank);
    CHECK(c.ranks_running == f.ranks_running);
    CHECK(c.bytes_per_rank == Approx(f.bytes_per_rank).epsilon(1e-9));
  }
  if (exact) CHECK(carried.straggler_rank == whole.straggler_rank);
  CHECK(carried.straggler_compute_s >= carried.mean_compute_s);
  CHECK(carried.straggler_compute_s == Approx(whole.straggler_compute_s).margin(margin));
  CHECK(carried.mean_compute_s == Approx(whole.mean_compute_s).margin(margin));
  if (exact) {
    CHECK(carried.layer_straggler_layer == whole.layer_straggler_layer);
    CHECK(carried.layer_straggler_rank == whole.layer_straggler_rank);
  }
  CHECK(carried.layer_straggler_compute_s == Approx(whole.layer_straggler_compute_s).margin(margin));
  CHECK(carried.layer_mean_compute_s == Approx(whole.layer_mean_compute_s).margin(margin));
  CHECK(carried.layer_straggler_compute_s >= carried.layer_mean_compute_s);
  CHECK(carried.exposed_comm_mean_s == Approx(whole.exposed_comm_mean_s).margin(margin));
  CHECK(carried.exposed_comm_max_s == Approx(whole.exposed_comm_max_s).margin(margin));
  CHECK(carried.idle_mean_s == Approx(whole.idle_mean_s).margin(margin));
  CHECK(carried.idle_max_s == Approx(whole.idle_max_s).margin(margin));
  CHECK(carried.idle_skew_mean_s == Approx(whole.idle_skew_mean_s).margin(margin));
  CHECK(carried.idle_pipeline_mean_s == Approx(whole.idle_pipeline_mean_s).margin(margin));
  CHECK(carried.idle_skew_mean_s + carried.idle_pipeline_mean_s <= carried.idle_mean_s + margin);
  CHECK(carried.idle_max_s >= carried.idle_mean_s);
  CHECK(carried.exposed_comm_max_s >= carried.exposed_comm_mean_s);
  REQUIRE(carried.busiest_links.size() == whole.busiest_links.size());
  for (std::size_t i = 0; i < whole.busiest_links.size(); ++i) {
    INFO(whole.busiest_links[i].link);
    CHECK(carried.busiest_links[i].bytes == Approx(whole.busiest_links[i].bytes).epsilon(1e-9));
    // Bytes over the step: as close as the carried step (exact, or within 1e-5).
    CHECK(carried.busiest_links[i].utilisation == Approx(whole.busiest_links[i].utilisation).epsilon(exact ? 1e-9 : 1e-5));
    if (i > 0) CHECK(carried.busiest_links[i].utilisation <= carried.busiest_links[i - 1].utilisation);
  }
}

// The full step of identical micro-batches, then the steady state's two
// short replays carried to it, on one engine: with the fold (one EP group
// per stage), the step; without it, the whole report, whose ranks and
// links are then the full replay's.
void check_steady(const Layout& l) {
  const workloads::WorkloadSpec w = spec(l);
  const app::StepPlan folded = app::plan_step(w, app::Exactness::kAuto);
  REQUIRE(folded.steady);
  sim::OpenPlatform open = h800(l);
  const workloads::TaskGraph full = workloads::build_task_graph(w, alike(w, true));
  const sim::Report whole = replay(open, full).report;
  bool resolved = false;
  sim::ReplayOptions options;
  const app::ReplaySpec short_replay = [&](const workloads::WorkloadSpec& s, const sim::Scenario& about) {
    app::Replayed run;
    run.graph = workloads::build_task_graph(s, alike(s, true));
    if (!resolved) options = sim::resolve_for(open.loaded, run.graph, {});
    resolved = true;
    run.simulation = sim::simulate_on(open, run.graph, options, about);
    return run;
  };
  app::StepPlan unfolded = folded;
  unfolded.replayed = w;
  unfolded.reduction.replicas = 1;
  for (const bool fold : {true, false}) {
    const app::StepPlan& plan = fold ? folded : unfolded;
    const app::Replayed step = app::replay_step(w, plan, {}, short_replay, open.loaded.facts);
    const sim::Reduction& r = step.simulation.report.reduction;
    if (!r.off.empty()) std::fprintf(stderr, "%s\n", r.off.c_str());
    REQUIRE(r.micro_batches_b == plan.steady->first + plan.steady->delta);
    CHECK(step.simulation.report.step.sim_s == Approx(whole.step.sim_s).epsilon(l.library_costs ? 1e-5 : 1e-9));
    if (!fold)
      check_carried_report(step.simulation.report, whole, std::string(l.schedule) != "dualpipe" && !l.library_costs);
  }
}

}  // namespace

TEST_CASE("one EP group per stage replays the step of identical groups exactly: 1F1B") { check_fold({"1f1b", 1, 6}); }
TEST_CASE("one EP group per stage replays the step of identical groups exactly: interleaved") {
  check_fold({"interleaved", 2, 4});
}
TEST_CASE("one EP group per stage replays the step of identical groups exactly: DualPipe") {
  check_fold({"dualpipe", 1, 4});
}

TEST_CASE("the steady state carried from two short replays is the step of identical micro-batches: 1F1B") {
  check_steady({"1f1b", 1, 12});
}
TEST_CASE("the steady state carried from two short replays is the step of identical micro-batches: one stage") {
  check_steady({"1f1b", 1, 12, 1});  // 1F1B at pp 1: micro-batches one after another, replayed as 2 and 4
}
TEST_CASE("the steady state carried from two short replays is the step of identical micro-batches: interleaved") {
  check_steady({"interleaved", 2, 16});
}
TEST_CASE("the steady state carried from two short replays is the step of identical micro-batches: DualPipe") {
  check_steady({"dualpipe", 1, 16});
}
TEST_CASE("the steady state carried from two short replays is the step of identical micro-batches: DualPipe, 4 stages") {
  check_steady({"dualpipe", 1, 24, 4});
}
TEST_CASE("the steady state carried from two short replays is the step of identical micro-batches: 1F1B, 4 stages") {
  check_steady({"1f1b", 1, 20, 4});
}
TEST_CASE("with NCCL's costs per call the steady state carried is the step within 1e-5, its rows within 0.5 %") {
  check_steady({"1f1b", 1, 20, 4, false, true});  // the preset's stack as shipped: 2.4e-7 of the step
}
TEST_CASE("the steady state carried from two short replays is the step of identical micro-batches: interleaved, 4 stages") {
  check_steady({"interleaved", 2, 40, 4});
}
TEST_CASE("the steady state carried from two short replays is the step of identical micro-batches: one stage, A2A overlap") {
  check_steady({"1f1b", 1, 12, 1, true});  // F0, F1&B0, ...: replayed as 4 and 6
}
TEST_CASE("the steady state carried from two short replays is the step of identical micro-batches: interleaved, A2A overlap") {
  check_steady({"interleaved", 2, 40, 4, true});
}
TEST_CASE("one EP group per stage replays the step of identical groups exactly: interleaved, A2A overlap") {
  check_fold({"interleaved", 2, 4, 2, true});
}
