// The [parallel] layout keys, the pipeline schedules' pass orders and the
// pipeline task graph's structure (stages, p2p transfers, per-stage sync).
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "workloads/pipeline_schedule.hpp"
#include "workloads/task_graph_builder.hpp"
#include "workloads/workload_loader.hpp"

using namespace epsim::workloads;

namespace {

std::string passes(const std::vector<PipelinePass>& order) {
  std::string out;
  for (const PipelinePass& p : order)
    out += (out.empty() ? "" : " ") + std::string(p.forward ? "F" : "B") + std::to_string(p.micro_batch) +
           (p.chunk > 3 ? "'" : "");
  return out;
}

}  // namespace

TEST_CASE("1F1B: pp - s - 1 warm-up forwards, then one forward one backward, then the drain") {
  const auto order = pipeline_order(PipelineSchedule::kOneFOneB, 4, 1, 6, false);
  CHECK(passes(order[0]) == "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5");
  CHECK(passes(order[2]) == "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 B5");
  CHECK(passes(order[3]) == "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5");
  for (int s = 0; s < 4; ++s)
    for (const PipelinePass& p : order[static_cast<std::size_t>(s)]) CHECK(p.chunk == s);
  // At most pp - s micro-batches in flight on stage s (1F1B's memory bound; GPipe would hold all 6).
  for (int s = 0; s < 4; ++s) {
    int in_flight = 0, most = 0;
    for (const PipelinePass& p : order[static_cast<std::size_t>(s)]) most = std::max(most, in_flight += p.forward ? 1 : -1);
    CHECK(most == 4 - s);
  }
}

TEST_CASE("one stage: each micro-batch's forward then its backward, one in flight, steady from 2 micro-batches") {
  // Megatron's gradient accumulation without a pipeline: 1F1B at pp = 1.
  const auto order = pipeline_order(PipelineSchedule::kOneFOneB, 1, 1, 3, false);
  REQUIRE(order.size() == 1u);
  CHECK(passes(order[0]) == "F0 B0 F1 B1 F2 B2");
  // Replayed as 2 and 4 micro-batches once that costs less than the step's own.
  const auto st = steady_state(PipelineSchedule::kOneFOneB, 1, 1, 64, false);
  REQUIRE(st);
  CHECK(st->first == 2);
  CHECK(st->delta == 2);
  CHECK_FALSE(steady_state(PipelineSchedule::kOneFOneB, 1, 1, 6, false));
  CHECK(steady_state(PipelineSchedule::kOneFOneB, 1, 1, 7, false));
}

TEST_CASE("interleaved: micro-batches in groups of pp through each chunk, Megatron's warm-up") {
  // pp 2, vpp 2, 4 micro-batches: stage 0 holds chunks 0 and 2 (primed: chunk 2).
  const auto order = pipeline_order(PipelineSchedule::kInterleaved, 2, 2, 4, false);
  // Stage 0: warm-up (2-0-1) x 2 + (2-1) x 2 = 4 forwards.
  std::string s0;
  for (const PipelinePass& p : order[0])
    s0 += std::string(p.forward ? "F" : "B") + std::to_string(p.micro_batch) + "c" + std::to_string(p.chunk) + " ";
  CHECK(s0 == "F0c0 F1c0 F0c2 F1c2 F2c0 B0c2 F3c0 B1c2 F2c2 B0c0 F3c2 B1c0 B2c2 B3c2 B2c0 B3c0 ");
  CHECK(order[1].size() == 16);
  CHECK(order[1][0] == PipelinePass{true, 0, 1});
}

