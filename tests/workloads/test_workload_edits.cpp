// Typed edits of a workload (workloads/workload_edits.hpp): each is checked
// by the loader's one reader, so an edit and the `--set` it equals give the
// same workload, or the same error, word for word; an edit that names an
// option is reported at it. And the layout rules (layout_rules.hpp) are the
// loader's: their messages are the ones it reports.
#include <functional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "workloads/layout_rules.hpp"
#include "workloads/workload_edits.hpp"
#include "workloads/workload_loader.hpp"

using namespace epsim;
using namespace epsim::workloads;

namespace {

// What loading says: the error's one line, or "" when it loads.
std::string verdict(const std::function<WorkloadSpec()>& load) {
  try {
    load();
    return "";
  } catch (const InputError& e) {
    return e.what();
  }
}

struct EditRow {
  const char* name;
  const char* preset;
  std::function<void(WorkloadEdits&)> edit;
  std::vector<std::string> same_as;  // the --set assignments the edits equal
  const char* error;                 // what both say
};

}  // namespace

TEST_CASE("an invalid edit is refused as the --set it equals", "[workload][edits]") {
  const std::vector<EditRow> rows = {
      {"ep not dividing the experts", "deepseek-v3", [](WorkloadEdits& e) { e.ep = Edit<int>{3, ""}; },
       {"parallel.ep=3"},
       "--set parallel.ep=3: error: parallel.ep: model.experts (256) is not divisible by parallel.ep (3), unless routing.redundant_experts = 2 fills every rank to 86 expert slots"},
      {"ep out of range", "tiny-moe", [](WorkloadEdits& e) { e.ep = Edit<int>{0, ""}; }, {"parallel.ep=0"},
       "--set parallel.ep=0: error: parallel.ep: expected an integer in [1, 65536], got 0"},
      {"a global batch that does not split", "tiny-moe",
       [](WorkloadEdits& e) { e.global_batch = Edit<std::int64_t>{3, ""}; }, {"parallel.global_batch=3"},
       "--set parallel.global_batch=3: error: parallel.global_batch: must be micro_batch x dp = 2 x 8 times a "
       "number of micro-batches in [1, 1024], got 3"},
      {"dualpipe on an odd pipeline", "tiny-moe",
       [](WorkloadEdits& e) {
         e.pp = Edit<int>{3, ""};
         e.schedule = Edit<PipelineSchedule>{PipelineSchedule::kDualPipe, ""};
       },
       {"parallel.pp=3", "parallel.schedule=\"dualpipe\""},
       "--set parallel.pp=3: error: parallel.pp: \"dualpipe\" needs an even pp (got 3) and an even number of "
       "micro-batches per step, at least 2 x pp = 6 (got 2): half enter at each end of the pipeline"},
      {"interleaved with one chunk", "tiny-moe",
       [](WorkloadEdits& e) { e.schedule = Edit<PipelineSchedule>{PipelineSchedule::kInterleaved, ""}; },
       {"parallel.schedule=\"interleaved\""},
       "--set parallel.schedule=\"interleaved\": error: parallel.schedule: \"interleaved\" needs parallel.vpp >= 2 "
       "model chunks per stage"},
      {"ranks per node not dividing ep", "tiny-moe", [](WorkloadEdits& e) { e.ranks_per_node = Edit<int>{3, ""}; },
       {"parallel.ranks_per_node=3"},
       "--set parallel.ranks_per_node=3: error: parallel.ranks_per_node: must divide parallel.ep (8), got 3"},
      {"top_k above the experts, blamed on the edited key", "deepseek-v3",
       [](WorkloadEdits& e) { e.experts = Edit<std::int64_t>{4, ""}; }, {"model.experts=4"},
       "--set model.experts=4: error: model.experts: must be >= model.top_k (8), got 4"},
      {"recompute is a choice the loader checks", "tiny-moe",
       [](WorkloadEdits& e) { e.zero_stage = Edit<int>{2, ""}; }, {"memory.zero_stage=2"},
       "--set memory.zero_stage=2: error: memory.zero_stage: expected an integer in [0, 1], got 2"},
  };
  for (const EditRow& row : rows) {
    INFO(row.name);
    WorkloadEdits edits;
    row.edit(edits);
    const std::string by_edit = verdict([&] { return load_workload(row.preset, {}, edits); });
    CHECK(by_edit == row.error);
    CHECK(verdict([&] { return load_workload(row.preset, row.same_as); }) == by_edit);
  }
}

TEST_CASE("an edit that names its option is reported at it", "[workload][edits]") {
  WorkloadEdits e;
  e.ep = Edit<int>{3, "--npus"};
  e.dp = Edit<int>{3, "--npus"};
  CHECK(verdict([&] { return load_workload("deepseek-v3", {}, e); }) ==
        "error: --npus: parallel.ep: model.experts (256) is not divisible by parallel.ep (3), unless routing.redundant_experts = 2 fills every rank to 86 expert slots");
  // An error elsewhere keeps its own place: the user's --set is the user's.
  CHECK(verdict([&] { return load_workload("deepseek-v3", {"model.top_k=300"}, e); }) ==
        "--set model.top_k=300: error: model.top_k: expected an integer in [1, 64], got 300");
}

