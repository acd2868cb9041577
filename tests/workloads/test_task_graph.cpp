// The task graph: structure, dependencies, FLOP formulas on the sampled
// rows, backward = 2x forward, gradient sync groups, JSON.
#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "workloads/layer_costs.hpp"
#include "workloads/task_graph_builder.hpp"
#include "workloads/task_graph_json.hpp"
#include "workload_text.hpp"

using namespace epsim::workloads;
using epsim::workloads::testing::Knobs;

namespace {

const Task& find(const TaskGraph& g, TaskKind kind, Phase phase, int layer, int mb) {
  for (const Task& t : g.tasks) {
    if (t.kind == kind && t.phase == phase && t.layer == layer && t.micro_batch == mb) return t;
  }
  FAIL("no such task");
  return g.tasks.front();
}

}  // namespace

TEST_CASE("tasks are topologically ordered with per-rank amounts", "[graph]") {
  WorkloadSpec w = load_workload("tiny-moe");
  TaskGraph g = build_task_graph(w);
  CHECK(g.ranks == 8);
  CHECK(g.ranks_per_node == 2);
  CHECK(g.traffic.size() == 3u * 2u);
  std::map<std::pair<TaskKind, Phase>, int> count;
  for (std::size_t i = 0; i < g.tasks.size(); ++i) {
    const Task& t = g.tasks[i];
    CHECK(t.id == static_cast<TaskId>(i));
    for (TaskId d : t.deps) CHECK(d < t.id);
    if (!t.is_collective()) {
      CHECK(t.flops.size() == 8u);
      CHECK(t.hbm_bytes.size() == 8u);
    }
    ++count[{t.kind, t.phase}];
  }
  // 3 MoE layers x 2 micro-batches each way; dense FFN: 1 dense layer + the head, x 2 micro-batches.
  CHECK(count[{TaskKind::kDispatch, Phase::kForward}] == 6);
  CHECK(count[{TaskKind::kCombine, Phase::kBackward}] == 6);
  CHECK(count[{TaskKind::kAttention, Phase::kBackward}] == 8);
  CHECK(count[{TaskKind::kDenseFfn, Phase::kForward}] == 4);
  CHECK(count[{TaskKind::kGradAllReduce, Phase::kGradSync}] == 2);
  CHECK(count[{TaskKind::kOptimizer, Phase::kOptimizer}] == 1);
}

TEST_CASE("one stage: forward(mb i) -> backward(mb i) -> forward(mb i + 1), as Megatron accumulates", "[graph]") {
  WorkloadSpec w = load_workload("tiny-moe", {"parallel.micro_batches=3"});
  TaskGraph g = build_task_graph(w);
  // Listed in the order they run: every task of micro-batch i, its forward
  // before its backward, before any of micro-batch i + 1's.
  int mb = 0;
  bool backward = false;
  for (const Task& t : g.tasks) {
    if (t.micro_batch < 0) continue;
    if (t.micro_batch != mb) {
      CHECK(t.micro_batch == mb + 1);
      CHECK(backward);  // micro-batch mb ended with its backward
      mb = t.micro_batch, backward = false;
    }
    if (t.phase == Phase::kBackward) backward = true;
    CHECK((t.phase == Phase::kForward) == !backward);
    for (TaskId d : t.deps) CHECK(g.tasks[static_cast<std::size_t>(d)].micro_batch <= t.micro_batch);
  }
  CHECK(mb == 2);
  // Micro-batch i + 1's first kernel waits for micro-batch i's last backward
  // (layer 0's attention: its input gradient), and for nothing else.
  for (int i = 0; i + 1 < 3; ++i) {
    const Task& first = find(g, TaskKind::kAttention, Phase::kForward, 0, i + 1);
    const Task& last = find(g, TaskKind::kAttention, Phase::kBackward, 0, i);
    CHECK(first.deps == std::vector<TaskId>{last.id});
  }
  CHECK(find(g, TaskKind::kAttention, Phase::kForward, 0, 0).deps.empty());
}

