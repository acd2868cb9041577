// The plan's layout space and bound, without simulating: what the cheap
// checks keep, and the bound's closed forms on a model whose stages are alike.
#include <catch2/catch.hpp>

#include "app/plan_bound.hpp"
#include "app/plan_candidates.hpp"
#include "topology/cluster_spec.hpp"
#include "workloads/workload_loader.hpp"

namespace {

using epsim::app::PlanLayout;

// 32 NPUs of 8 per node, 4 layers, 32 experts, 32 sequences, the default dimensions.
epsim::app::PlanSpace small_space() {
  epsim::app::PlanSpace s;
  s.npus = 32;
  s.npus_per_node = 8;
  s.global_batch = 32;
  s.layers = 4;
  s.experts = 32;
  return s;
}

epsim::app::PlanRates unit_rates() { return {1e12, 1e12, 1e12, 1e12}; }

epsim::workloads::WorkloadSpec tiny(std::vector<std::string> overrides) {
  // Four MoE layers and a one-token vocabulary: stages alike, the output head negligible.
  for (const char* o : {"model.dense_layers=0", "model.vocab=1", "parallel.ranks_per_node=8", "parallel.ep=8"})
    overrides.insert(overrides.begin(), o);
  return epsim::workloads::load_workload("tiny-moe", overrides);
}

}  // namespace

TEST_CASE("the cheap checks keep only layouts that fill the NPUs, the nodes and the batch") {
  const epsim::app::Enumeration e = epsim::app::enumerate_layouts(small_space());
  // 4 tp x 6 pp x 4 schedule chunks x 6 ep x 3 micro-batch sizes x 3 recomputations x 2 ZeRO stages.
  CHECK(e.considered == 4 * 6 * 4 * 6 * 3 * 3 * 2);
  CHECK(static_cast<long long>(e.layouts.size()) + [&] {
    long long n = 0;
    for (const auto& [key, count] : e.skipped) n += count;
    return n;
  }() == e.considered);
  CHECK(e.layouts.size() == 582);  // as `epsim plan --platform a2 --set node.count=4 --workload tiny-moe` checks them
  for (const PlanLayout& l : e.layouts) {
    CHECK(l.tp * l.dp * l.pp == 32);
    CHECK(8 % l.tp == 0);
    CHECK(l.ep % 8 == 0);
    CHECK((l.tp * l.dp) % l.ep == 0);
    CHECK(l.pp * l.vpp <= 4);
    CHECK(l.global_batch % (l.micro_batch * l.dp) == 0);
    if (l.schedule == epsim::workloads::PipelineSchedule::kDualPipe) CHECK((l.pp % 2 == 0 && l.micro_batches() % 2 == 0 && l.micro_batches() >= 2 * l.pp));
    if (l.schedule == epsim::workloads::PipelineSchedule::kInterleaved) CHECK(l.micro_batches() % l.pp == 0);
  }
  CHECK(std::is_sorted(e.layouts.begin(), e.layouts.end()));
}

TEST_CASE("a layout's edits and name say every key") {
  PlanLayout l;
  l.pp = 2;
  l.vpp = 2;
  l.schedule = epsim::workloads::PipelineSchedule::kInterleaved;
  l.ep = 8;
  l.dp = 16;
  l.global_batch = 32;
  l.recompute = epsim::workloads::Recompute::kFull;
  l.zero_stage = 1;
  CHECK(l.name() == "TP1 PP2 VPP2 EP8 DP16 mb1 interleaved rc-full ZeRO-1");
  CHECK(l.micro_batches() == 2);
  const epsim::workloads::WorkloadEdits e = l.edits();
  CHECK(e.tp->value == 1);
  CHECK(e.pp->value == 2);
  CHECK(e.vpp->value == 2);
  CHECK(e.ep->value == 8);
  CHECK(e.etp->value == 1);
  CHECK(e.dp->value == 16);
  CHECK(e.micro_batch->value == 1);
  CHECK(e.global_batch->value == 32);
  CHECK(e.schedule->value == epsim::workloads::PipelineSchedule::kInterleaved);
  CHECK(e.recompute->value == epsim::workloads::Recompute::kFull);
  CHECK(e.zero_stage->value == 1);
  CHECK_FALSE(e.micro_batches);  // derived from the global batch
  CHECK_FALSE(e.ranks_per_node);  // the platform's, set by the search
  // Errors at a layout's edits read as the --set each equals: plan reports their keys.
  CHECK(e.schedule->option.empty());
}