TEST_CASE("valid edits make the workload their --set makes, applied after the user's --set", "[workload][edits]") {
  WorkloadEdits e;
  e.pp = Edit<int>{2, ""};
  e.vpp = Edit<int>{2, ""};
  e.dp = Edit<int>{8, ""};
  e.schedule = Edit<PipelineSchedule>{PipelineSchedule::kInterleaved, ""};
  e.global_batch = Edit<std::int64_t>{64, ""};
  e.recompute = Edit<Recompute>{Recompute::kFull, ""};
  e.seed = Edit<std::int64_t>{7, ""};
  e.allow_oversubscribed = Edit<bool>{true, ""};
  const WorkloadSpec by_edit = load_workload("tiny-moe", {"parallel.pp=4", "routing.seed=3"}, e);
  const WorkloadSpec by_set =
      load_workload("tiny-moe", {"parallel.pp=2", "parallel.vpp=2", "parallel.dp=8", "parallel.schedule=interleaved",
                                 "parallel.global_batch=64", "memory.recompute=full", "routing.seed=7",
                                 "memory.allow_oversubscribed=true"});
  CHECK(by_edit.parallel.pp == 2);
  CHECK(by_edit.parallel.vpp == 2);
  CHECK(by_edit.parallel.dp == 8);
  CHECK(by_edit.parallel.schedule == PipelineSchedule::kInterleaved);
  CHECK(by_edit.parallel.micro_batches == 4);  // 64 sequences / (micro_batch 2 x dp 8)
  CHECK(by_edit.memory.recompute == Recompute::kFull);
  CHECK(by_edit.routing.seed == 7);
  CHECK(by_edit.memory.allow_oversubscribed);
  CHECK(by_edit.parallel.micro_batches == by_set.parallel.micro_batches);
  CHECK(by_edit.parallel.global_batch == by_set.parallel.global_batch);
  CHECK(by_edit.parallel.world() == by_set.parallel.world());
  // The ranks' later errors (traffic memory, HBM) point at an ep edit as at the --set it equals.
  WorkloadEdits ep;
  ep.ep = Edit<int>{16, ""};
  CHECK(load_workload("tiny-moe", {}, ep).parallel.ranks_given_at.file == "--set parallel.ep=16");
  CHECK(load_workload("tiny-moe", {"parallel.ep=16"}).parallel.ranks_given_at.file == "--set parallel.ep=16");
  CHECK(load_workload("tiny-moe").parallel.ranks_given_at.line == 25);  // the file's own ep
}

TEST_CASE("moe_layers cuts the model after its dense layers", "[workload][edits]") {
  WorkloadEdits e;
  e.moe_layers = Edit<int>{1, ""};
  e.pp = Edit<int>{1, ""};
  e.schedule = Edit<PipelineSchedule>{PipelineSchedule::kOneFOneB, ""};
  e.vpp = Edit<int>{1, ""};
  const WorkloadSpec w = load_workload("deepseek-v3", {}, e);
  CHECK(w.model.dense_layers == 3);
  CHECK(w.model.layers == 4);
  CHECK(w.model.moe_layers() == 1);
}

TEST_CASE("the layout rules say what the loader says", "[workload][edits]") {
  const auto rule = check_schedule_batch(PipelineSchedule::kDualPipe, 2, 2);
  REQUIRE(rule);
  CHECK(rule->key == "micro_batches");
  CHECK(rule->message ==
        "\"dualpipe\" needs an even pp (got 2) and an even number of micro-batches per step, at least 2 x pp = 4 "
        "(got 2): half enter at each end of the pipeline");
  CHECK(verdict([] {
          return load_workload("tiny-moe", {"parallel.pp=2", "parallel.dp=8", "parallel.schedule=dualpipe",
                                            "parallel.micro_batches=2"});
        }) == "--set parallel.micro_batches=2: error: parallel.micro_batches: " + rule->message);
  CHECK(check_schedule_batch(PipelineSchedule::kDualPipe, 3, 6)->key == "pp");
  CHECK(check_schedule_batch(PipelineSchedule::kInterleaved, 4, 6)->message ==
        "the interleaved schedule needs micro-batches per step (6) to be a multiple of pp (4)");
  CHECK_FALSE(check_schedule_batch(PipelineSchedule::kInterleaved, 4, 8));
  CHECK_FALSE(check_schedule_batch(PipelineSchedule::kOneFOneB, 3, 1));
  CHECK(check_global_batch(32, 2, 8) == std::nullopt);
  CHECK(check_global_batch(2048 * 16 + 16, 1, 16)->message ==
        "must be micro_batch x dp = 1 x 16 times a number of micro-batches in [1, 1024], got 32784");
  CHECK(check_ep_fills_nodes(16, 8) == std::nullopt);
  CHECK(check_ep_fills_nodes(4, 8)->message == "must divide parallel.ep (4), got 8");
}