TEST_CASE("expert GEMM FLOPs are 2MNK on the sampled, aligned rows", "[graph]") {
  WorkloadSpec w = load_workload("tiny-moe");
  RoutingSample s = sample_routing(w);
  TaskGraph g = build_task_graph(w, s);
  const double hidden = 512, ffn = 256;
  for (int layer = 1; layer < 4; ++layer) {
    for (int mb = 0; mb < 2; ++mb) {
      const LayerRouting& lr = s.at(layer - 1, mb);
      const Task& fwd = find(g, TaskKind::kExpertGemm, Phase::kForward, layer, mb);
      const Task& bwd = find(g, TaskKind::kExpertGemm, Phase::kBackward, layer, mb);
      CHECK(fwd.deps == std::vector<TaskId>{find(g, TaskKind::kDispatch, Phase::kForward, layer, mb).id});
      for (int rank = 0; rank < 8; ++rank) {
        double flops = 0;
        for (int j = 0; j < 4; ++j) {
          const std::int32_t tokens = lr.expert_tokens[static_cast<std::size_t>(rank * 4 + j)];
          const double m = std::ceil(tokens / 16.0) * 16;  // alignment 16 in tiny-moe
          flops += 2 * m * (2 * ffn) * hidden + 2 * m * hidden * ffn;  // gate/up, then down
        }
        CHECK(fwd.flops[static_cast<std::size_t>(rank)] == Approx(flops));
        CHECK(bwd.flops[static_cast<std::size_t>(rank)] == Approx(2 * flops));
      }
    }
  }
}

TEST_CASE("all-to-alls carry the sampled traffic in the right direction and format", "[graph]") {
  WorkloadSpec w = load_workload("tiny-moe");
  TaskGraph g = build_task_graph(w);
  const Task& d = find(g, TaskKind::kDispatch, Phase::kForward, 2, 1);
  const Task& c = find(g, TaskKind::kCombine, Phase::kForward, 2, 1);
  const Task& cb = find(g, TaskKind::kCombine, Phase::kBackward, 2, 1);
  const Task& db = find(g, TaskKind::kDispatch, Phase::kBackward, 2, 1);
  CHECK(d.traffic == (2 - 1) * 2 + 1);
  for (const Task* t : {&c, &cb, &db}) CHECK(t->traffic == d.traffic);
  CHECK(!d.transpose);
  CHECK(c.transpose);
  CHECK(!cb.transpose);  // gradients of the combine go the dispatch way
  CHECK(db.transpose);
  CHECK(d.bytes_per_token == 512 + 4 * 4);  // FP8 + one FP32 scale per 128 channels
  CHECK(c.bytes_per_token == 1024);
  CHECK(cb.bytes_per_token == 1024);
  CHECK(db.bytes_per_token == 1024);
}

TEST_CASE("dense costs: attention, FFN and backward = 2x forward", "[graph]") {
  WorkloadSpec w = load_workload("tiny-moe");
  TaskGraph g = build_task_graph(w);
  // GQA: q 512x512, k and v 512x128 each, o 512x512; core causal over 128-token sequences.
  const double t = 256, params = 512.0 * 512 + 2 * 512.0 * 128 + 512.0 * 512;
  const double core = t * (128 + 1) / 2.0 * 2 * 8 * (64 + 64);
  const Task& attn = find(g, TaskKind::kAttention, Phase::kForward, 0, 0);
  CHECK(attn.flops[0] == Approx(2 * t * params + core));
  // Backward per operator: the projections' dgrad and wgrad (2x), the core's backward 2.5x.
  CHECK(find(g, TaskKind::kAttention, Phase::kBackward, 0, 0).flops[0] == Approx(2 * 2 * t * params + 2.5 * core));
  const Task& ffn = find(g, TaskKind::kDenseFfn, Phase::kForward, 0, 0);
  CHECK(ffn.flops[0] == Approx(6 * t * 512 * 1024));
  const Task& shared = find(g, TaskKind::kSharedExpert, Phase::kForward, 1, 0);
  CHECK(shared.flops[0] == Approx(6 * t * 512 * 256));
  const Task& head = find(g, TaskKind::kDenseFfn, Phase::kForward, 4, 0);
  CHECK(head.flops[0] == Approx(2 * t * 512 * 1000));
}