TEST_CASE("the bound: one stage's work, full recomputation a third more, the 1F1B fill and drain") {
  const auto w1 = tiny({"parallel.pp=1", "parallel.micro_batches=4"});
  const double one = epsim::app::plan_step_bound_s(w1, unit_rates());
  REQUIRE(one > 0);
  // Linear in the micro-batches on one stage.
  CHECK(epsim::app::plan_step_bound_s(tiny({"parallel.pp=1", "parallel.micro_batches=8"}), unit_rates()) ==
        Approx(2 * one).epsilon(1e-12));
  // Full recomputation: forward + backward + the forward again, 4 thirds of 3.
  CHECK(epsim::app::plan_step_bound_s(tiny({"parallel.pp=1", "parallel.micro_batches=4", "memory.recompute=\"full\""}),
                                      unit_rates()) == Approx(one * 4 / 3).epsilon(1e-12));
  // 1F1B over 4 alike stages: (m + pp - 1) passes of a quarter of the model, (pp - 1)/m more than their work.
  const double pp4 = epsim::app::plan_step_bound_s(tiny({"parallel.pp=4", "parallel.dp=8", "parallel.micro_batches=4"}),
                                                   unit_rates());
  CHECK(pp4 == Approx(one / 4 * (4 + 3) / 4).epsilon(1e-3));
  // Interleaved with 2 chunks per stage halves the fill and drain: (m + (pp - 1) / vpp) passes.
  const double vpp2 = epsim::app::plan_step_bound_s(
      tiny({"model.layers=8", "parallel.pp=4", "parallel.vpp=2", "parallel.dp=8", "parallel.micro_batches=4"}),
      unit_rates());
  const double one8 = epsim::app::plan_step_bound_s(tiny({"model.layers=8", "parallel.pp=1", "parallel.micro_batches=4"}),
                                                    unit_rates());
  CHECK(vpp2 == Approx(one8 / 4 * (4 + 1.5) / 4).epsilon(1e-3));
}

TEST_CASE("the bound's rates: the GEMM dtype's peak, its fallback's on an NPU without it, times each class's best") {
  epsim::topology::ClusterSpec c;
  c.npu.flops_bf16 = 100;
  c.npu.flops_int8 = 400;
  c.stack.attention.max = 0.5;
  c.stack.attention_backward.max = 0.5;
  c.stack.gemm_bf16.max = 0.8;
  c.stack.gemm_fp8.max = 0.8;
  c.stack.grouped_bf16.max = 0.6;
  c.stack.grouped_fp8.max = 0.6;
  epsim::workloads::PrecisionSpec p;
  p.gemm = epsim::workloads::Dtype::kFp8;
  p.gemm_fallback = epsim::workloads::Dtype::kBf16;
  auto r = epsim::app::plan_rates(c, p);
  CHECK(r.peak_flops == 100);
  CHECK(r.attention_flops == 80);  // its projections are GEMMs: the larger of the two classes' bests
  CHECK(r.dense_flops == 80);
  CHECK(r.grouped_flops == 60);
  p.gemm_fallback = epsim::workloads::Dtype::kInt8;
  CHECK(epsim::app::plan_rates(c, p).peak_flops == 400);
  c.npu.flops_fp8 = 200;
  CHECK(epsim::app::plan_rates(c, p).peak_flops == 200);
}
