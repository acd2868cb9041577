// The step's gradient sync and optimizer: buckets in backward order, DDP
// (all-reduce, full AdamW) against ZeRO-1 (reduce-scatter, AdamW on the
// rank's shard, all-gather of the BF16 parameters), overlap on and off.
#include <algorithm>
#include <vector>

#include <catch2/catch.hpp>

#include "workloads/grad_buckets.hpp"
#include "workloads/layer_costs.hpp"
#include "workloads/task_graph_builder.hpp"
#include "workloads/workload_loader.hpp"

using namespace epsim::workloads;

namespace {

std::vector<const Task*> of_kind(const TaskGraph& g, TaskKind kind) {
  std::vector<const Task*> out;
  for (const Task& t : g.tasks)
    if (t.kind == kind) out.push_back(&t);
  return out;
}

}  // namespace

TEST_CASE("gradient buckets: consecutive items until the bucket holds its size", "[grad_sync]") {
  struct Row {
    std::vector<double> items;
    double size;
    std::vector<std::vector<double>> expected;  // first, last, bytes per bucket
  };
  const std::vector<Row> rows = {
      {{10, 10, 10, 10}, 20, {{0, 1, 20}, {2, 3, 20}}},
      {{10, 10, 10}, 25, {{0, 2, 30}}},                 // closes when it reaches the size
      {{50, 1, 1}, 20, {{0, 0, 50}, {1, 2, 2}}},        // a large item alone, the rest a smaller last bucket
      {{5, 0, 0, 5}, 8, {{0, 3, 10}}},                  // empty items join the open bucket
      {{5, 5, 0, 0}, 8, {{0, 1, 10}}},                  // ... without making it wait for them
      {{0, 0}, 8, {}},                                  // no bytes, no bucket
      {{3, 4, 5}, 0, {{0, 2, 12}}},                     // size 0: one bucket of everything
  };
  for (const Row& r : rows) {
    const std::vector<GradBucket> b = bucket_gradients(r.items, r.size);
    REQUIRE(b.size() == r.expected.size());
    for (std::size_t i = 0; i < b.size(); ++i) {
      CHECK(b[i].first == static_cast<std::size_t>(r.expected[i][0]));
      CHECK(b[i].last == static_cast<std::size_t>(r.expected[i][1]));
      CHECK(b[i].bytes == r.expected[i][2]);
    }
  }
}

TEST_CASE("overlapped buckets carry all the gradients, each after the backward that completes it", "[grad_sync]") {
  // deepseek-v3 at EP8 (dp 8: EDP 1): 61 layers of ~600 MB of dense BF16
  // gradients and the 1.85 GB embedding and head; 80 MB buckets.
  const WorkloadSpec w = load_workload("deepseek-v3", {"parallel.ep=8", "memory.zero_stage=0"});
  const TaskGraph g = build_task_graph(w);
  const std::vector<const Task*> syncs = of_kind(g, TaskKind::kGradAllReduce);
  double dense = 0, expert = 0;
  int dense_buckets = 0;
  for (const Task* t : syncs) {
    CHECK(t->group_op == GroupCollective::kAllReduce);
    const bool is_dense = t->groups.size() == 1;  // one DP group of 8; experts: 8 groups of one rank
    (is_dense ? dense : expert) += t->bytes;
    dense_buckets += is_dense ? 1 : 0;
    if (is_dense) CHECK(t->bytes >= kDefaultGradBucketBytes);  // every dense layer is larger than a bucket
    for (TaskId d : t->deps) CHECK(g.tasks[static_cast<std::size_t>(d)].phase == Phase::kBackward);
  }
  CHECK(dense == Approx(dense_params(w.model) * 2).epsilon(1e-12));
  CHECK(expert == Approx(expert_params_per_rank(w) * 2).epsilon(1e-12));
  CHECK(dense_buckets == 63);  // head, 61 layers, embedding: each layer holds more than 80 MB
  // The first bucket (the head) waits only for the head's backward, long before the backward ends.
  const Task& first = *syncs.front();
  for (TaskId d : first.deps) {
    CHECK(g.tasks[static_cast<std::size_t>(d)].kind == TaskKind::kDenseFfn);
    CHECK(g.tasks[static_cast<std::size_t>(d)].layer == w.model.layers);
  }
  const Task& optimizer = *of_kind(g, TaskKind::kOptimizer).front();
  CHECK(optimizer.deps.size() == syncs.size());
}