TEST_CASE("gradient sync groups and the optimizer", "[graph]") {
  Knobs knobs;
  knobs.dp = 2;
  WorkloadSpec w = testing::workload(knobs);
  TaskGraph g = build_task_graph(w);
  REQUIRE(g.ranks == 16);
  std::vector<const Task*> syncs;
  for (const Task& t : g.tasks) {
    if (t.kind == TaskKind::kGradAllReduce) syncs.push_back(&t);
  }
  REQUIRE(syncs.size() == 2);
  // One bucket each (the model is far below 80 MB), in the order their
  // gradients complete: the experts' with the lowest MoE layer, the dense
  // ones with the embedding.
  std::swap(syncs[0], syncs[1]);
  CHECK(syncs[0]->groups.size() == 1);
  CHECK(syncs[0]->groups[0].size() == 16);
  CHECK(syncs[0]->bytes == Approx(dense_params(w.model) * 2));
  CHECK(syncs[1]->groups.size() == 8);
  CHECK(syncs[1]->groups[3] == std::vector<int>{3, 11});
  // 2 MoE layers x 8 local experts x 3 x 256 x 128 parameters, BF16 gradients.
  CHECK(syncs[1]->bytes == Approx(2.0 * 8 * 3 * 256 * 128 * 2));
  const Task& opt = g.tasks.back();
  CHECK(opt.kind == TaskKind::kOptimizer);
  CHECK(opt.deps == std::vector<TaskId>{syncs[1]->id, syncs[0]->id});
  const double params = dense_params(w.model) + expert_params_per_rank(w);
  CHECK(opt.hbm_bytes[0] == Approx(26 * params));  // seed 002: 2 + 3 x 4 read, 3 x 4 written
  CHECK(opt.flops[0] == Approx(15 * params));
}

TEST_CASE("same seed gives an identical graph", "[graph][determinism]") {
  WorkloadSpec w = load_workload("tiny-moe");
  std::ostringstream a, b, c;
  write_task_graph_json(a, build_task_graph(w));
  write_task_graph_json(b, build_task_graph(w));
  w.routing.seed = 99;
  write_task_graph_json(c, build_task_graph(w));
  CHECK(a.str() == b.str());
  CHECK(a.str() != c.str());
}

TEST_CASE("the JSON dump carries every task and matrix", "[graph][json]") {
  WorkloadSpec w = load_workload("tiny-moe");
  TaskGraph g = build_task_graph(w);
  std::ostringstream out;
  write_task_graph_json(out, g);
  nlohmann::json j = nlohmann::json::parse(out.str());
  CHECK(j["ranks"] == 8);
  CHECK(j["tasks"].size() == g.tasks.size());
  CHECK(j["traffic"].size() == g.traffic.size());
  CHECK(j["tasks"][0]["kind"] == "attention");
  CHECK(j["traffic"][0]["tokens"].size() == 64u);
  CHECK(std::string(to_string(TaskKind::kGradAllReduce)) == "grad_all_reduce");
  CHECK(std::string(to_string(Phase::kGradSync)) == "grad_sync");
  CHECK(std::string(to_string(Dtype::kFp8)) == "fp8");
}

