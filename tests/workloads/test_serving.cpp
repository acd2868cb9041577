// Serving steps (docs/serving.md): the [serving] table as the loader reads
// it, the decode attention's closed form, the serving graph's shape and
// its memory terms.
#include <algorithm>
#include <string>

#include <catch2/catch.hpp>

#include "core/toml_reader.hpp"
#include "workloads/layer_costs.hpp"
#include "workloads/serving_ledger.hpp"
#include "workloads/serving_memory.hpp"
#include "workloads/task_graph_builder.hpp"
#include "workloads/workload_loader.hpp"

using namespace epsim;
using namespace epsim::workloads;

namespace {

// A small MoE served on 8 ranks; `serving` is the [serving] table's body.
std::string serving_text(const std::string& serving, const std::string& parallel_extra = "") {
  return R"(schema = 1
[model]
layers = 3
dense_layers = 1
hidden = 256
dense_ffn = 512
expert_ffn = 128
experts = 16
shared_experts = 1
top_k = 4
vocab = 1000
mtp_modules = 1
context_length = 4096
[model.attention]
kind = "gqa"
heads = 4
kv_heads = 2
head_dim = 64
[parallel]
ep = 8
dp = 8
ranks_per_node = 8
)" + parallel_extra +
         "[serving]\n" + serving;
}

WorkloadSpec serving_workload(const std::string& serving, const std::string& parallel_extra = "") {
  toml::table root = parse_toml_text(serving_text(serving, parallel_extra), "test.toml");
  return read_workload(root, "test.toml", "");
}