TEST_CASE("without overlap: one sync per parameter group after the whole backward", "[grad_sync]") {
  const WorkloadSpec w =
      load_workload("tiny-moe", {"parallel.overlap_grad_reduce=false", "parallel.grad_bucket_size=\"1MB\""});
  const TaskGraph g = build_task_graph(w);
  const std::vector<const Task*> syncs = of_kind(g, TaskKind::kGradAllReduce);
  REQUIRE(syncs.size() == 2);
  CHECK(syncs[0]->bytes == Approx(dense_params(w.model) * 2));
  // The dense sync waits for the last backward task of the last micro-batch
  // (the micro-batches run one after another).
  REQUIRE(syncs[0]->deps.size() == 1);
  CHECK(g.tasks[static_cast<std::size_t>(syncs[0]->deps[0])].layer == 0);
  CHECK(g.tasks[static_cast<std::size_t>(syncs[0]->deps[0])].micro_batch == 1);
}

TEST_CASE("ZeRO-1: reduce-scatter, AdamW on the rank's 1/DP shard, all-gather of BF16 parameters", "[grad_sync]") {
  // tiny-moe with dp 16 over EP8: DP16 for dense parameters, EDP2 for experts.
  for (const bool overlap : {false, true}) {
    CAPTURE(overlap);
    const std::string o = overlap ? "true" : "false";
    const WorkloadSpec ddp = load_workload("tiny-moe", {"parallel.dp=16", "parallel.overlap_grad_reduce=" + o});
    const WorkloadSpec zero =
        load_workload("tiny-moe", {"parallel.dp=16", "memory.zero_stage=1", "parallel.overlap_grad_reduce=" + o});
    const TaskGraph a = build_task_graph(ddp), b = build_task_graph(zero);
    const auto a_sync = of_kind(a, TaskKind::kGradAllReduce), b_sync = of_kind(b, TaskKind::kGradAllReduce);
    // The reductions: the same buffers, reduce-scattered; then two all-gathers.
    REQUIRE(b_sync.size() == a_sync.size() + 2);
    for (std::size_t i = 0; i < a_sync.size(); ++i) {
      CHECK(a_sync[i]->group_op == GroupCollective::kAllReduce);
      CHECK(b_sync[i]->group_op == GroupCollective::kReduceScatter);
      CHECK(b_sync[i]->bytes == a_sync[i]->bytes);
      CHECK(b_sync[i]->groups == a_sync[i]->groups);
      CHECK(b_sync[i]->deps == a_sync[i]->deps);
    }
    const double dense = dense_params(zero.model), expert = expert_params_per_rank(zero);
    const Task& opt_a = *of_kind(a, TaskKind::kOptimizer).front();
    const Task& opt_b = *of_kind(b, TaskKind::kOptimizer).front();
    CHECK(opt_a.flops[0] == Approx(15 * (dense + expert)));
    CHECK(opt_b.flops[0] == Approx(15 * (dense / 16 + expert / 2)));  // seed 002's 15 FLOPs per parameter
    CHECK(opt_b.hbm_bytes[0] == Approx(26 * (dense / 16 + expert / 2)));
    const Task& gather_dense = *b_sync[b_sync.size() - 2];
    const Task& gather_expert = *b_sync.back();
    for (const Task* t : {&gather_dense, &gather_expert}) {
      CHECK(t->group_op == GroupCollective::kAllGather);
      CHECK(t->deps == std::vector<TaskId>{opt_b.id});
    }
    CHECK(gather_dense.bytes == Approx(2 * dense));
    CHECK(gather_dense.groups.size() == 1);
    CHECK(gather_dense.groups[0].size() == 16);
    CHECK(gather_expert.bytes == Approx(2 * expert));
    CHECK(gather_expert.groups.size() == 8);
    CHECK(gather_expert.groups[3] == std::vector<int>{3, 11});
  }
}

TEST_CASE("pipeline stages: each stage buckets, reduces and updates what it holds", "[grad_sync]") {
  const WorkloadSpec w = load_workload("tiny-moe", {"parallel.pp=2", "parallel.micro_batches=4", "memory.zero_stage=1"});
  const TaskGraph g = build_task_graph(w);
  double reduced = 0, gathered = 0;
  for (const Task* t : of_kind(g, TaskKind::kGradAllReduce)) {
    const int stage = t->groups.front().front() / g.stage_ranks;
    for (const auto& group : t->groups)
      for (int r : group) CHECK(r / g.stage_ranks == stage);
    (t->group_op == GroupCollective::kAllGather ? gathered : reduced) += t->bytes;
  }
  // Every parameter once over the stages (dense: the embedding on stage 0, the head on stage 1).
  const double all = dense_params(w.model) + expert_params_per_rank(w);
  CHECK(reduced == Approx(2 * all));
  CHECK(gathered == Approx(2 * all));
  CHECK(of_kind(g, TaskKind::kOptimizer).size() == 2);
}