// memory.recompute: "full" runs each layer's forward again before its
// backward (everything but combine, whose output is the next layer's kept
// input); "selective" adds DeepSeek-V3's recomputed pieces to the backward
// attention; "none" recomputes nothing.
TEST_CASE("recomputation adds the forward it drops to the backward", "[graph][recompute]") {
  const auto flops = [](const TaskGraph& g, Phase phase, TaskKind kind) {
    double sum = 0;
    for (const Task& t : g.tasks)
      if (t.phase == phase && t.kind == kind)
        for (double f : t.flops) sum += f;
    return sum;
  };
  const TaskGraph none = build_task_graph(load_workload("tiny-moe", {"memory.recompute=none"}));
  const TaskGraph full = build_task_graph(load_workload("tiny-moe", {"memory.recompute=full"}));
  for (TaskKind kind : {TaskKind::kAttention, TaskKind::kGate, TaskKind::kSharedExpert, TaskKind::kExpertGemm}) {
    CHECK(flops(none, Phase::kRecompute, kind) == 0);
    CHECK(flops(full, Phase::kRecompute, kind) == Approx(flops(none, Phase::kForward, kind)).epsilon(1e-12));
    CHECK(flops(full, Phase::kBackward, kind) == Approx(flops(none, Phase::kBackward, kind)).epsilon(1e-12));
  }
  // The dense layer's FFN is recomputed, the output head is not.
  const WorkloadSpec w = load_workload("tiny-moe");
  const double head = 8 * output_head_cost(w).flops;
  CHECK(flops(full, Phase::kRecompute, TaskKind::kDenseFfn) ==
        Approx(flops(none, Phase::kForward, TaskKind::kDenseFfn) - w.parallel.micro_batches * head).epsilon(1e-12));
  int dispatches = 0, combines = 0;
  for (const Task& t : full.tasks) {
    if (t.phase != Phase::kRecompute) continue;
    dispatches += t.kind == TaskKind::kDispatch;
    combines += t.kind == TaskKind::kCombine;
    for (TaskId d : t.deps) CHECK(full.tasks[static_cast<std::size_t>(d)].phase != Phase::kForward);
  }
  CHECK(dispatches == 3 * w.parallel.micro_batches);  // every MoE layer's dispatch again
  CHECK(combines == 0);

  // Selective: the backward attention carries 2 x tokens x the MLA up-projection parameters more.
  const TaskGraph sel = build_task_graph(load_workload("deepseek-v3", {"parallel.ep=8", "model.layers=4",
                                                                       "memory.recompute=selective"}));
  const TaskGraph nosel = build_task_graph(load_workload("deepseek-v3", {"parallel.ep=8", "model.layers=4",
                                                                         "memory.recompute=none"}));
  const double up = 1536.0 * 128 * 192 + 512.0 * 128 * 256;
  const double extra = flops(sel, Phase::kBackward, TaskKind::kAttention) -
                       flops(nosel, Phase::kBackward, TaskKind::kAttention);
  CHECK(extra == Approx(2.0 * 4096 * up * 4 /*layers*/ * 2 /*micro-batches*/ * 8 /*ranks*/).epsilon(1e-9));

  // Megatron's module list: mla_up_proj alone is the same GEMMs; mlp adds
  // the dense layers' FFN forward (DeepSeek-V3's first three of these four).
  const auto modules = [](const char* list) {
    return build_task_graph(load_workload("deepseek-v3", {"parallel.ep=8", "model.layers=4",
                                                          std::string("memory.recompute=") + list}));
  };
  const double up_only = flops(modules("[\"mla_up_proj\"]"), Phase::kBackward, TaskKind::kAttention) -
                         flops(nosel, Phase::kBackward, TaskKind::kAttention);
  CHECK(up_only == Approx(extra).epsilon(1e-9));
  const WorkloadSpec v3 = load_workload("deepseek-v3", {"parallel.ep=8", "model.layers=4"});
  WorkloadSpec whole = v3;
  whole.parallel.tokens_per_micro_batch = v3.parallel.micro_batch * v3.parallel.sequence_length;
  const double mlp = flops(modules("[\"mla_up_proj\", \"mlp\"]"), Phase::kBackward, TaskKind::kAttention) -
                     flops(nosel, Phase::kBackward, TaskKind::kAttention) - up_only;
  CHECK(mlp == Approx(dense_ffn_cost(whole).flops * 3 /*dense layers*/ * 2 /*micro-batches*/ * 8 /*ranks*/)
                   .epsilon(1e-9));
  // moe_act adds no FLOPs (a streaming kernel) but its bytes.
  CHECK(flops(modules("[\"moe_act\"]"), Phase::kBackward, TaskKind::kAttention) ==
        Approx(flops(nosel, Phase::kBackward, TaskKind::kAttention)).epsilon(1e-12));
}

