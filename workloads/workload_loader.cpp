// Reading and checking workload TOML (schema 1).
#include "workloads/workload_loader.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#include "core/memory_limit.hpp"
#include "core/overrides.hpp"
#include "core/presets.hpp"
#include "core/toml_base.hpp"
#include "core/toml_reader.hpp"
#include "workloads/expert_weights.hpp"
#include "workloads/layout_rules.hpp"
#include "workloads/routing_trace.hpp"

namespace epsim::workloads {

namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kMaxDim = std::int64_t{1} << 24;     // channels, vocab, FFN sizes
constexpr std::int64_t kMaxTokens = std::int64_t{1} << 30;  // tokens fit TrafficMatrix's int32
// Tokens of one micro-batch: 4096 x DeepSeek-V3's one 4096-token sequence.
constexpr std::int64_t kMaxMicroBatchTokens = std::int64_t{1} << 24;

Dtype to_dtype(const std::string& name) {
  if (name == "fp8") return Dtype::kFp8;
  if (name == "int8") return Dtype::kInt8;
  if (name == "fp32") return Dtype::kFp32;
  return Dtype::kBf16;
}

int small_int(TableReader& t, std::string_view key, std::int64_t min, std::int64_t max = 1 << 20) {
  return static_cast<int>(t.integer(key, min, max));
}

AttentionSpec read_attention(TableReader t) {
  AttentionSpec a;
  const std::string kind = t.choice("kind", {"mla", "gqa", "mha"});
  a.kind = kind == "mla" ? AttentionKind::kMla : AttentionKind::kGqa;
  a.heads = small_int(t, "heads", 1);
  if (a.kind == AttentionKind::kGqa) {
    // MHA is GQA with a key/value head per query head.
    a.kv_heads = kind == "mha" ? a.heads : small_int(t, "kv_heads", 1);
    a.head_dim = small_int(t, "head_dim", 1);
    if (a.heads % a.kv_heads != 0) {
      t.fail("kv_heads", fmt::format("must divide heads ({}), got {}", a.heads, a.kv_heads));
    }
  } else {
    a.q_lora_rank = static_cast<int>(t.integer_or("q_lora_rank", 0, 0, kMaxDim));
    a.kv_lora_rank = small_int(t, "kv_lora_rank", 1);
    a.qk_nope_head_dim = small_int(t, "qk_nope_head_dim", 1);
    a.qk_rope_head_dim = small_int(t, "qk_rope_head_dim", 0);
    a.v_head_dim = small_int(t, "v_head_dim", 1);
  }
  a.sliding_window = static_cast<int>(t.integer_or("sliding_window", 0, 0, 1 << 20));
  const std::string layers = t.choice_or("sliding_window_layers", "all", {"all", "even"});
  if (t.has("sliding_window_layers") && a.sliding_window == 0)
    t.fail("sliding_window_layers", "needs model.attention.sliding_window > 0");
  a.window_on_even_layers = layers == "even";
  t.finish();
  return a;
}

ModelSpec read_model(TableReader t) {
  ModelSpec m;
  m.name = t.string_or("name", "");
  m.layers = small_int(t, "layers", 1, 4096);
  m.dense_layers = static_cast<int>(t.integer_or("dense_layers", 0, 0, m.layers - 1));
  m.hidden = t.integer("hidden", 1, kMaxDim);
  m.attention = read_attention(t.table("attention"));
  m.dense_ffn = m.dense_layers > 0 ? t.integer("dense_ffn", 1, kMaxDim) : t.integer_or("dense_ffn", 0, 0, kMaxDim);
  m.expert_ffn = t.integer("expert_ffn", 1, kMaxDim);
  m.experts = small_int(t, "experts", 1, 1 << 16);
  m.shared_experts = static_cast<int>(t.integer_or("shared_experts", 0, 0, 64));
  m.shared_expert_ffn = t.integer_or("shared_expert_ffn", m.expert_ffn, 1, kMaxDim);
  m.top_k = small_int(t, "top_k", 1, 64);
  // Blamed on the key the user changed with --set when only one was (--set model.experts=4 under a top-8 preset).
  if (m.top_k > m.experts) {
    if (t.overridden("experts") && !t.overridden("top_k"))
      t.fail("experts", fmt::format("must be >= model.top_k ({}), got {}", m.top_k, m.experts));
    t.fail("top_k", fmt::format("must be <= model.experts ({}), got {}", m.experts, m.top_k));
  }
  m.node_limit = static_cast<int>(t.integer_or("node_limit", 0, 0, 1 << 16));
  m.vocab = t.integer("vocab", 1, kMaxDim);
  m.mtp_modules = static_cast<int>(t.integer_or("mtp_modules", 0, 0, 4));
  m.context_length = t.integer_or("context_length", 0, 0, kMaxTokens);
  m.activation = t.choice_or("activation", "swiglu", {"swiglu", "clamped_swiglu"}) == "swiglu"
                     ? Activation::kSwiglu
                     : Activation::kClampedSwiglu;
  t.finish();
  return m;
}

// The smallest dp whose stage (tp x dp ranks) holds whole EP x ETP groups:
// one EP group per stage, as the single-replica workloads describe it.
int default_dp(int tp, int ep, int etp) { return etp * ep / std::gcd(tp, etp * ep); }

// Where Megatron-Core accepts overlap_moe_expert_parallel_comm
// (TransformerConfig's checks): expert parallelism, and virtual pipeline
// stages when there is more than one stage. DualPipe overlaps its own pairs.
std::optional<std::string> check_a2a_overlap(const ParallelSpec& p) {
  if (!p.moe_a2a_overlap) return std::nullopt;
  if (p.ep < 2) return "overlaps the expert-parallel all-to-all: needs parallel.ep >= 2";
  if (p.schedule == PipelineSchedule::kDualPipe)
    return "\"dualpipe\" already overlaps its F&B pairs; the 1F1B all-to-all overlap is Megatron's 1F1B";
  if (p.pp > 1 && p.schedule != PipelineSchedule::kInterleaved)
    return fmt::format("with pp = {} Megatron runs it only under schedule = \"interleaved\" (vpp >= 2)", p.pp);
  return std::nullopt;
}

PipelineSchedule read_schedule(TableReader& t, int vpp) {
  const std::string name = t.choice_or("schedule", vpp > 1 ? "interleaved" : "1f1b", {"1f1b", "interleaved", "dualpipe"});
  if (name == "dualpipe" && vpp > 1)
    t.fail("vpp", fmt::format("{} model chunks per stage: \"dualpipe\" holds two (slices s and pp-1-s); use vpp = 1", vpp));
  if (name == "interleaved" && vpp < 2) t.fail("schedule", "\"interleaved\" needs parallel.vpp >= 2 model chunks per stage");
  if (name == "1f1b" && vpp > 1)
    t.fail("vpp", fmt::format("{} model chunks per stage need schedule = \"interleaved\"", vpp));
  if (name == "dualpipe") return PipelineSchedule::kDualPipe;
  return name == "interleaved" ? PipelineSchedule::kInterleaved : PipelineSchedule::kOneFOneB;
}

// Micro-batches per step: from global_batch (sequences over all DP ranks)
// or given directly as micro_batches; not both.
void read_batch(TableReader& t, ParallelSpec& p) {
  // Both given: one set by --set replaces the file's other (a preset's
  // micro_batches under --set parallel.global_batch=N); otherwise an error.
  bool use_global = t.has("global_batch");
  if (use_global && t.has("micro_batches")) {
    const bool global_set = t.overridden("global_batch"), count_set = t.overridden("micro_batches");
    if (global_set == count_set)
      t.fail("micro_batches", "give parallel.global_batch or parallel.micro_batches, not both");
    use_global = global_set;
  }
  if (use_global) {
    p.global_batch = t.integer("global_batch", 1, kMaxTokens);
    if (auto problem = check_global_batch(p.global_batch, p.micro_batch, p.dp)) t.fail(problem->key, problem->message);
    p.micro_batches = static_cast<int>(p.global_batch / (p.micro_batch * p.dp));
  } else {
    p.micro_batches = static_cast<int>(t.integer_or("micro_batches", 1, 1, kMaxMicroBatches));
    p.global_batch = p.micro_batches * p.micro_batch * p.dp;
  }
  // The schedule's rule blames the batch key the workload gave.
  if (auto problem = check_schedule_batch(p.schedule, p.pp, p.micro_batches))
    t.fail(problem->key == "pp" ? "pp" : use_global ? "global_batch" : "micro_batches", problem->message);
}

// A serving step's batch (docs/serving.md): `serving.batch` sequences per
// rank in serving.micro_batches micro-batches of prompt_length tokens
// (prefill) or one token (decode) each. The training batch keys a base
// workload set are not read; given in the serving file itself or with
// --set, they are an error rather than ignored.
void read_serving_batch(TableReader& t, ParallelSpec& p, const ServingSpec& serving, const std::string& source) {
  for (const char* key : {"micro_batch", "sequence_length", "micro_batches", "global_batch"}) {
    if (!t.has(key)) continue;
    if (t.overridden(key) || t.location(key).file == source)
      t.fail(key, "a serving step takes its batch from [serving] (batch, prompt_length or kv_length, micro_batches); "
                  "remove it");
    t.node(key);  // a training base's batch: not this step's
  }
  if (p.pp != 1) t.fail("pp", "a serving step runs without pipeline stages (pp = 1): attention DP/TP and expert EP");
  p.micro_batches = serving.micro_batches;
  p.micro_batch = serving.batch / serving.micro_batches;
  p.sequence_length = serving.step_tokens();
  if (p.micro_batch * p.sequence_length % p.tp != 0)
    t.fail("tp", fmt::format("must divide a micro-batch's {} tokens (sequence parallelism splits them over the TP group)",
                             p.micro_batch * p.sequence_length));
  p.tokens_per_micro_batch = p.micro_batch * p.sequence_length / p.tp;
  p.global_batch = serving.batch * p.dp;
}

// `redundant_experts`: routing's, which fill the slots an uneven split
// leaves (expert_home_rank); a count that does not is blamed on it later
// (check_mitigations).
ParallelSpec read_parallel(TableReader t, const ModelSpec& m, const ServingSpec* serving, int redundant_experts,
                           const std::string& source) {
  ParallelSpec p;
  p.ep = small_int(t, "ep", 1, 1 << 16);
  p.ranks_given_at = t.location("ep");
  if (redundant_experts == 0 && m.experts % p.ep != 0) {
    const int fill = (m.experts + p.ep - 1) / p.ep * p.ep - m.experts;
    const int slots = (m.experts + fill) / p.ep;
    t.fail("ep", fmt::format("model.experts ({}) is not divisible by parallel.ep ({}){}", m.experts, p.ep,
                             fill <= m.experts ? fmt::format(", unless routing.redundant_experts = {} fills every rank to "
                                                             "{} expert slot{}",
                                                             fill, slots, slots == 1 ? "" : "s")
                                               : ""));
  }
  p.tp = static_cast<int>(t.integer_or("tp", 1, 1, 1 << 10));
  p.etp = static_cast<int>(t.integer_or("etp", 1, 1, 1 << 10));
  // Expert tensor parallelism is part of the layout (groups, checks), but
  // the task graph does not shard experts: refuse rather than simulate it wrongly.
  if (p.etp > 1) t.fail("etp", "expert tensor parallelism is not simulated yet; use etp = 1");
  p.pp = static_cast<int>(t.integer_or("pp", 1, 1, 1 << 10));
  p.vpp = static_cast<int>(t.integer_or("vpp", 1, 1, 64));
  p.dp = static_cast<int>(t.integer_or("dp", default_dp(p.tp, p.ep, p.etp), 1, 1 << 16));
  p.ranks_per_node = static_cast<int>(t.integer_or("ranks_per_node", std::min(8, p.ep), 1, 1 << 16));
  if (auto problem = check_ep_fills_nodes(p.ep, p.ranks_per_node)) t.fail(problem->key, problem->message);
  p.tp_across_nodes = t.boolean_or("tp_across_nodes", false);
  p.grad_bucket_bytes = t.quantity_or("grad_bucket_size", kDefaultGradBucketBytes, Quantity::kBytes);
  p.overlap_grad_reduce = t.boolean_or("overlap_grad_reduce", true);
  // A stage that cannot hold whole EP groups is blamed on dp when dp was given.
  if (auto problem = check_layout(p.layout(), p.ranks_per_node, p.tp_across_nodes))
    t.fail(problem->key == "ep" && t.has("dp") ? "dp" : problem->key, problem->message);
  if (p.vpp > 1 && p.pp < 2)
    t.fail("vpp", fmt::format("{} model chunks per stage need pipeline parallelism (pp >= 2)", p.vpp));
  p.schedule = read_schedule(t, p.vpp);
  p.moe_a2a_overlap = t.boolean_or("moe_a2a_overlap", false);
  if (auto problem = check_a2a_overlap(p)) t.fail("moe_a2a_overlap", *problem);
  p.first_stage_layers = static_cast<int>(t.integer_or("first_stage_layers", 0, 0, m.pipeline_layers()));
  p.last_stage_layers = static_cast<int>(t.integer_or("last_stage_layers", 0, 0, m.pipeline_layers()));
  if (auto problem = check_stage_split(m.pipeline_layers(), p.pp, p.vpp, p.first_stage_layers, p.last_stage_layers))
    t.fail(problem->key, problem->message);

  if (serving) {
    read_serving_batch(t, p, *serving, source);
    t.finish();
    return p;
  }
  p.micro_batch = t.integer_or("micro_batch", 1, 1, kMaxTokens);
  p.sequence_length = t.integer("sequence_length", 1, kMaxTokens);
  if (p.micro_batch * p.sequence_length > kMaxMicroBatchTokens)
    t.fail("micro_batch", fmt::format("micro_batch x sequence_length = {} x {} tokens per micro-batch exceeds {} "
                                      "(the sampler draws every token of every layer: minutes beyond that)",
                                      p.micro_batch, p.sequence_length, kMaxMicroBatchTokens));
  // Sequence parallelism: each TP rank holds (and routes) 1/tp of the tokens.
  if (p.micro_batch * p.sequence_length % p.tp != 0)
    t.fail("tp", fmt::format("must divide the micro-batch's micro_batch x sequence_length = {} tokens (sequence "
                             "parallelism splits them over the TP group)",
                             p.micro_batch * p.sequence_length));
  p.tokens_per_micro_batch = p.micro_batch * p.sequence_length / p.tp;
  read_batch(t, p);

  t.finish();
  return p;
}

ServingSpec read_serving(TableReader t, const ModelSpec& m) {
  ServingSpec s;
  s.phase = t.choice("phase", {"prefill", "decode"}) == "prefill" ? ServingPhase::kPrefill : ServingPhase::kDecode;
  s.micro_batches = static_cast<int>(t.integer_or("micro_batches", 2, 1, 16));
  s.batch = t.integer("batch", 1, kMaxTokens);
  s.batch_given_at = t.location("batch");
  if (s.batch % s.micro_batches != 0)
    t.fail("batch", fmt::format("must be a multiple of serving.micro_batches ({}), got {}", s.micro_batches, s.batch));
  const bool prefill = s.phase == ServingPhase::kPrefill;
  const char* length_key = prefill ? "prompt_length" : "kv_length";
  const char* other_key = prefill ? "kv_length" : "prompt_length";
  if (t.has(other_key))
    t.fail(other_key, fmt::format("a {} step reads serving.{}, not serving.{}", to_string(s.phase), length_key, other_key));
  const std::int64_t length = t.integer(length_key, prefill ? 1 : 0, kMaxTokens);
  if (prefill && m.context_length > 0 && length > m.context_length)
    t.fail(length_key, fmt::format("{} tokens exceed the model's context of {} tokens (model.context_length)", length,
                                   m.context_length));
  (prefill ? s.prompt_length : s.kv_length) = length;
  const auto only_in = [&](const char* key, bool applies, const char* phase) {
    if (!applies && t.has(key)) t.fail(key, fmt::format("only read when serving.phase = \"{}\"", phase));
  };
  only_in("prefix_hit", prefill, "prefill");
  only_in("chunk", prefill, "prefill");
  only_in("mtp_tokens", !prefill, "decode");
  only_in("acceptance", !prefill, "decode");
  if (prefill) {
    s.prefix_hit = t.number_or("prefix_hit", 0, 0, 1);
    if (s.computed_prompt_tokens() < 1)
      t.fail("prefix_hit", fmt::format("leaves none of the prompt's {} tokens to compute", s.prompt_length));
    s.chunk = t.integer_or("chunk", 0, 1, kMaxTokens);
  } else {
    s.mtp_tokens = static_cast<int>(t.integer_or("mtp_tokens", 0, 0, 4));
    if (s.mtp_tokens > m.mtp_modules)
      t.fail("mtp_tokens", fmt::format("drafts with the model's MTP modules: at most model.mtp_modules = {}, got {}",
                                       m.mtp_modules, s.mtp_tokens));
    // A file's acceptance rate belongs to its drafts: --set serving.mtp_tokens=0
    // over a preset that drafts turns both off, as a user asking it means.
    const bool drafts_turned_off = s.mtp_tokens == 0 && t.overridden("mtp_tokens") && !t.overridden("acceptance");
    if (s.mtp_tokens > 0) s.acceptance = t.number("acceptance", 0, 1);
    else if (t.has("acceptance") && !drafts_turned_off) t.fail("acceptance", "needs serving.mtp_tokens > 0");
    if (m.context_length > 0 && s.cached_tokens() > m.context_length)
      t.fail("kv_length", fmt::format("{} cached tokens plus {} new ones exceed the model's context of {} tokens "
                                      "(model.context_length)",
                                      length, 1 + s.mtp_tokens, m.context_length));
  }
  if (s.batch / s.micro_batches * s.step_tokens() > kMaxMicroBatchTokens)
    t.fail("batch", fmt::format("{} tokens per micro-batch exceed {} (the sampler draws every token of every layer)",
                                s.batch / s.micro_batches * s.step_tokens(), kMaxMicroBatchTokens));
  s.kv_cache = to_dtype(t.choice_or("kv_cache", "bf16", {"bf16", "fp8"}));
  t.finish();
  return s;
}

PrecisionSpec read_precision(std::optional<TableReader> t) {
  PrecisionSpec p;
  if (!t) return p;
  p.dispatch = to_dtype(t->choice_or("dispatch", "fp8", {"fp8", "bf16"}));
  p.combine = to_dtype(t->choice_or("combine", "bf16", {"bf16", "fp8"}));
  p.gemm = to_dtype(t->choice_or("gemm", "bf16", {"bf16", "fp8"}));
  const std::string fallback = t->choice_or("gemm_fallback", "none", {"none", "bf16", "int8", "fp8"});
  if (fallback != "none") p.gemm_fallback = to_dtype(fallback);
  p.gradient = to_dtype(t->choice_or("gradient", "bf16", {"bf16", "fp32"}));
  p.scale_block = static_cast<int>(t->integer_or("scale_block", kFp8ScaleBlock, 1, 1 << 16));
  p.expert_alignment = static_cast<int>(t->integer_or("expert_alignment", 128, 1, 1 << 16));
  p.routing_metadata = t->boolean_or("routing_metadata", false);
  t->finish();
  return p;
}

// memory.recompute as a list of Megatron-Core's recompute_modules names.
RecomputeModules read_recompute_modules(TableReader& t, const toml::array& names) {
  RecomputeModules m;
  const std::vector<std::pair<const char*, bool RecomputeModules::*>> known = {
      {"layernorm", &RecomputeModules::layernorm},           {"mla_up_proj", &RecomputeModules::mla_up_proj},
      {"core_attn", &RecomputeModules::core_attn},           {"mlp", &RecomputeModules::mlp},
      {"shared_experts", &RecomputeModules::shared_experts}, {"moe_act", &RecomputeModules::moe_act}};
  if (names.empty())
    t.fail("recompute", "an empty module list; give \"none\" or Megatron's recompute_modules names");
  for (const toml::node& n : names) {
    const std::optional<std::string> name = n.value<std::string>();
    if (!name) t.fail("recompute", "expected a list of module names (strings)");
    if (*name == "moe")
      t.fail("recompute", "\"moe\" recomputes the whole MoE layer, its all-to-alls again: not simulated; "
                          "list \"moe_act\" and \"shared_experts\" instead");
    const auto it = std::find_if(known.begin(), known.end(), [&](const auto& k) { return *name == k.first; });
    if (it == known.end())
      t.fail("recompute", fmt::format("unknown module \"{}\"; expected layernorm, mla_up_proj, core_attn, mlp, "
                                      "shared_experts or moe_act (Megatron-Core's recompute_modules)",
                                      *name));
    if (m.*(it->second)) t.fail("recompute", fmt::format("\"{}\" listed twice", *name));
    m.*(it->second) = true;
  }
  return m;
}

MemorySpec read_memory(std::optional<TableReader> t) {
  MemorySpec m;
  if (!t) return m;
  const toml::node* listed = t->node("recompute");
  if (listed && listed->is_array()) {
    m.recompute = Recompute::kModules;
    m.modules = read_recompute_modules(*t, *listed->as_array());
  } else {
    const std::string recompute = t->choice_or("recompute", "none", {"none", "selective", "full"});
    m.recompute = recompute == "selective" ? Recompute::kSelective
                  : recompute == "full"    ? Recompute::kFull
                                           : Recompute::kNone;
  }
  m.zero_stage = static_cast<int>(t->integer_or("zero_stage", 0, 0, 1));
  m.moments = to_dtype(t->choice_or("moments", "fp32", {"fp32", "bf16"}));
  m.allow_oversubscribed = t->boolean_or("allow_oversubscribed", false);
  t->finish();
  return m;
}

RoutingSpec read_routing(std::optional<TableReader> t, const ModelSpec& model, const std::string& base_dir) {
  RoutingSpec r;
  if (!t) return r;
  const std::string kind = t->choice_or("kind", "uniform", {"uniform", "zipf", "hot", "trace"});
  r.kind = kind == "zipf" ? RoutingKind::kZipf
           : kind == "hot" ? RoutingKind::kHot
           : kind == "trace" ? RoutingKind::kTrace
                             : RoutingKind::kUniform;
  // Keys of other kinds are errors, not silently ignored; except that a kind
  // given by --set replaces the file's routing, so the file's keys of its
  // previous kind no longer apply (`--set routing.kind=hot` on a zipf preset).
  const bool kind_overridden = t->overridden("kind");
  auto only_for = [&](std::string_view key, const char* owner) {
    if (kind == owner || !t->has(key)) return;
    if (kind_overridden && !t->overridden(key)) return;
    t->fail(key, fmt::format("only read when routing.kind = \"{}\"", owner));
  };
  only_for("zipf_s", "zipf");
  only_for("hot_share", "hot");
  only_for("hot_experts", "hot");
  only_for("trace", "trace");
  if (r.kind == RoutingKind::kZipf) r.zipf_s = t->number("zipf_s", 0.0, 8.0);
  if (r.kind == RoutingKind::kHot) {
    r.hot_share = t->number("hot_share", 0.0, 1.0);
    r.hot_experts = static_cast<int>(t->integer("hot_experts", 1, model.experts));
  }
  if (r.kind == RoutingKind::kTrace) {
    std::string path = t->string("trace");
    fs::path p(path);
    if (p.is_relative() && !base_dir.empty()) p = fs::path(base_dir) / p;
    r.trace = read_routing_trace(p.string(), model, t->key_path("trace"), t->location("trace"));
  } else {
    const std::string order = t->choice_or("order", "none", {"none", "fixed", "per_layer"});
    r.order = order == "fixed" ? ExpertOrder::kFixed : order == "per_layer" ? ExpertOrder::kPerLayer : ExpertOrder::kNone;
    if (t->has("hot_placement") && r.kind != RoutingKind::kZipf && r.kind != RoutingKind::kHot)
      t->fail("hot_placement", "only read when routing.kind = \"zipf\" or \"hot\"");
    const std::string placement =
        t->choice_or("hot_placement", order == "none" ? "first" : "random", {"first", "spread", "random"});
    r.hot_placement = placement == "spread"   ? HotPlacement::kSpread
                      : placement == "random" ? HotPlacement::kRandom
                                              : HotPlacement::kFirst;
  }
  r.layer_jitter = t->number_or("layer_jitter", 0.0, 0.0, 0.99);
  r.seed = static_cast<std::uint64_t>(t->integer_or("seed", 1, 0));
  // Mitigations: ranges here, the layout's conditions in check_mitigations.
  r.redundant_experts = static_cast<int>(t->integer_or("redundant_experts", 0, 0, model.experts));
  r.capacity_factor = t->number_or("capacity_factor", 0.0, 0.01, 100.0);
  t->finish();
  return r;
}

// Redundant experts fill every rank up to (experts + redundant) / ep slots, and
// a replica reached through another node than its expert's would change
// which nodes a node-limited token meets: not modelled, refused.
void check_mitigations(TableReader routing, const WorkloadSpec& w) {
  const int redundant = w.routing.redundant_experts;
  if (redundant == 0) return;
  if ((w.model.experts + redundant) % w.parallel.ep != 0)
    routing.fail("redundant_experts",
                 fmt::format("model.experts ({}) + {} = {} expert slots are not divisible by parallel.ep ({}): every "
                             "rank holds as many slots",
                             w.model.experts, redundant, w.model.experts + redundant, w.parallel.ep));
  if (w.model.node_limit > 0 && w.model.node_limit < w.parallel.nodes_per_replica())
    routing.fail("redundant_experts",
                 fmt::format("with a binding model.node_limit ({} of {} nodes) replicas are not modelled yet: a "
                             "replica on another node changes the nodes a token meets",
                             w.model.node_limit, w.parallel.nodes_per_replica()));
}

}  // namespace