TEST_CASE("1F1B all-to-all overlap: one more warm-up forward, each steady-state forward paired with a backward") {
  auto marked = [](const std::vector<PipelinePass>& o) {
    std::string out;
    for (const PipelinePass& p : o)
      out += (out.empty() ? "" : " ") + std::string(p.forward ? "F" : "B") + std::to_string(p.micro_batch) + "c" +
             std::to_string(p.chunk) + (p.paired ? "&" : "");
    return out;
  };
  // One stage: Megatron's combined_1f1b_schedule_for_no_pipelining.
  const auto one = pipeline_order(PipelineSchedule::kOneFOneB, 1, 1, 3, true);
  CHECK(marked(one[0]) == "F0c0 F1c0& B0c0 F2c0& B1c0 B2c0");
  const auto st = steady_state(PipelineSchedule::kOneFOneB, 1, 1, 64, true);
  REQUIRE(st);
  CHECK(st->first == 4);
  CHECK(st->delta == 2);
  // pp 2, vpp 2, 4 micro-batches: stage 0 warms up with 4 + 1 forwards, stage 1 with 2 + 1.
  const auto order = pipeline_order(PipelineSchedule::kInterleaved, 2, 2, 4, true);
  CHECK(marked(order[0]) == "F0c0 F1c0 F0c2 F1c2 F2c0 F3c0& B0c2 F2c2& B1c2 F3c2& B0c0 B1c0 B2c2 B3c2 B2c0 B3c0");
  CHECK(marked(order[1]) == "F0c1 F1c1 F0c3 F1c3& B0c3 F2c1& B1c3 F3c1& B0c1 F2c3& B1c1 F3c3& B2c3 B3c3 B2c1 B3c1");
  // Stage 0's warm-up of pp = 2 with the extra forward spans two groups: first (2 + 2) x pp.
  const auto inter = steady_state(PipelineSchedule::kInterleaved, 2, 2, 64, true);
  REQUIRE(inter);
  CHECK(inter->first == 8);
  CHECK(steady_state(PipelineSchedule::kInterleaved, 2, 2, 64, false)->first == 6);
}

TEST_CASE("DualPipe: micro-batches from both ends, F&B pairs in the steady state, pp + 1 in flight") {
  // pp 4, 8 micro-batches: 0-3 enter at stage 0 (chunks 0-3), 4-7 at stage 3
  // (chunks 4-7, marked '); stage s holds slices s and 3 - s.
  const auto order = pipeline_order(PipelineSchedule::kDualPipe, 4, 1, 8, false);
  auto marked = [](const std::vector<PipelinePass>& o) {
    std::string out;
    for (const PipelinePass& p : o)
      out += (out.empty() ? "" : " ") + std::string(p.forward ? "F" : "B") + std::to_string(p.micro_batch) +
             (p.chunk > 3 ? "'" : "") + (p.paired ? "&" : "");
    return out;
  };
  // deepseek-ai/DualPipe's phases at h = 0: 2 F0, 1 x (F0 F1), 1 x (B1 F1), 2 x (F0&B1 F1&B0), 1 x (B1 F1&B0), 1 x (B1 B0), 1 B0.
  CHECK(marked(order[0]) == "F0 F1 F2 F4' B4' F5' F3& B5' F6'& B0 B6' F7'& B1 B7' B2 B3");
  CHECK(marked(order[1]) == "F0 F4' F1 F5' F2& B4' F6'& B0 F3& B5' F7'& B1 B6' B2 B7' B3");
  // The last stage mirrors the first: its phase 0 is direction 1.
  CHECK(marked(order[3]) == "F4' F5' F6' F0 B0 F1 F7'& B1 F2& B4' B2 F3& B5' B3 B6' B7'");
  for (int s = 0; s < 4; ++s) {
    int in_flight = 0, most = 0, pairs = 0;
    for (const PipelinePass& p : order[static_cast<std::size_t>(s)]) {
      most = std::max(most, in_flight += p.forward ? 1 : -1);
      pairs += p.paired ? 1 : 0;
      CHECK(chunk_stage(PipelineSchedule::kDualPipe, 4, p.chunk) == s);
      CHECK((p.micro_batch < 4) == (p.chunk < 4));
    }
    CHECK(order[static_cast<std::size_t>(s)].size() == 16);
    CHECK(most == 4 + 1);  // the report's Table 2: activations of PP + 1 micro-batches
    const int h = std::min(s, 3 - s);
    CHECK(pairs == 2 * (8 / 2 - 4 + h + 1) + (4 / 2 - h - 1));  // phase 5 twice a pair, phase 6 once
  }
  CHECK(chunk_stage(PipelineSchedule::kDualPipe, 4, 4) == 3);
  CHECK(chunk_position(PipelineSchedule::kDualPipe, 4, 6) == 2);
  CHECK(pipeline_chunks(PipelineSchedule::kDualPipe, 4, 1) == 8);
}