TEST_CASE("sliding window: a windowed layer's core attends to at most W keys", "[graph]") {
  // GPT-OSS: a 128-token window on the even layers of 4096-token sequences.
  const WorkloadSpec w =
      load_workload("gpt-oss-120b", {"model.layers=2", "parallel.pp=1", "parallel.micro_batches=1"});
  CHECK(w.model.attention.windowed(0));
  CHECK_FALSE(w.model.attention.windowed(1));
  // (W (W + 1) / 2 + (S - W) W) / S keys per query under the window, (S + 1) / 2 without.
  CHECK(attention_context(w, 0) == Approx((128.0 * 129 / 2 + (4096.0 - 128) * 128) / 4096));
  CHECK(attention_context(w, 1) == Approx(4097.0 / 2));
  // The core scales with the keys; the projections do not.
  const double projections = 2.0 * 4096 * attention_params(w.model);
  const double core_full = attention_cost(w, 1).flops - projections, core_window = attention_cost(w, 0).flops - projections;
  CHECK(core_window / core_full == Approx(attention_context(w, 0) / attention_context(w, 1)));
  auto core = [](const Operators& ops) {
    for (const Operator& o : ops)
      if (o.op_class == OpClass::kAttention) return o;
    return Operator{};
  };
  CHECK(core(attention_cost(w, 0).ops).head_dim == 64);
  CHECK(core(attention_cost(w, 0).ops).context == Approx(attention_context(w, 0)));
  // The tasks carry it: layer 0's forward attention is the windowed one.
  const TaskGraph g = build_task_graph(w);
  CHECK(find(g, TaskKind::kAttention, Phase::kForward, 0, 0).flops[0] ==
        Approx(attention_cost(w, 0).flops / w.parallel.tp));
  CHECK(core(find(g, TaskKind::kAttention, Phase::kForward, 1, 0).ops).head_dim == 64);
}

TEST_CASE("operators: a SwiGLU's grouped gate/up GEMM, activation and down GEMM; the head's GEMM and loss", "[graph]") {
  const WorkloadSpec w = load_workload("qwen3-235b-a22b", {"model.layers=2", "parallel.pp=1", "parallel.vpp=1",
                                                           "parallel.schedule=\"1f1b\"", "parallel.micro_batches=1"});
  const TaskGraph g = build_task_graph(w);
  const Task& expert = find(g, TaskKind::kExpertGemm, Phase::kForward, 0, 0);
  REQUIRE(expert.ops.size() == 3);
  CHECK(expert.ops[0].op_class == OpClass::kGroupedGemm);
  CHECK(expert.ops[0].n == 2 * 1536);  // gate/up
  CHECK(expert.ops[0].k == 4096);
  CHECK(expert.ops[1].op_class == OpClass::kActivation);
  CHECK(expert.ops[1].fusable);  // Qwen3's plain SwiGLU
  CHECK(expert.ops[2].n == 4096);  // down
  CHECK(expert.ops[2].k == 1536);
  CHECK(expert.ops[0].flops == Approx(2 * expert.ops[2].flops));
  // Its backward: each GEMM's dgrad and wgrad, the activation's backward.
  const Task& back = find(g, TaskKind::kExpertGemm, Phase::kBackward, 0, 0);
  REQUIRE(back.ops.size() == 5);
  CHECK(back.ops[0].op_class == OpClass::kActivation);
  CHECK(back.ops[0].backward);
  CHECK(total_flops(back.ops) == Approx(2 * total_flops(expert.ops)));
  // TP2 shards the output head's vocabulary (a dense task after the last layer): N = 151936 / 2.
  const Task& head = find(g, TaskKind::kDenseFfn, Phase::kForward, w.model.layers, 0);
  REQUIRE(head.ops.size() == 3);
  CHECK(head.ops[1].n == 151936 / 2);
  CHECK(head.ops[1].k == 4096);
  CHECK(head.ops[2].op_class == OpClass::kLoss);
  CHECK(head.ops[2].bytes == Approx(4096.0 * 151936 / 2 * 6));  // BF16 logits read, FP32 upcast
}