WorkloadSpec read_workload(const toml::table& root, const std::string& source, const std::string& base_dir,
                           const NodeSources* sources) {
  TableReader top(root, "", sources);
  top.integer("schema", kWorkloadSchema, kWorkloadSchema);
  WorkloadSpec w;
  w.source = source;
  w.model = read_model(top.table("model"));
  if (std::optional<TableReader> serving = top.optional_table("serving")) w.serving = read_serving(*serving, w.model);
  TableReader parallel = top.table("parallel");
  // The experts' split over EP ranks counts the redundant ones, read and checked with the routing below.
  const int redundant = static_cast<int>(root["routing"]["redundant_experts"].value_or(std::int64_t{0}));
  w.parallel = read_parallel(parallel, w.model, w.serving ? &*w.serving : nullptr, redundant, source);
  w.precision = read_precision(top.optional_table("precision"));
  w.memory = read_memory(top.optional_table("memory"));
  // Megatron refuses the overlap with full recomputation.
  if (w.parallel.moe_a2a_overlap && w.memory.recompute == Recompute::kFull)
    parallel.fail("moe_a2a_overlap", "Megatron's 1F1B all-to-all overlap runs without full recomputation "
                                     "(memory.recompute = \"full\"); use \"selective\" or \"none\"");

  // The node limit is checked against the workload's own layout.
  const int nodes = w.parallel.nodes_per_replica();
  const int per_node = w.model.experts / nodes;
  if (w.model.node_limit > 0 && w.model.node_limit < nodes &&
      static_cast<std::int64_t>(w.model.node_limit) * per_node < w.model.top_k) {
    TableReader model = top.table("model");
    model.fail("node_limit", fmt::format("{} nodes x {} experts per node = {} experts reachable, fewer than "
                                         "top_k = {} (ep {}, ranks_per_node {})",
                                         w.model.node_limit, per_node, w.model.node_limit * per_node,
                                         w.model.top_k, w.parallel.ep, w.parallel.ranks_per_node));
  }

  std::optional<TableReader> routing = top.optional_table("routing");
  w.routing = read_routing(routing, w.model, base_dir);
  if (routing) check_mitigations(*routing, w);
  top.finish();

  for (int l = 0; l < w.model.moe_layers(); ++l) {
    std::string why = routing_infeasibility(w, expert_weights(w, l));
    if (why.empty()) continue;
    const std::string key = w.routing.kind == RoutingKind::kTrace ? "trace" : "kind";
    const std::string problem = fmt::format("MoE layer {}: {}", l + w.model.dense_layers, why);
    if (routing && routing->has(key)) routing->fail(key, problem);
    throw InputError(SourceLocation{source}, "routing." + key, problem);
  }
  return w;
}

