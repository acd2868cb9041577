// The memory-fit model against hand-computed values: DeepSeek-V3's
// parameter count, what one rank holds at EP8 alone and in DeepSeek's
// production layout (PP16 DualPipe, EP64, ZeRO-1), the in-flight
// micro-batches of each schedule, ZeRO sharding and recomputation
// (docs/memory.md).
#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "workloads/memory_fit.hpp"
#include "workloads/workload_loader.hpp"

using namespace epsim::workloads;

namespace {

// DeepSeek-V3's parts, counted by hand from its config (docs/memory.md).
constexpr double kH = 7168, kVocab = 129280;
constexpr double kAttention = kH * 1536 + 1536.0 * 128 * 192 + kH * (512 + 64) + 512.0 * 128 * 256 + 128.0 * 128 * kH;
constexpr double kExpert = 3 * kH * 2048;  // one routed or shared expert's SwiGLU

double term(const MemoryBreakdown& b, const std::string& name) {
  for (const MemoryTerm& t : b.terms)
    if (t.name == name) return t.bytes;
  FAIL("no term " << name);
  return 0;
}

MemoryInputs production(const WorkloadSpec& w) {
  // DeepSeek-V3 report sec. 3.2: 2048 H800, PP16 DualPipe, EP64, ZeRO-1, no
  // TP; sequence 4096 per micro-batch; RMSNorm/MLA up-projection recompute.
  MemoryInputs in = current_memory_inputs(w);
  in.layout = ParallelLayout{1, 16, 128, 64, 1};
  in.schedule = PipelineSchedule::kDualPipe;
  in.recompute = Recompute::kSelective;
  in.zero_stage = 1;
  in.micro_batches = 32;
  in.micro_batch_tokens = 4096;
  return in;
}

}  // namespace

TEST_CASE("memory: DeepSeek-V3 has 671B parameters, 37B active", "[memory]") {
  const WorkloadSpec w = load_workload("deepseek-v3");
  const ParameterCount p = count_parameters(w.model);
  REQUIRE(kAttention == 187105280.0);
  const double dense = 2 * kVocab * kH + 61 * kAttention + 3 * (3 * kH * 18432) + 58 * (kExpert + 256 * kH);
  CHECK(p.total == Approx(dense + 58 * 256 * kExpert).epsilon(1e-12));
  CHECK(p.total == Approx(671025397760.0).epsilon(1e-12));
  CHECK(p.active == Approx(dense + 58 * 8 * kExpert).epsilon(1e-12));
  // The report's 671B within 1 %; its 37B within 1.5 % (37.55B: the input
  // embedding, a lookup, counts here; without it 36.62B).
  CHECK(std::abs(p.total / 671e9 - 1) < 0.01);
  CHECK(std::abs(p.active / 37e9 - 1) < 0.015);
}

TEST_CASE("memory: DeepSeek-V3 at EP8 alone does not fit a 64 GB NPU", "[memory]") {
  // Without DeepSeek's recipe (the preset's [memory]): no recomputation, no ZeRO, FP32 moments.
  const WorkloadSpec w = load_workload("deepseek-v3", {"parallel.ep=8", "memory.recompute=\"none\"",
                                                       "memory.zero_stage=0", "memory.moments=\"fp32\""});
  const MemoryBreakdown b = memory_per_rank(w.model, current_memory_inputs(w));
  // 32 experts per rank in each of 58 MoE layers; no ZeRO (one replica):
  // FP32 master + two FP32 moments = 12 B per parameter.
  CHECK(term(b, "expert weights") == Approx(2 * 58 * 32 * kExpert).epsilon(1e-12));
  CHECK(term(b, "expert optimizer state") == Approx(12 * 58 * 32 * kExpert).epsilon(1e-12));
  CHECK(term(b, "expert optimizer state") == Approx(980863156224.0).epsilon(1e-12));
  CHECK(b.largest().name == "expert optimizer state");
  const MemoryFit fit = check_memory_fit(b, 64e9);
  CHECK_FALSE(fit.fits);
  CHECK(fit.peak_bytes > 1.7e12);  // one micro-batch's activations held (one stage: 1F1B at pp 1)
  CHECK(describe_memory_fit(b, fit).find("largest term: expert optimizer state 980.86 GB (81.739G params x (master 4 + moments 2 x 4) B (ZeRO 0: not sharded))") != std::string::npos);
}