TEST_CASE("MTP: a module's projection and MoE block, dispatch and combine included, before the head", "[graph]") {
  // tiny-moe, 4 layers: the module sits after the last layer (layer index 4, beside the head).
  const WorkloadSpec w0 = load_workload("tiny-moe");
  const WorkloadSpec w1 = load_workload("tiny-moe", {"model.mtp_modules=1"});
  const TaskGraph g0 = build_task_graph(w0), g1 = build_task_graph(w1);
  const int mtp_layer = w1.model.layers, last = w1.model.layers - 1;
  std::vector<const Task*> forward;
  for (const Task& t : g1.tasks)
    if (t.layer == mtp_layer && t.phase == Phase::kForward && t.micro_batch == 0) forward.push_back(&t);
  const std::vector<TaskKind> kinds = {TaskKind::kDenseFfn, TaskKind::kAttention,    TaskKind::kGate,
                                       TaskKind::kDispatch, TaskKind::kExpertGemm,   TaskKind::kSharedExpert,
                                       TaskKind::kCombine,  TaskKind::kDenseFfn};
  REQUIRE(forward.size() == kinds.size());
  for (std::size_t i = 0; i < kinds.size(); ++i) CHECK(forward[i]->kind == kinds[i]);
  const Task &projection = *forward[0], &dispatch = *forward[3], &experts = *forward[4], &combine = *forward[6],
             &head1 = *forward[7];
  CHECK(projection.flops[0] == Approx(mtp_projection_cost(w1).flops));
  CHECK(mtp_projection_cost(w1).flops == Approx(2.0 * 256 * 2 * 512 * 512));  // 2 x tokens x 2h x h
  // Its tokens route as the last layer's: the same traffic and the same expert loads, rank by rank.
  CHECK(dispatch.traffic == find(g1, TaskKind::kDispatch, Phase::kForward, last, 0).traffic);
  CHECK(experts.flops == find(g1, TaskKind::kExpertGemm, Phase::kForward, last, 0).flops);
  CHECK(std::find(experts.deps.begin(), experts.deps.end(), dispatch.id) != experts.deps.end());
  CHECK(std::find(head1.deps.begin(), head1.deps.end(), combine.id) != head1.deps.end());
  const Task& head0 = find(g0, TaskKind::kDenseFfn, Phase::kForward, mtp_layer, 0);
  CHECK(head1.flops[0] == Approx(2 * head0.flops[0]));  // the main head and the module's
  // The backward runs the block in reverse, then the projection, after the head's backward.
  const Task& combine_back = find(g1, TaskKind::kCombine, Phase::kBackward, mtp_layer, 0);
  const Task& head_back = find(g1, TaskKind::kDenseFfn, Phase::kBackward, mtp_layer, 0);
  CHECK(std::find(combine_back.deps.begin(), combine_back.deps.end(), head_back.id) != combine_back.deps.end());
  // Seven more tasks per micro-batch each way (tp 1: no all-reduce).
  CHECK(g1.tasks.size() == g0.tasks.size() + 14 * static_cast<std::size_t>(w1.parallel.micro_batches));
}

TEST_CASE("MTP modules count in the pipeline split, as Megatron's layout places them", "[graph]") {
  // tiny-moe's 4 layers and one MTP module over 5 stages: a position each,
  // the module alone on the last stage with the head; without it, 4 layers
  // cannot fill 5 stages.
  CHECK_THROWS(load_workload("tiny-moe", {"parallel.pp=5"}));
  const WorkloadSpec w = load_workload("tiny-moe", {"model.mtp_modules=1", "parallel.pp=5"});
  const TaskGraph g = build_task_graph(w);
  int module_tasks = 0;
  for (const Task& t : g.tasks) {
    if (t.is_collective() || t.stage < 0 || t.layer < 0) continue;  // layer -1: a stage's optimizer
    CHECK(t.stage == std::min(t.layer, 4));  // layer l on stage l; the module and head (layer 4) on stage 4
    module_tasks += t.layer == 4 ? 1 : 0;
  }
  // Per micro-batch each way: the projection, attention, router, experts, shared expert and the head.
  CHECK(module_tasks == 12 * w.parallel.micro_batches);
}