TEST_CASE("[parallel]: layout keys, derived dp and micro-batches, the old meaning mapped", "[workload]") {
  WorkloadSpec w = load_workload("deepseek-v3");
  CHECK(w.parallel.dp == 256);  // default: one EP group per stage
  CHECK(w.parallel.edp() == 1);
  CHECK(w.parallel.world() == 256);
  CHECK(w.parallel.micro_batches == 2);
  CHECK(w.parallel.tokens_per_micro_batch == 4096);
  CHECK(w.parallel.global_batch == 2 * 256);
  w = load_workload("deepseek-v3", {"parallel.pp=16", "parallel.dp=128", "parallel.ep=64", "parallel.global_batch=4096"});
  CHECK(w.parallel.world() == 2048);
  CHECK(w.parallel.edp() == 2);
  CHECK(w.parallel.ranks() == 128);  // the routing sample: one stage
  CHECK(w.parallel.micro_batches == 32);
  CHECK(w.parallel.schedule == PipelineSchedule::kOneFOneB);
  w = load_workload("tiny-moe", {"parallel.pp=2", "parallel.vpp=2"});
  CHECK(w.parallel.schedule == PipelineSchedule::kInterleaved);
  // TP2: dp defaults to 4 (a stage of 8 ranks holds the EP8 group); each rank routes half the tokens.
  w = load_workload("tiny-moe", {"parallel.tp=2"});
  CHECK(w.parallel.dp == 4);
  CHECK(w.parallel.world() == 8);
  CHECK(w.parallel.tokens_per_micro_batch == 128);
}