TEST_CASE("memory: DeepSeek-V3's production layout fits an 80 GB H800", "[memory]") {
  const WorkloadSpec w = load_workload("deepseek-v3");
  const MemoryInputs in = production(w);
  const MemoryBreakdown b = memory_per_rank(w.model, in);
  // The fullest rank: pipeline position 3 holds stages 3 and 12 (DualPipe),
  // 4 + 4 MoE layers of the 61 split 4,4,4,4,4,4,4,4,4,4,4,4,4,3,3,3 (first 3 dense).
  CHECK(b.stage == 3);
  CHECK(b.moe_layers == 8);
  CHECK(b.dense_layers == 0);
  CHECK(b.in_flight_micro_batches == 17);  // pp + 1
  const double experts = 8 * 4 * kExpert;  // 256 / EP64 experts per layer
  CHECK(term(b, "expert weights") == Approx(2 * experts).epsilon(1e-12));
  // The preset's BF16 moments: FP32 master + 2 x BF16 = 8 B per parameter.
  CHECK(term(b, "expert optimizer state") == Approx(8 * experts / 2).epsilon(1e-12));  // EDP = 128 / 64
  const double dense = 8 * (kAttention + kExpert + 256 * kH);
  CHECK(term(b, "dense optimizer state") == Approx(8 * dense / 128).epsilon(1e-12));
  // 17 micro-batches x half the rank's 8 layers x 4096 tokens.
  CHECK(term(b, "activations") ==
        Approx(17 * 4 * 4096 * activation_bytes_per_token(w.model, in, true)).epsilon(1e-12));
  const MemoryFit fit = check_memory_fit(b, 80e9);
  CHECK(fit.fits);
  CHECK(fit.peak_bytes == Approx(65.31e9).epsilon(0.001));
  CHECK(b.largest().name == "activations");
  // With FP32 gradients (DeepSeek accumulates them in FP32) it still fits: + 2 B per parameter.
  MemoryInputs fp32 = in;
  fp32.gradient = Dtype::kFp32;
  const MemoryFit fit32 = check_memory_fit(memory_per_rank(w.model, fp32), 80e9);
  CHECK(fit32.peak_bytes == Approx(fit.peak_bytes + 2 * (dense + experts)).epsilon(1e-12));
  CHECK(fit32.fits);
}

TEST_CASE("memory: activations per token of a DeepSeek-V3 MoE layer", "[memory]") {
  const WorkloadSpec w = load_workload("deepseek-v3");
  MemoryInputs in = current_memory_inputs(w);  // FP8 GEMM inputs: 1 + 4/128 B per channel
  const double g = 1 + 4.0 / 128, h = kH;
  // none: attention 2h + g h + 4 x 128 + (2 + g) 1536 + 2 x 576 + g 512 + 2 x 128 x (2 x 192 + 128) + 2 x 128 x 128;
  // FFN 2h + g h + 4 x 256 + shared (2 x 2 x 2048 + g 2048) + 8 x (g h + 2h + 2 x 2 x 2048 + g 2048).
  const double attention = 2 * h + g * h + 512 + (2 + g) * 1536 + 2 * 576 + g * 512 + 2 * 128 * 512 + 2 * 128 * 128;
  const double swiglu = 4 * 2048 + g * 2048;
  const double ffn = 2 * h + g * h + 1024 + swiglu + 8 * (g * h + 2 * h + swiglu);
  in.recompute = Recompute::kNone;
  CHECK(activation_bytes_per_token(w.model, in, true) == Approx(attention + ffn).epsilon(1e-12));
  // selective drops norm outputs, MLA up-projections, SwiGLU outputs and expert outputs; keeps SwiGLU inputs in FP8.
  const double sel_attention = 2 * h + 512 + 2 * 1536 + 2 * 576 + 2 * 128 * 128;
  const double sel_ffn = 2 * h + 1024 + g * 2 * 2048 + 8 * (g * h + g * 2 * 2048);
  in.recompute = Recompute::kSelective;
  CHECK(activation_bytes_per_token(w.model, in, true) == Approx(sel_attention + sel_ffn).epsilon(1e-12));
  in.recompute = Recompute::kFull;
  CHECK(activation_bytes_per_token(w.model, in, true) == 2 * h);
}