std::string serving_error(const std::string& serving, const std::string& parallel_extra = "") {
  try {
    serving_workload(serving, parallel_extra);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("a decode step's batch: micro-batches of sequences, one token each and its drafts", "[serving]") {
  const WorkloadSpec w = load_workload("deepseek-v3-decode");
  REQUIRE(w.serving);
  CHECK(w.serving->phase == ServingPhase::kDecode);
  CHECK(w.parallel.micro_batches == 2);
  CHECK(w.parallel.micro_batch == 32);
  CHECK(w.parallel.sequence_length == 2);  // the next token and one MTP draft, verified together
  CHECK(w.parallel.tokens_per_micro_batch == 64);
  CHECK(w.parallel.global_batch == 64 * 144);  // DP144, as DeepSeek's decode unit
  CHECK(w.expert_slots_per_rank() == 2);        // (256 experts + 32 replicas) / EP144
  CHECK(w.serving->served_tokens() == Approx(1.875));  // 1 + 0.875 x 1 draft
  CHECK(w.serving->cached_tokens() == 4989 + 2);
}

TEST_CASE("turning a preset's drafts off with --set takes its acceptance rate with them", "[serving]") {
  const WorkloadSpec w = load_workload("deepseek-v3-decode", {"serving.mtp_tokens=0"});
  REQUIRE(w.serving);
  CHECK(w.serving->mtp_tokens == 0);
  CHECK(w.serving->served_tokens() == 1.0);
  CHECK(w.parallel.sequence_length == 1);
  // Written side by side, or both set, the rate has no drafts to accept.
  CHECK(serving_error("phase = \"decode\"\nbatch = 8\nkv_length = 10\nmtp_tokens = 0\nacceptance = 0.5\n") ==
        "test.toml:28:14: error: serving.acceptance: needs serving.mtp_tokens > 0");
  CHECK_THROWS_WITH(load_workload("deepseek-v3-decode", {"serving.mtp_tokens=0", "serving.acceptance=0.5"}),
                    "--set serving.acceptance=0.5: error: serving.acceptance: needs serving.mtp_tokens > 0");
}

TEST_CASE("a prefill step computes the prompt tokens the prefix cache misses", "[serving]") {
  const WorkloadSpec w = load_workload("deepseek-v3-prefill");
  REQUIRE(w.serving);
  CHECK(w.serving->computed_prompt_tokens() == 4096 - 2306);  // 4096 x 0.563 = 2306.05 hit
  CHECK(w.parallel.sequence_length == 1790);
  CHECK(w.parallel.tokens_per_micro_batch == 2 * 1790);
  CHECK(w.serving->served_tokens() == 4096);  // input throughput counts the hits, as DeepSeek's does
  // A computed token attends to the cached prefix, then causally to the computed ones.
  CHECK(attention_context(w, 5) == Approx(2306 + (1790 + 1) / 2.0));
}

TEST_CASE("chunked prefill: a prompt over several steps, the same keys per token, its first token after the last",
          "[serving]") {
  const WorkloadSpec w = load_workload("deepseek-v3-prefill", {"serving.chunk=512"});
  REQUIRE(w.serving);
  CHECK(w.serving->step_tokens() == 512);
  CHECK(w.parallel.sequence_length == 512);
  CHECK(w.serving->prefill_steps() == 4);  // 1790 computed tokens: 512 + 512 + 512 + 254
  // A step serves its chunk's share of the prompt, hits included: 4096 x 512 / 1790 per sequence.
  CHECK(w.serving->served_tokens() == Approx(4096.0 * 512 / 1790));
  // Each computed position attends to the same keys whichever step computes it.
  CHECK(attention_context(w, 5) == Approx(2306 + (1790 + 1) / 2.0));
  // Without hits a chunked prompt is still causal over all of it, not over one chunk.
  const WorkloadSpec plain = load_workload("deepseek-v3-prefill", {"serving.chunk=1024", "serving.prefix_hit=0"});
  CHECK(plain.serving->prefill_steps() == 4);
  CHECK(attention_context(plain, 5) == Approx((4096 + 1) / 2.0));
  // A chunk at least the prompt is one step, as without it.
  const WorkloadSpec whole = load_workload("deepseek-v3-prefill", {"serving.chunk=8192"});
  CHECK(whole.serving->step_tokens() == 1790);
  CHECK(whole.serving->prefill_steps() == 1);
  CHECK(whole.serving->served_tokens() == 4096);
}

TEST_CASE("a sliding window caps a prefill's keys over the prefix and the prompt: the exact mean", "[serving]") {
  // Positions [1000, 2000) of a 2000-token prompt, half of it a cache hit, under a 1024-token window:
  // positions up to 1022 see p + 1 keys, the rest 1024.
  WorkloadSpec w = serving_workload("phase = \"prefill\"\nbatch = 2\nprompt_length = 2000\nprefix_hit = 0.5\nchunk = 256\n");
  w.model.attention.sliding_window = 1024;
  w.model.attention.window_on_even_layers = false;
  REQUIRE(w.model.attention.windowed(1));
  double keys = 0;
  for (int p = 1000; p < 2000; ++p) keys += std::min(p + 1, 1024);
  CHECK(attention_context(w, 1) == Approx(keys / 1000));
}

TEST_CASE("decode attention reads each sequence's latent cache once for all heads (MLA absorbed)", "[serving]") {
  const WorkloadSpec w = load_workload("deepseek-v3-decode");
  const ComputeCost c = attention_cost(w, 10);
  const auto core = std::find_if(c.ops.begin(), c.ops.end(), [](const Operator& o) { return o.op_class == OpClass::kAttention; });
  REQUIRE(core != c.ops.end());
  const double tokens = 64, sequences = 32, context = 4989 + 1 + 0.5;  // the draft attends to one more key
  CHECK(core->context == Approx(context));
  CHECK(core->head_dim == 576);  // kv_lora_rank 512 + qk_rope_head_dim 64
  CHECK(core->flops == Approx(tokens * context * 2 * 128 * (576 + 512)));
  CHECK(core->bytes == Approx(tokens * 128 * (2.0 * 576 + 2.0 * 512) * 2 + sequences * context * 576 * 2));
  CHECK(core->decode);  // the stack's decode kernel prices it
  // W_UK and W_UV run as batched GEMMs per head in place of kv_b's up-projection.
  const auto batched = std::count_if(c.ops.begin(), c.ops.end(), [](const Operator& o) {
    return o.op_class == OpClass::kGroupedGemm && o.groups == 128;
  });
  CHECK(batched == 2);
  CHECK(c.backward.empty());
}

TEST_CASE("an FP8 MLA cache is FlashMLA's format: FP8 latent, a scale per 128 channels, BF16 rotary key",
          "[serving]") {
  WorkloadSpec w = load_workload("deepseek-v3-decode");
  CHECK(kv_cache_bytes_per_token(w) == 576 * 2);
  w.serving->kv_cache = Dtype::kFp8;
  CHECK(kv_cache_bytes_per_token(w) == 512 + 4 * 4 + 64 * 2);  // 656 B
}

TEST_CASE("a serving step is forward only; its micro-batches' all-to-alls interleave with compute", "[serving]") {
  const WorkloadSpec w = serving_workload("phase = \"decode\"\nbatch = 8\nkv_length = 100\nmtp_tokens = 1\nacceptance = 0.5\n");
  const TaskGraph g = build_task_graph(w);
  for (const Task& t : g.tasks) {
    INFO(t.id);
    CHECK(t.phase == Phase::kForward);
  }
  // Per MoE layer: both micro-batches' dispatches are listed before either's expert GEMM.
  std::vector<int> order;  // kinds of layer 1 (the first MoE layer), in listing order
  for (const Task& t : g.tasks)
    if (t.layer == 1 && (t.kind == TaskKind::kDispatch || t.kind == TaskKind::kExpertGemm)) order.push_back(t.micro_batch * 10 + (t.kind == TaskKind::kDispatch ? 0 : 1));
  CHECK(order == std::vector<int>{0, 10, 1, 11});
  // 3 layers + 1 MTP module (its MoE block as layer 3), a head after the model and after the draft.
  const auto heads = std::count_if(g.tasks.begin(), g.tasks.end(), [&](const Task& t) {
    return t.kind == TaskKind::kDenseFfn && t.layer == 3 && t.ops.size() == 3 && t.ops[2].op_class == OpClass::kLoss;
  });
  CHECK(heads == 2 * 2);
  const auto mtp_dispatches = std::count_if(g.tasks.begin(), g.tasks.end(), [](const Task& t) {
    return t.kind == TaskKind::kDispatch && t.layer == 3;
  });
  CHECK(mtp_dispatches == 2);
}

TEST_CASE("serving memory: inference weights, the KV cache by its closed form, the largest batch", "[serving]") {
  const WorkloadSpec w = load_workload("deepseek-v3-decode");
  const MemoryBreakdown b = serving_memory_per_rank(w);
  const auto term = [&](const std::string& name) {
    for (const MemoryTerm& t : b.terms)
      if (t.name == name) return t.bytes;
    FAIL("no term " << name);
    return 0.0;
  };
  // 64 sequences x (4989 + 2) tokens x (61 layers + the MTP module) x (512 + 64) x 2 B.
  CHECK(term("KV cache") == Approx(64.0 * 4991 * 62 * 576 * 2));
  // Two routed experts per rank, 58 MoE layers, 3 x 7168 x 2048 FP8 weights each.
  CHECK(term("expert weights") == Approx(2.0 * 58 * 3 * 7168 * 2048));
  const double hbm = 80e9;
  const std::int64_t largest = largest_serving_batch(w, hbm);
  REQUIRE(largest > 0);
  CHECK(largest % 2 == 0);
  WorkloadSpec at = w;
  at.serving->batch = largest;
  CHECK(serving_memory_per_rank(at).total_bytes() <= hbm);
  at.serving->batch = largest + 2;
  CHECK(serving_memory_per_rank(at).total_bytes() > hbm);
}

TEST_CASE("bad serving input names its key", "[serving][errors]") {
  CHECK(serving_error("phase = \"decode\"\nbatch = 7\nkv_length = 10\n") ==
        "test.toml:25:9: error: serving.batch: must be a multiple of serving.micro_batches (2), got 7");
  CHECK(serving_error("phase = \"decode\"\nbatch = 8\nkv_length = 4096\n") ==
        "test.toml:26:13: error: serving.kv_length: 4096 cached tokens plus 1 new ones exceed the model's context of "
        "4096 tokens (model.context_length)");
  CHECK(serving_error("phase = \"prefill\"\nbatch = 8\nprompt_length = 5000\n") ==
        "test.toml:26:17: error: serving.prompt_length: 5000 tokens exceed the model's context of 4096 tokens "
        "(model.context_length)");
  CHECK(serving_error("phase = \"decode\"\nbatch = 8\nkv_length = 10\nmtp_tokens = 2\nacceptance = 0.5\n") ==
        "test.toml:27:14: error: serving.mtp_tokens: drafts with the model's MTP modules: at most model.mtp_modules = "
        "1, got 2");
  CHECK(serving_error("phase = \"decode\"\nbatch = 8\nkv_length = 10\nmtp_tokens = 1\n") ==
        "test.toml:23:1: error: serving.acceptance: missing required key");
  CHECK(serving_error("phase = \"prefill\"\nbatch = 8\nprompt_length = 100\nkv_length = 10\n") ==
        "test.toml:27:13: error: serving.kv_length: a prefill step reads serving.prompt_length, not serving.kv_length");
  CHECK(serving_error("phase = \"decode\"\nbatch = 8\nkv_length = 10\n", "sequence_length = 4096\n") ==
        "test.toml:23:19: error: parallel.sequence_length: a serving step takes its batch from [serving] (batch, "
        "prompt_length or kv_length, micro_batches); remove it");
  CHECK(serving_error("phase = \"decode\"\nbatch = 8\nkv_length = 10\nchunk = 64\n") ==
        "test.toml:27:9: error: serving.chunk: only read when serving.phase = \"prefill\"");
  CHECK(serving_error("phase = \"prefill\"\nbatch = 8\nprompt_length = 100\nchunk = 0\n") ==
        "test.toml:27:9: error: serving.chunk: expected an integer in [1, 1073741824], got 0");
  CHECK(serving_error("phase = \"decode\"\nbatch = 8\nkv_length = 10\n", "pp = 2\n") ==
        "test.toml:23:6: error: parallel.pp: a serving step runs without pipeline stages (pp = 1): attention DP/TP "
        "and expert EP");
}

TEST_CASE("a prefill batch hands every prompt's whole cache to the decode pool, split over its TP ranks",
          "[serving]") {
  // DeepSeek-V3's Day 6 prefill: 4 prompts of 4,096 tokens (56.3 % of them prefix hits, sent too: the
  // decode side holds the whole cache) x 61 layers x MLA's 1,152 B per token (576 BF16 channels).
  const WorkloadSpec w = load_workload("deepseek-v3-prefill");
  CHECK(kv_cache_bytes_per_token(w) == 1152);
  CHECK(serving_ledger(w).handoff_bytes == 4.0 * 4096 * 61 * 1152);
  // GQA at TP2: 2 KV heads x 64 channels x K and V x 2 B per token and layer, half of it per TP rank.
  const WorkloadSpec tp2 = serving_workload("phase = \"prefill\"\nbatch = 2\nprompt_length = 1000\n", "tp = 2\n");
  CHECK(serving_ledger(tp2).handoff_bytes == 2.0 * 1000 * 3 * (2 * 2 * 64 * 2) / 2);
  CHECK(serving_ledger(serving_workload("phase = \"decode\"\nbatch = 2\nkv_length = 100\n")).handoff_bytes == 0);
}