WorkloadSpec load_workload(const std::string& file_or_preset, const std::vector<std::string>& overrides,
                           const WorkloadEdits& edits) {
  const std::string path = resolve_preset_file(PresetKind::kWorkload, file_or_preset);
  toml::table root = load_toml_with_base(path, PresetKind::kWorkload);
  apply_overrides(root, overrides);
  const AppliedEdits applied = apply_edits(root, edits);
  try {
    return read_workload(root, path, fs::path(path).parent_path().string(), &applied.sources);
  } catch (const InputError& e) {
    throw at_option(e, applied);
  }
}

std::vector<std::string> workload_presets() {
  return preset_names(PresetKind::kWorkload);
}

void check_traffic_memory(const WorkloadSpec& w) {
  const ParallelSpec& p = w.parallel;
  const double traffic_bytes = traffic_memory_bytes(w.model.moe_layers(), p.micro_batches, p.ranks());
  if (traffic_bytes <= memory_limit_GiB() * kBytesPerGiB) return;
  throw InputError(p.ranks_given_at, "parallel.ep",
                   fmt::format("a stage's ep x edp = {} ranks need an estimated {:.1f} GiB for their traffic matrices "
                               "({} of {}^2 entries x ~{:.0f} B), {}; simulate fewer ranks or micro-batches",
                               p.ranks(), traffic_bytes / kBytesPerGiB, w.model.moe_layers() * p.micro_batches,
                               p.ranks(), kTrafficBytesPerEntry, memory_limit_clause()));
}

}  // namespace epsim::workloads