TEST_CASE("memory: micro-batches in flight per schedule", "[memory]") {
  // GPipe: all; 1F1B: pp - stage; interleaved: Megatron's warm-up
  // (pp + (pp - 1) / vpp on stage 0, Korthikanti et al. sec. 4.2.3); DualPipe: pp + 1.
  CHECK(in_flight_micro_batches(PipelineSchedule::kGpipe, 1, 1, 6, 0, false) == 6);
  for (int s = 0; s < 4; ++s) CHECK(in_flight_micro_batches(PipelineSchedule::kOneFOneB, 4, 1, 8, s, false) == 4 - s);
  CHECK(in_flight_micro_batches(PipelineSchedule::kOneFOneB, 8, 1, 3, 0, false) == 3);
  CHECK(in_flight_micro_batches(PipelineSchedule::kInterleaved, 4, 2, 8, 0, false) == 5.5);
  CHECK(in_flight_micro_batches(PipelineSchedule::kInterleaved, 4, 2, 8, 3, false) == 2.5);
  CHECK(in_flight_micro_batches(PipelineSchedule::kInterleaved, 4, 1, 8, 0, false) == 4);  // vpp 1: Megatron's plain 1F1B
  CHECK(in_flight_micro_batches(PipelineSchedule::kDualPipe, 16, 1, 32, 0, false) == 17);
  // The 1F1B all-to-all overlap holds one more chunk forward: one stage two
  // micro-batches; interleaved (2 x 3 + 1 x 4 + 1 + 1) / 2 chunks.
  CHECK(in_flight_micro_batches(PipelineSchedule::kOneFOneB, 1, 1, 8, 0, true) == 2);
  CHECK(in_flight_micro_batches(PipelineSchedule::kInterleaved, 4, 2, 8, 0, true) == 6);
}

TEST_CASE("memory: ZeRO-1 shards optimizer state, full recompute keeps layer inputs", "[memory]") {
  const WorkloadSpec w = load_workload("tiny-moe");
  MemoryInputs in = current_memory_inputs(w);
  in.layout = ParallelLayout{1, 1, 8, 4, 1};  // EDP 2
  const MemoryBreakdown zero0 = memory_per_rank(w.model, in);
  in.zero_stage = 1;
  const MemoryBreakdown zero1 = memory_per_rank(w.model, in);
  CHECK(term(zero1, "dense optimizer state") == Approx(term(zero0, "dense optimizer state") / 8).epsilon(1e-12));
  CHECK(term(zero1, "expert optimizer state") == Approx(term(zero0, "expert optimizer state") / 2).epsilon(1e-12));
  CHECK(term(zero1, "dense weights") == term(zero0, "dense weights"));
  in.recompute = Recompute::kFull;
  in.schedule = PipelineSchedule::kGpipe;
  in.micro_batches = 3;
  const MemoryBreakdown full = memory_per_rank(w.model, in);
  MemoryInputs none = in;
  none.recompute = Recompute::kNone;
  const double t = static_cast<double>(in.micro_batch_tokens), h = static_cast<double>(w.model.hidden);
  CHECK(term(full, "activations") ==
        Approx(3 * w.model.layers * t * 2 * h + t * activation_bytes_per_token(w.model, none, true)).epsilon(1e-12));
}

