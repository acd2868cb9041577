// Loading workloads: presets, overrides, byte counts per token, and the
// table of bad input files (one defect each) with their exact messages.
#include <algorithm>
#include <fstream>

#include <catch2/catch.hpp>

#include "workloads/expert_weights.hpp"
#include "core/moe_formulas.hpp"
#include "workloads/workload_loader.hpp"
#include "workload_text.hpp"

using namespace epsim;
using namespace epsim::workloads;

TEST_CASE("the DeepSeek-V3 preset reads as the technical report's model", "[workload]") {
  WorkloadSpec w = load_workload("deepseek-v3");
  CHECK(w.model.layers == 61);
  CHECK(w.model.dense_layers == 3);
  CHECK(w.model.moe_layers() == 58);
  CHECK(w.model.hidden == 7168);
  CHECK(w.model.experts == 256);
  CHECK(w.model.shared_experts == 1);
  CHECK(w.model.top_k == 8);
  CHECK(w.model.expert_ffn == 2048);
  CHECK(w.model.dense_ffn == 18432);
  CHECK(w.model.node_limit == 4);
  CHECK(w.model.vocab == 129280);
  CHECK(w.model.attention.kind == AttentionKind::kMla);
  CHECK(w.model.attention.q_lora_rank == 1536);
  CHECK(w.model.attention.kv_lora_rank == 512);
  CHECK(w.parallel.ep == 256);
  CHECK(w.precision.dispatch == Dtype::kFp8);
}

TEST_CASE("every preset loads, by name or by path", "[workload]") {
  CHECK(workload_presets() == std::vector<std::string>{"deepep-ascend", "deepseek-v3", "deepseek-v3-decode",
                                                       "deepseek-v3-pp8", "deepseek-v3-prefill",
                                                       "deepseek-v3-production", "gpt-oss-120b", "qwen3-235b-a22b",
                                                       "qwen3-30b-a3b", "tiny-moe"});
  for (const std::string& name : workload_presets()) {
    INFO(name);
    CHECK_NOTHROW(load_workload(name));
    CHECK_NOTHROW(load_workload("workloads/presets/" + name + ".toml"));
  }
}

TEST_CASE("deepseek-v3-production is DeepSeek's layout: 2048 ranks, PP16 DualPipe, EP64, EDP2, 15,360 sequences",
          "[workload][base]") {
  const WorkloadSpec w = load_workload("deepseek-v3-production");
  CHECK(w.parallel.world() == 2048);
  CHECK(w.parallel.tp == 1);
  CHECK(w.parallel.pp == 16);
  CHECK(w.parallel.ep == 64);
  CHECK(w.parallel.edp() == 2);
  CHECK(w.parallel.schedule == PipelineSchedule::kDualPipe);
  CHECK(w.parallel.global_batch == 15360);
  CHECK(w.parallel.tokens_per_micro_batch == 4096);
  CHECK(w.model.node_limit == 4);
  CHECK(w.precision.gemm == Dtype::kFp8);
  CHECK(w.memory.zero_stage == 1);
}

// deepseek-v3-pp8 is deepseek-v3 (its base) with its own layout and memory recipe.
TEST_CASE("a preset with a base keeps the base's model and replaces its layout", "[workload][base]") {
  const WorkloadSpec base = load_workload("deepseek-v3");
  const WorkloadSpec w = load_workload("deepseek-v3-pp8");
  CHECK(w.model.layers == base.model.layers);
  CHECK(w.model.attention.q_lora_rank == 1536);
  CHECK(w.precision.dispatch == base.precision.dispatch);
  CHECK(w.memory.zero_stage == 1);
  CHECK(w.memory.recompute == Recompute::kFull);
  CHECK_FALSE(w.memory.allow_oversubscribed);
  CHECK(w.parallel.pp == 8);
  CHECK(w.parallel.vpp == 2);
  CHECK(w.parallel.ep == 32);
  CHECK(w.parallel.world() == 256);
  CHECK(w.parallel.micro_batches == 16);
  CHECK(w.parallel.global_batch == 512);
}

TEST_CASE("overrides given with --set change one key of a preset", "[workload]") {
  WorkloadSpec w = load_workload("deepseek-v3", {"parallel.ep=64", "routing.kind=zipf", "routing.zipf_s=1.2"});
  CHECK(w.parallel.ep == 64);
  CHECK(w.routing.kind == RoutingKind::kZipf);
  CHECK(w.routing.zipf_s == 1.2);
  CHECK_THROWS_WITH(load_workload("deepseek-v3", {"parallel.ep=48"}),
                    "--set parallel.ep=48: error: parallel.ep: model.experts (256) is not divisible by parallel.ep (48), unless routing.redundant_experts = 32 fills every rank to 6 expert slots");
}

