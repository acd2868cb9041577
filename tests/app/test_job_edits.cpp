// app/'s typed requests reach the workload as typed edits: run's --ep reads
// as the --set it equals, the collective's edits are reported at the options
// they come from, a plan's layout is the workload its edits make. None of
// these simulates (every error comes before SimGrid starts).
#include <functional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "app/collective_job.hpp"
#include "app/plan_candidates.hpp"
#include "app/run_job.hpp"
#include "app/serving_layouts.hpp"
#include "workloads/workload_loader.hpp"

using namespace epsim;

namespace {

std::string verdict(const std::function<void()>& job) {
  try {
    job();
    return "";
  } catch (const InputError& e) {
    return e.what();
  }
}

}  // namespace

TEST_CASE("run's --ep is refused with the text of the --set it equals", "[app][edits]") {
  struct Row {
    int ep;
    const char* error;
  };
  for (const Row& row : {Row{3, "--set parallel.ep=3: error: parallel.ep: model.experts (256) is not divisible by "
                                "parallel.ep (3), unless routing.redundant_experts = 2 fills every rank to 86 expert "
                                "slots"},
                         Row{48, "--set parallel.ep=48: error: parallel.ep: model.experts (256) is not divisible by "
                                 "parallel.ep (48), unless routing.redundant_experts = 32 fills every rank to 6 expert "
                                 "slots"}}) {
    app::RunRequest by_option;
    by_option.platform = "a2";
    by_option.workload = "deepseek-v3";
    by_option.ep = row.ep;
    app::RunRequest by_set = by_option;
    by_set.ep.reset();
    by_set.overrides = {"parallel.ep=" + std::to_string(row.ep)};
    CHECK(verdict([&] { app::load_job_workload(by_option); }) == row.error);
    CHECK(verdict([&] { app::load_job_workload(by_set); }) == row.error);
  }
}

TEST_CASE("run's options are set after the user's --set and the request's edits", "[app][edits]") {
  app::RunRequest r;
  r.platform = "a2";
  r.workload = "tiny-moe";
  r.overrides = {"routing.seed=3", "parallel.ep=16"};
  r.edits.ep = workloads::Edit<int>{8, ""};
  r.seed = 11;
  const workloads::WorkloadSpec w = app::load_job_workload(r);
  CHECK(w.parallel.ep == 8);      // the edit over the --set
  CHECK(w.routing.seed == 11);    // --seed over both
  CHECK_FALSE(w.memory.allow_oversubscribed);
}

TEST_CASE("the collective's edits are refused at the options they come from", "[app][edits]") {
  struct Row {
    const char* name;
    std::function<void(app::CollectiveRequest&)> set;
    const char* error;
  };
  const Row rows[] = {
      {"top-k above the experts", [](app::CollectiveRequest& r) {
         r.experts = 8;
         r.top_k = 9;
       },
       "error: --top-k: model.top_k: must be <= model.experts (8), got 9"},
      {"the user's --set keeps its place",
       [](app::CollectiveRequest& r) {
         r.experts = 8;
         r.overrides = {"model.top_k=9"};
       },
       "--set model.top_k=9: error: model.top_k: must be <= model.experts (8), got 9"},
      {"a routing kind whose parameters the workload lacks", [](app::CollectiveRequest& r) { r.routing = "zipf"; },
       "error: --routing: zipf deepseek-v3 needs routing.zipf_s: add --set routing.zipf_s=VALUE"},
      {"one EP group of --npus ranks", [](app::CollectiveRequest& r) { r.npus = 3; },
       "error: --npus: parallel.ep: model.experts (256) is not divisible by parallel.ep (3), unless routing.redundant_experts = 2 fills every rank to 86 expert slots"},
      {"a micro-batch of --tokens the sampler refuses", [](app::CollectiveRequest& r) { r.tokens = {20000000}; },
       "error: --tokens: parallel.micro_batch: micro_batch x sequence_length = 1 x 20000000 tokens per micro-batch "
       "exceeds 16777216 (the sampler draws every token of every layer: minutes beyond that)"},
  };
  for (const Row& row : rows) {
    INFO(row.name);
    app::CollectiveRequest r;
    r.platform = "tests/tools/collective/single_switch.toml";
    r.op = sim::CollectiveOp::kAllToAllv;
    r.npus = 8;
    row.set(r);  // single_switch is one node of 8 NPUs: --npus 3 is placed, and reaches the workload
    CHECK(verdict([&] { app::run_collective_job(r); }) == row.error);
  }
}