TEST_CASE("memory: an unknown capacity is not checked", "[memory]") {
  const WorkloadSpec w = load_workload("tiny-moe");
  const MemoryFit fit = check_memory_fit(memory_per_rank(w.model, current_memory_inputs(w)), 0);
  CHECK(fit.fits);
  CHECK_FALSE(fit.capacity_known);
}

TEST_CASE("memory: the [memory] table", "[memory][loader]") {
  const WorkloadSpec w = load_workload(
      "tiny-moe", {"memory.recompute=\"full\"", "memory.zero_stage=1", "memory.moments=\"bf16\"",
                   "memory.allow_oversubscribed=true"});
  CHECK(w.memory.recompute == Recompute::kFull);
  CHECK(w.memory.zero_stage == 1);
  CHECK(w.memory.moments == Dtype::kBf16);
  CHECK(w.memory.allow_oversubscribed);
  CHECK(current_memory_inputs(w).moment_bytes == 2);
  CHECK_THROWS_WITH(load_workload("tiny-moe", {"memory.zero_stage=3"}),
                    Catch::Contains("memory.zero_stage: expected an integer in [0, 1], got 3"));
  CHECK_THROWS_WITH(load_workload("tiny-moe", {"memory.recompute=\"some\""}), Catch::Contains("memory.recompute"));
}

// The README's default scenario is a layout that fits a 910B's 64 GB, and
// DeepSeek's selective recomputation on the same layout does not.
TEST_CASE("memory: the quick start's deepseek-v3-pp8 fits 64 GB only with full recomputation", "[memory]") {
  const WorkloadSpec w = load_workload("deepseek-v3-pp8");
  const MemoryBreakdown b = memory_per_rank(w.model, current_memory_inputs(w));
  const MemoryFit fit = check_memory_fit(b, 64e9);
  CHECK(fit.fits);
  CHECK(fit.peak_bytes == Approx(49.297e9).epsilon(0.001));
  CHECK(b.largest().name == "expert optimizer state");
  const WorkloadSpec sel = load_workload("deepseek-v3-pp8", {"memory.recompute=\"selective\""});
  const MemoryBreakdown bs = memory_per_rank(sel.model, current_memory_inputs(sel));
  CHECK_FALSE(check_memory_fit(bs, 64e9).fits);
  CHECK(bs.largest().name == "activations");
}

TEST_CASE("memory: a redundant expert slot holds a whole expert (weights, gradients, optimizer state)", "[memory]") {
  const WorkloadSpec w = load_workload("deepseek-v3", {"parallel.ep=32"});
  MemoryInputs in = current_memory_inputs(w);
  const MemoryBreakdown plain = memory_per_rank(w.model, in);
  in.redundant_experts = 32;  // one more slot per rank: 9 experts instead of 8
  const MemoryBreakdown more = memory_per_rank(w.model, in);
  CHECK(term(more, "expert weights") == Approx(term(plain, "expert weights") * 9 / 8));
  CHECK(term(more, "expert optimizer state") == Approx(term(plain, "expert optimizer state") * 9 / 8));
  CHECK(current_memory_inputs(load_workload("deepseek-v3", {"parallel.ep=32", "routing.redundant_experts=32",
                                                             "model.node_limit=0"}))
            .redundant_experts == 32);
}