TEST_CASE("payload per token follows the seeds and DeepEP", "[workload]") {
  // Seed 001: FP8 7168 + 56 scales x 4 + 6 x 8 indices + 6 x 4 weights = 7464 B;
  // combine 7168 x 2 + 6 x 4 = 14360 B.
  WorkloadSpec seed = load_workload("deepep-ascend");
  CHECK(dispatch_bytes_per_token(seed) == 7464);
  CHECK(combine_bytes_per_token(seed) == 14360);
  // DeepEP's benchmark: hidden x (1 + 4/128) for FP8, no metadata.
  WorkloadSpec v3 = load_workload("deepseek-v3");
  CHECK(dispatch_bytes_per_token(v3) == 7168 + 224);
  CHECK(combine_bytes_per_token(v3) == 14336);
  CHECK(token_bytes(Dtype::kFp8, 7000, 128) == 7000 + 55 * 4);  // partial last block has a scale
}

TEST_CASE("distinct-rank closed forms", "[workload]") {
  // Seed 000 section 2 prints 4.41, 5.14, 5.55, 5.77, 5.88 for R = 8..128, k = 6.
  CHECK(epsim::expected_distinct_ranks(8, 6) == Approx(4.41).margin(0.005));
  CHECK(epsim::expected_distinct_ranks(128, 6) == Approx(5.88).margin(0.005));
  // Exact without replacement, by hand: R = 2, E = 4 (m = 2), k = 2: a rank is
  // missed when both picks are the other rank's pair: 1/C(4,2) = 1/6.
  CHECK(distinct_ranks_exact(2, 4, 2) == Approx(2.0 * (1 - 1.0 / 6)));
  // One expert per rank: every pick is its own rank.
  CHECK(distinct_ranks_exact(256, 256, 8) == Approx(8.0));
}

TEST_CASE("a trace CSV sets per-layer loads", "[workload][trace]") {
  const std::string path = std::string(EPSIM_BINARY_DIR) + "/trace_good.csv";
  {
    std::ofstream out(path);
    out << "layer,expert,tokens\n";
    for (int layer = 1; layer < 3; ++layer) {
      for (int e = 0; e < 64; ++e) out << layer << "," << e << "," << (e < 8 ? 100 : 1) << "\n";
    }
  }
  testing::Knobs k;
  k.routing = "kind = \"trace\"\ntrace = \"" + path + "\"";
  WorkloadSpec w = testing::workload(k);
  REQUIRE(w.routing.trace.tokens.size() == 2);
  CHECK(w.routing.trace.tokens[0][0] == 100);
  CHECK(w.routing.trace.tokens[1][63] == 1);
}

TEST_CASE("bad workload files name file:line:col, key and problem", "[workload][bad]") {
  struct Row {
    const char* file;
    const char* message;
  };
  const std::string dir = "tests/workloads/bad/";
  const Row rows[] = {
      {"bad_schema.toml", "bad_schema.toml:2:10: error: schema: expected an integer in [1, 1], got 2"},
      {"top_k_over_experts.toml",
       "top_k_over_experts.toml:13:9: error: model.top_k: must be <= model.experts (32), got 40"},
      {"experts_not_divisible.toml",
       "experts_not_divisible.toml:24:6: error: parallel.ep: model.experts (32) is not divisible by parallel.ep (6), unless routing.redundant_experts = 4 fills every rank to 6 expert slots"},
      {"zero_tokens.toml",
       "zero_tokens.toml:27:15: error: parallel.micro_batch: expected an integer in [1, 1073741824], got 0"},
      {"unknown_key.toml",
       "unknown_key.toml:26:18: error: parallel.micro_batchess: unknown key (did you mean \"micro_batches\"?)"},
      {"wrong_type.toml", "wrong_type.toml:8:10: error: model.hidden: expected an integer, got a string"},
      {"node_limit_impossible.toml",
       "node_limit_impossible.toml:14:14: error: model.node_limit: 1 nodes x 8 experts per node = 8 experts "
       "reachable, fewer than top_k = 12 (ep 8, ranks_per_node 2)"},
      {"ranks_per_node_not_dividing.toml",
       "ranks_per_node_not_dividing.toml:29:18: error: parallel.ranks_per_node: must divide parallel.ep (8), got 3"},
      {"routing_kind_typo.toml",
       "routing_kind_typo.toml:38:8: error: routing.kind: expected one of uniform, zipf, hot, trace, got \"zipff\" "
       "(did you mean \"zipf\"?)"},
      {"hot_too_narrow.toml",
       "hot_too_narrow.toml:38:8: error: routing.kind: MoE layer 1: only 2 experts have a nonzero pick weight, "
       "fewer than top_k = 4"},
      {"trace_bad_row.toml",
       "trace_bad_row.csv:3:1: error: routing.trace: expected 3 fields \"layer,expert,tokens\", got 2"},
      {"trace_unknown_layer.toml",
       "trace_unknown_layer.csv:3:1: error: routing.trace: layer 9 is not a MoE layer of the model (MoE layers are "
       "1..3)"},
      {"trace_negative_count.toml",
       "trace_negative_count.csv:3:5: error: routing.trace: tokens: expected a count >= 0, got -5"},
      {"trace_missing_layer.toml",
       "trace_missing_layer.csv: error: routing.trace: no positive load for MoE layer 3: every MoE layer needs rows"},
  };
  for (const Row& r : rows) {
    INFO(r.file);
    std::string message = "no error";
    try {
      load_workload(dir + r.file);
    } catch (const InputError& e) {
      message = e.what();
    }
    CHECK(message == dir + r.message);
  }
}