TEST_CASE("a plan's layout is the workload its edits make", "[app][edits][plan]") {
  app::PlanLayout l;
  l.pp = 2;
  l.ep = 8;
  l.dp = 8;
  l.global_batch = 32;
  l.schedule = workloads::PipelineSchedule::kDualPipe;
  l.recompute = workloads::Recompute::kSelective;
  l.zero_stage = 1;
  const workloads::WorkloadSpec w = workloads::load_workload("tiny-moe", {"parallel.ep=32"}, l.edits());
  CHECK(w.parallel.pp == 2);
  CHECK(w.parallel.ep == 8);
  CHECK(w.parallel.dp == 8);
  CHECK(w.parallel.world() == 16);  // tp 1 x dp 8 x pp 2
  CHECK(w.parallel.micro_batches == 4);  // 32 sequences / (mb 1 x dp 8)
  CHECK(w.parallel.schedule == workloads::PipelineSchedule::kDualPipe);
  CHECK(w.memory.recompute == workloads::Recompute::kSelective);
  CHECK(w.memory.zero_stage == 1);
  // A layout the loader refuses names the key the plan counts it under.
  l.global_batch = 24;  // 3 micro-batches: DualPipe needs an even number
  try {
    workloads::load_workload("tiny-moe", {}, l.edits());
    FAIL("expected a refusal");
  } catch (const InputError& e) {
    CHECK(e.key() == "parallel.global_batch");
  }
}

TEST_CASE("a serving layout keeps the workload's redundant experts where they fill whole slots", "[app][serve]") {
  struct Row {
    int experts, redundant, ep, expected;
  };
  // DeepSeek-V3's 256 experts with the decode preset's 32 replicas: EP72 (SGLang) and EP144 (Day 6) keep
  // them, EP128 and EP256 need none, EP320 (CloudMatrix-Infer's dies) fills one slot per die with 64.
  for (const Row& row : {Row{256, 32, 144, 32}, Row{256, 32, 72, 32}, Row{256, 32, 32, 32}, Row{256, 32, 128, 0},
                         Row{256, 32, 256, 0}, Row{256, 32, 320, 64}, Row{256, 0, 72, 32}, Row{16, 0, 16, 0},
                         Row{16, 0, 24, 8}}) {
    INFO(row.experts << " experts, " << row.redundant << " redundant, EP" << row.ep);
    const int r = app::redundant_experts_for(row.experts, row.redundant, row.ep);
    CHECK(r == row.expected);
    CHECK((row.experts + r) % row.ep == 0);
  }
}

TEST_CASE("a serving layout search refuses what it sets and layouts that cannot run, before replaying any",
          "[app][serve]") {
  struct Row {
    std::vector<std::string> sets;
    std::vector<int> eps;
    const char* error;
  };
  for (const Row& row :
       {Row{{"parallel.ep=144"}, {144}, "error: --ep-list: sets parallel.ep for each layout itself; drop --set parallel.ep"},
        Row{{"workload.routing.redundant_experts=0"}, {128},
            "error: --ep-list: sets routing.redundant_experts for each layout itself; drop --set "
            "routing.redundant_experts"},
        Row{{}, {144, 100}, "error: --ep-list: EP100: parallel.ranks_per_node: must divide parallel.ep (100), got 8"},
        Row{{}, {72, 160}, "error: --ep-list: EP160: node.count: 160 ranks at 8 per node need 20 nodes; the platform "
                           "has 18"}}) {
    app::ServingCurveRequest r;
    r.base.platform = "h800";
    r.base.workload = "deepseek-v3-decode";
    r.base.overrides = {"platform.node.count=18"};
    for (const std::string& s : row.sets) r.base.overrides.push_back(s);
    CHECK(verdict([&] { app::serving_layout_search(r, row.eps); }) == row.error);
  }
}

TEST_CASE("a serving pool is the traffic over the chosen batch's rate per node, in whole units", "[app][serve]") {
  app::ServingPoint p;
  p.tokens_per_s_per_node = 16000;  // a decode unit of 18 nodes of 8 ranks
  p.nodes = 18;
  p.ranks_per_node = 8;
  const app::PoolSize pool = app::size_pool(p, 1.94e6);
  CHECK(pool.nodes_needed == Approx(121.25));
  CHECK(pool.units == 7);  // 121.25 / 18 = 6.74 units
  CHECK(pool.nodes() == 126);
  CHECK(pool.load() == Approx(121.25 / 126));
  CHECK(pool.handoff_Bps == 0);  // decode hands nothing on
  // A traffic of exactly two units takes two, not three.
  CHECK(app::size_pool(p, 2 * 18 * 16000.0).units == 2);
  // Prefill: every input token's KV (61 layers x 1,152 B) leaves over the ranks' NICs.
  app::ServingPoint prefill = p;
  prefill.nodes = 4;
  prefill.tokens_per_s_per_node = 133000;
  prefill.handoff_bytes_per_token = 61 * 1152;
  prefill.handoff_Bps_per_rank = 45.4e9;
  const app::PoolSize q = app::size_pool(prefill, 7.04e6);
  CHECK(q.units == 14);  // 52.9 nodes in units of 4
  CHECK(q.handoff_Bps == Approx(7.04e6 * 61 * 1152));
  CHECK(q.handoff_Bps_per_node == Approx(7.04e6 * 61 * 1152 / 56));
  CHECK(q.fabric_Bps_per_node == Approx(8 * 45.4e9));
}