// One stage runs each micro-batch's forward then its backward (Megatron's
// gradient accumulation): one micro-batch of activations held, whatever
// the count. Qwen3-30B-A3B on 16 H100 (TP1 PP1 EP16 DP16, 64 micro-batches
// of one 4096-token sequence, no recomputation) was refused at 64 held.
TEST_CASE("memory: one stage holds one micro-batch, and Qwen3-30B-A3B's 16-GPU recipe fits 80 GB", "[memory]") {
  const WorkloadSpec w = load_workload("qwen3-30b-a3b");
  REQUIRE(w.parallel.pp == 1);
  REQUIRE(w.parallel.micro_batches == 64);
  const MemoryInputs in = current_memory_inputs(w);
  const MemoryBreakdown b = memory_per_rank(w.model, in);
  CHECK(b.in_flight_micro_batches == 1);
  CHECK(b.moe_layers == 48);

  // Parameters (docs/memory.md): 30.53B in all, 3.35B active (the model card: 30.5B, 3.3B).
  const double h = 2048, embedding = 151936 * h, attention = h * 32 * 128 + 2 * h * 4 * 128 + 32 * 128 * h;
  const double expert = 3 * h * 768;
  const double dense = 2 * embedding + 48 * attention + 48 * 128 * h;  // + the replicated gate
  CHECK(dense == 1540882432.0);
  const ParameterCount p = count_parameters(w.model);
  CHECK(p.total == Approx(dense + 48 * 128 * expert).epsilon(1e-12));
  CHECK(p.active == Approx(dense + 48 * 8 * expert).epsilon(1e-12));
  const double experts_here = 48 * (128 / 16) * expert;  // EP16: 8 experts per rank
  CHECK(term(b, "dense weights") == Approx(2 * dense).epsilon(1e-12));
  CHECK(term(b, "expert gradients") == Approx(2 * experts_here).epsilon(1e-12));
  // ZeRO-1: FP32 master + two FP32 moments, dense over DP 16, experts over EDP 1.
  CHECK(term(b, "dense optimizer state") == Approx(12 * dense / 16).epsilon(1e-12));
  CHECK(term(b, "expert optimizer state") == Approx(12 * experts_here).epsilon(1e-12));

  // Activations per token of a GQA MoE layer without recomputation (BF16):
  // attention 2h (norm in, projections in) + 4 x 32 (softmax statistics) +
  // 2 x (32 + 2 x 4) x 128 (Q, K, V) + 2 x 32 x 128 (core out) = 26,752;
  // FFN 2h x 2 (norm in and out) + 4 x 128 (router scores) = 8,704; per
  // routed copy (top 8) 2h in + 2h out + SwiGLU 2 x 2 x 768 in + 2 x 768 out.
  const double per_token = 26752 + 8704 + 8 * (4 * h + 4 * 768 + 2 * 768);
  CHECK(per_token == 137856);
  CHECK(activation_bytes_per_token(w.model, in, true) == per_token);
  CHECK(term(b, "activations") == Approx(1 * 48 * 4096 * per_token).epsilon(1e-12));  // 27.10 GB
  CHECK(term(b, "activations") == Approx(27.1036e9).epsilon(1e-5));
  CHECK(term(b, "output logits") == 4096 * 151936 * 4.0);

  const MemoryFit fit = check_memory_fit(b, 80e9);
  CHECK(fit.fits);
  CHECK(fit.peak_bytes == Approx(66.12e9).epsilon(0.001));
  CHECK(b.largest().name == "activations");
  // As GPipe (every forward before any backward) the same step held all 64:
  // the 1734.63 GB of activations it used to be refused for.
  MemoryInputs gpipe = in;
  gpipe.schedule = PipelineSchedule::kGpipe;
  CHECK(term(memory_per_rank(w.model, gpipe), "activations") == Approx(1734.63e9).epsilon(1e-5));

  // Megatron's recompute_modules, one by one: layernorm drops both norm
  // outputs (2 x 2h); moe_act each routed copy's SwiGLU output and expert
  // output (8 x (2 x 768 + 2h)); core_attn the core's output and statistics
  // (2 x 32 x 128 + 4 x 32).
  const auto with = [&](std::vector<std::string> set) {
    return activation_bytes_per_token(w.model, current_memory_inputs(load_workload("qwen3-30b-a3b", set)), true);
  };
  CHECK(with({"memory.recompute=[\"layernorm\"]"}) == per_token - 2 * 2 * h);
  CHECK(with({"memory.recompute=[\"moe_act\"]"}) == per_token - 8 * (2 * 768 + 2 * h));
  CHECK(with({"memory.recompute=[\"core_attn\"]"}) == per_token - (2 * 32 * 128 + 4 * 32));
  CHECK(with({"memory.recompute=[\"layernorm\", \"moe_act\"]"}) == per_token - 4 * h - 8 * (2 * 768 + 2 * h));
}
