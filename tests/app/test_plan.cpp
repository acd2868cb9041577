// The plan's layout space and bound, without simulating: what the cheap
// checks keep, and the bound's closed forms on a model whose stages are alike.
#include <catch2/catch.hpp>

#include "app/plan_bound.hpp"
#include "app/plan_candidates.hpp"
#include "app/plan_comm_bound.hpp"
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
  // The chains alone: on 4 alike 1F1B stages, the last waits for 3 stages' forward and their backward.
  const std::vector<double> chains = epsim::app::plan_fill_drain_s(
      tiny({"parallel.pp=4", "parallel.dp=8", "parallel.micro_batches=4"}), unit_rates());
  REQUIRE(chains.size() == 4);
  CHECK(chains[0] == 0);
  CHECK(chains[3] == Approx(one / 4 * 3 / 4).epsilon(1e-3));  // 3 of the 4 stages' (F + B) of one pass
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

TEST_CASE("expected remote nodes per token: the seeds' exact form, and a node limit's min(limit, D)") {
  using epsim::app::expected_remote_nodes;
  // Unlimited: E[D] = N(1 - C(E-g, k)/C(E, k)) (workloads::distinct_ranks_exact), (N-1)/N of it remote.
  CHECK(expected_remote_nodes(8, 32, 8, 0) ==
        Approx(epsim::workloads::distinct_ranks_exact(8, 256, 8) * 7 / 8).epsilon(1e-12));
  CHECK(expected_remote_nodes(32, 8, 8, 0) ==
        Approx(epsim::workloads::distinct_ranks_exact(32, 256, 8) * 31 / 32).epsilon(1e-12));
  // 4 nodes of 2 experts, top-2: both on one node with probability 4/28, else two nodes.
  CHECK(expected_remote_nodes(4, 2, 2, 0) == Approx((4.0 / 28 + 2 * 24.0 / 28) * 3 / 4).epsilon(1e-12));
  CHECK(expected_remote_nodes(4, 2, 2, 1) == Approx(1.0 * 3 / 4).epsilon(1e-12));  // a token keeps to one node
  CHECK(expected_remote_nodes(4, 2, 2, 4) == expected_remote_nodes(4, 2, 2, 0));   // a limit that does not bind
  CHECK(expected_remote_nodes(1, 32, 8, 0) == 0);  // one node: nothing leaves it
  // DeepSeek-V3 at EP64 on 8 nodes, at most 4 nodes per token: just under 4 nodes hit, 7/8 of them remote.
  const double ds = expected_remote_nodes(8, 32, 8, 4);
  CHECK(ds < 4 * 7.0 / 8);
  CHECK(ds > 3.9 * 7.0 / 8);
}

TEST_CASE("the communication bound's rates: line rates times the larger efficiency, every path into a rank") {
  epsim::topology::ClusterSpec c;
  c.node.npus = 8;
  c.node.fabric = epsim::topology::NodeFabricKind::kMesh;
  c.node.link_bandwidth_Bps = 50e9;
  c.node.link_efficiency = 0.8;
  c.node.low_latency_efficiency = 0.9;
  epsim::topology::ScaleoutSpec s;
  s.nic_bandwidth_Bps = 25e9;
  s.nic_efficiency = 0.5;
  s.low_latency_efficiency = 0.4;
  c.scaleout = s;
  epsim::app::PlanLinks l = epsim::app::plan_links(c);
  CHECK(l.node_out_Bps == Approx(8 * 25e9 * 0.5));            // eight NICs
  CHECK(l.rank_in_Bps == Approx(7 * 50e9 * 0.9 + 25e9 * 0.5));  // seven mesh pairs and a NIC
  c.node.fabric = epsim::topology::NodeFabricKind::kSwitch;
  c.scaleout->nic_per_npu = false;
  l = epsim::app::plan_links(c);
  CHECK(l.node_out_Bps == Approx(25e9 * 0.5));  // one NIC per node
  CHECK(l.rank_in_Bps == Approx(50e9 * 0.9 + 25e9 * 0.5));  // a switch port and the NIC
  c.supernode = epsim::topology::SupernodeSpec{};
  c.supernode->port_bandwidth_Bps = 100e9;
  l = epsim::app::plan_links(c);
  CHECK(l.node_out_Bps == 0);  // cross-node traffic may take the supernode's ports: no NIC bound
  CHECK(l.rank_in_Bps == Approx(50e9 * 0.9 + 25e9 * 0.5 + 100e9));
  c.kernels.package_npus = 2;
  CHECK(epsim::app::plan_links(c).rank_in_Bps == 0);  // a package link it does not see: no rank bound
}

TEST_CASE("the communication bound: each stage's all-to-all bytes off its nodes, at 95 % of uniform routing's") {
  using epsim::workloads::Dtype;
  const epsim::app::PlanLinks links{8, 100e9, 0};  // 100 GB/s out of a node; no rank term
  // EP16 over two nodes of 8, uniform routing, no node limit, one stage.
  const std::vector<std::string> uniform = {"routing.kind=\"uniform\"", "model.node_limit=0", "parallel.ep=16",
                                            "parallel.dp=16", "parallel.pp=1", "parallel.micro_batches=4"};
  const auto w = tiny(uniform);
  const double grad = epsim::workloads::token_bytes(Dtype::kBf16, 512, w.precision.scale_block);
  const double per_token = epsim::workloads::dispatch_bytes_per_token(w) + epsim::workloads::combine_bytes_per_token(w) + 2 * grad;
  const double remote = 0.95 * epsim::app::expected_remote_nodes(2, 16, 4, 0);
  const double node_bytes = 4 /* micro-batches */ * 4 /* MoE layers */ * 8 * 256.0 /* tokens per rank */ * remote * per_token;
  CHECK(epsim::app::plan_comm_bound_s(w, links) == Approx(node_bytes / 100e9).epsilon(1e-12));
  // Full recomputation sends each layer's dispatch again.
  std::vector<std::string> full = uniform;
  full.push_back("memory.recompute=\"full\"");
  CHECK(epsim::app::plan_comm_bound_s(tiny(full), links) ==
        Approx((node_bytes + 4 * 4 * 8 * 256.0 * remote * epsim::workloads::dispatch_bytes_per_token(w)) / 100e9).epsilon(1e-12));
  // Skewed routing: only what every routing must send (top-4 of 16 experts per node may all stay home).
  std::vector<std::string> zipf = uniform;
  zipf[0] = "routing.kind=\"zipf\"";
  CHECK(epsim::app::plan_comm_bound_s(tiny(zipf), links) == 0);
  // The stage's fill and drain come on top: none of its all-to-alls runs outside them.
  CHECK(epsim::app::plan_comm_bound_s(w, links, {0.25}) == Approx(node_bytes / 100e9 + 0.25).epsilon(1e-12));
  CHECK(epsim::app::plan_fill_drain_s(w, unit_rates()) == std::vector<double>{0.0});  // one stage: no chain
  // EP8 on one node: nothing leaves it.
  CHECK(epsim::app::plan_comm_bound_s(tiny({"routing.kind=\"uniform\"", "parallel.pp=1"}), links) == 0);
}