TEST_CASE("[parallel]: bad layouts and batches are errors at the key", "[workload]") {
  auto error = [](std::vector<std::string> sets) {
    try {
      load_workload("tiny-moe", sets);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error({"parallel.dp=4"}) ==
        "--set parallel.dp=4: error: parallel.dp: etp x ep = 1 x 8 must divide the tp x dp = 1 x 4 ranks of a "
        "pipeline stage");
  CHECK(error({"parallel.global_batch=20"}) ==
        "--set parallel.global_batch=20: error: parallel.global_batch: must be micro_batch x dp = 2 x 8 times a number "
        "of micro-batches in [1, 1024], got 20");
  CHECK(error({"parallel.global_batch=32", "parallel.micro_batches=2"}).find(
            "error: parallel.micro_batches: give parallel.global_batch or parallel.micro_batches, not both") !=
        std::string::npos);
  // A --set global_batch replaces the preset's micro_batches.
  CHECK(load_workload("tiny-moe", {"parallel.global_batch=64"}).parallel.micro_batches == 4);
  CHECK(error({"parallel.pp=8"}) ==
        "--set parallel.pp=8: error: parallel.pp: 4 layers cannot fill 8 pipeline chunks (pp 8 x vpp 1) "
        "with at least one layer each after 0 on the first and 0 on the last");
  CHECK(error({"parallel.vpp=2"}) == "--set parallel.vpp=2: error: parallel.vpp: 2 model chunks per stage need "
                                     "pipeline parallelism (pp >= 2)");
  CHECK(error({"parallel.pp=2", "parallel.schedule=\"interleaved\""}) ==
        "--set parallel.schedule=\"interleaved\": error: parallel.schedule: \"interleaved\" needs parallel.vpp >= 2 "
        "model chunks per stage");
  CHECK(error({"parallel.pp=2", "parallel.vpp=2", "parallel.micro_batches=3"}) ==
        "--set parallel.micro_batches=3: error: parallel.micro_batches: the interleaved schedule needs micro-batches "
        "per step (3) to be a multiple of pp (2)");
  CHECK(error({"parallel.pp=2", "parallel.schedule=\"dualpipe\""}) ==
        "workloads/presets/tiny-moe.toml:28:17: error: parallel.micro_batches: \"dualpipe\" needs an even pp (got 2) "
        "and an even number of micro-batches per step, at least 2 x pp = 4 (got 2): half enter at each end of the "
        "pipeline");
  CHECK(error({"parallel.pp=3", "parallel.schedule=\"dualpipe\"", "parallel.micro_batches=6"}) ==
        "--set parallel.pp=3: error: parallel.pp: \"dualpipe\" needs an even pp (got 3) and an even number of "
        "micro-batches per step, at least 2 x pp = 6 (got 6): half enter at each end of the pipeline");
  CHECK(error({"parallel.pp=2", "parallel.vpp=2", "parallel.schedule=\"dualpipe\""}) ==
        "--set parallel.vpp=2: error: parallel.vpp: 2 model chunks per stage: \"dualpipe\" holds two (slices s and "
        "pp-1-s); use vpp = 1");
  CHECK(error({"parallel.tp=4"}) == "--set parallel.tp=4: error: parallel.tp: a tensor-parallel group of 4 would span "
                                    "nodes of 2 ranks (tp must divide ranks_per_node unless tp_across_nodes = true)");
  CHECK(error({"parallel.tp=2", "parallel.micro_batch=1", "parallel.sequence_length=127"}) ==
        "--set parallel.tp=2: error: parallel.tp: must divide the micro-batch's micro_batch x sequence_length = 127 "
        "tokens (sequence parallelism splits them over the TP group)");
  CHECK(error({"parallel.etp=2"}).find("error: parallel.etp: expert tensor parallelism is not simulated yet") !=
        std::string::npos);
  CHECK(error({"parallel.pp=2", "parallel.first_stage_layers=4"}).find("error: parallel.pp: 4 layers cannot fill 2 pipeline chunks (pp 2 x vpp 1) with at least one layer each after 4 on the first") !=
        std::string::npos);
  CHECK(error({"parallel.tokens_per_micro_batch=256"}).find("unknown key") != std::string::npos);
}

TEST_CASE("pipeline graph: stage tasks on their ranks, p2p between stages, one sync per stage", "[workload]") {
  // tiny-moe: 4 layers (1 dense), EP8 on 8 ranks per stage; pp 2: layers 0-1 and 2-3.
  const WorkloadSpec w = load_workload("tiny-moe", {"parallel.pp=2", "parallel.micro_batches=4"});
  const TaskGraph g = build_task_graph(w);
  CHECK(g.ranks == 16);
  CHECK(g.stages == 2);
  CHECK(g.stage_ranks == 8);
  std::map<std::pair<TaskKind, Phase>, int> count;
  for (const Task& t : g.tasks) {
    ++count[{t.kind, t.phase}];
    if (!t.is_collective()) {
      REQUIRE(t.stage >= 0);
      for (int r = 0; r < g.ranks; ++r)
        if (!g.runs(t, r)) CHECK((t.flops[static_cast<std::size_t>(r)] == 0 && t.hbm_bytes[static_cast<std::size_t>(r)] == 0));
      if (t.layer >= 0 && t.layer < 2) CHECK(t.stage == 0);
      if (t.layer >= 2) CHECK(t.stage == 1);  // layers 2, 3 and the head (layer 4)
    } else if (t.uses_traffic()) {
      REQUIRE(t.groups.size() == 1);
      CHECK(static_cast<int>(t.groups[0].size()) == g.traffic[static_cast<std::size_t>(t.traffic)].ranks);
    }
  }
  // One activation and one gradient transfer per micro-batch across the one stage boundary.
  CHECK(count[{TaskKind::kPipelineP2p, Phase::kForward}] == 4);
  CHECK(count[{TaskKind::kPipelineP2p, Phase::kBackward}] == 4);
  // Dense and expert all-reduce and the optimizer once per stage.
  CHECK(count[{TaskKind::kGradAllReduce, Phase::kGradSync}] == 4);
  CHECK(count[{TaskKind::kOptimizer, Phase::kOptimizer}] == 2);
  // A p2p carries each rank's micro-batch of BF16 activations to the same rank of the next stage.
  const TrafficMatrix& p2p = g.traffic.back();
  CHECK(p2p.ranks == 16);
  CHECK(p2p.at(3, 8 + 3) == 256);
  CHECK(p2p.at(3, 8 + 4) == 0);
  // With pp = 1 the graph is the one-stage step: no stages, no p2p.
  const TaskGraph one = build_task_graph(load_workload("tiny-moe"));
  CHECK(one.stages == 1);
  for (const Task& t : one.tasks) CHECK(t.kind != TaskKind::kPipelineP2p);
}