TEST_CASE("keys of another routing kind are errors, not ignored", "[workload][bad]") {
  testing::Knobs k;
  k.routing = "kind = \"uniform\"\nzipf_s = 1.0";
  CHECK_THROWS_WITH(testing::workload(k),
                    "test.toml:29:10: error: routing.zipf_s: only read when routing.kind = \"zipf\"");
  CHECK_THROWS_WITH(load_workload("no-such-preset"), Catch::Contains("no such workload file or preset"));
}

TEST_CASE("routing.hot_placement puts the popular slots first, spread over ranks or shuffled", "[workload][routing]") {
  // 8 ranks x 8 experts; zipf weights fall with the slot, so the order of
  // weights tells which expert holds which slot.
  testing::Knobs k;
  auto weights = [&](const std::string& routing, int moe_layer) {
    k.routing = "kind = \"zipf\"\nzipf_s = 1.0\n" + routing;
    return expert_weights(testing::workload(k), moe_layer);
  };
  auto hottest = [](const std::vector<double>& w) {
    return static_cast<int>(std::max_element(w.begin(), w.end()) - w.begin());
  };
  // Default (no order): "first", the worst case: slots 0..7 all on rank 0.
  const std::vector<double> first = weights("", 0);
  CHECK(first == weights("hot_placement = \"first\"", 0));
  for (int e = 1; e < 64; ++e) CHECK(first[e] < first[e - 1]);
  // "spread": slot i on rank i mod 8, so the 8 hottest experts sit on 8 ranks (expert r x 8 holds slot r).
  const std::vector<double> spread = weights("hot_placement = \"spread\"", 0);
  for (int r = 0; r < 8; ++r) CHECK(spread[static_cast<std::size_t>(r * 8)] == Approx(first[r]));
  CHECK(spread[1] == Approx(first[8]));
  // "random" is order "fixed"'s seeded shuffle (its default placement).
  const std::vector<double> random = weights("hot_placement = \"random\"", 0);
  CHECK(random == weights("order = \"fixed\"", 0));
  CHECK(random != first);
  CHECK(random == weights("hot_placement = \"random\"", 2));  // the same in every layer without per_layer
  // order "per_layer" with "first": the hot rank moves on by one rank per layer.
  for (int m = 0; m < 2; ++m) CHECK(hottest(weights("order = \"per_layer\"\nhot_placement = \"first\"", m)) == m * 8);
  // order "per_layer" alone keeps its seeded shuffle per layer.
  CHECK(weights("order = \"per_layer\"", 1) == weights("order = \"per_layer\"\nhot_placement = \"random\"", 1));
  CHECK(weights("order = \"per_layer\"", 0) != weights("order = \"per_layer\"", 1));
}

TEST_CASE("routing.hot_placement is only read for zipf and hot routing, and only its three values", "[workload][bad]") {
  testing::Knobs k;
  k.routing = "kind = \"uniform\"\nhot_placement = \"spread\"";
  CHECK_THROWS_WITH(testing::workload(k), Catch::Contains("routing.hot_placement: only read when routing.kind = "
                                                          "\"zipf\" or \"hot\""));
  k.routing = "kind = \"zipf\"\nzipf_s = 1.0\nhot_placement = \"middle\"";
  CHECK_THROWS_WITH(testing::workload(k), Catch::Contains("routing.hot_placement"));
}

TEST_CASE("precision.gemm_fallback names the dtype GEMMs fall back to, and the DeepSeek-V3 preset falls back to BF16",
          "[workload]") {
  const WorkloadSpec v3 = load_workload("deepseek-v3");
  CHECK(v3.precision.gemm == Dtype::kFp8);
  REQUIRE(v3.precision.gemm_fallback.has_value());
  CHECK(*v3.precision.gemm_fallback == Dtype::kBf16);
  CHECK_FALSE(load_workload("deepseek-v3", {"precision.gemm_fallback=none"}).precision.gemm_fallback.has_value());
  CHECK(*load_workload("deepseek-v3", {"precision.gemm_fallback=int8"}).precision.gemm_fallback == Dtype::kInt8);
  CHECK_FALSE(load_workload("tiny-moe").precision.gemm_fallback.has_value());
  CHECK_THROWS_WITH(load_workload("deepseek-v3", {"precision.gemm_fallback=fp4"}),
                    Catch::Contains("precision.gemm_fallback"));
}
