// Per-rank memory terms (docs/memory.md has each formula and its source).
#include "workloads/memory_fit.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "workloads/layer_costs.hpp"

namespace epsim::workloads {

const char* to_string(PipelineSchedule schedule) {
  switch (schedule) {
    case PipelineSchedule::kGpipe: return "gpipe";
    case PipelineSchedule::kOneFOneB: return "1f1b";
    case PipelineSchedule::kInterleaved: return "interleaved";
    case PipelineSchedule::kDualPipe: return "dualpipe";
  }
  return "?";
}

const char* to_string(Recompute recompute) {
  switch (recompute) {
    case Recompute::kNone: return "none";
    case Recompute::kSelective: return "selective";
    case Recompute::kFull: return "full";
    case Recompute::kModules: return "modules";
  }
  return "?";
}

std::string recompute_name(Recompute recompute, const RecomputeModules& m) {
  if (recompute != Recompute::kModules) return to_string(recompute);
  std::string out;
  const auto add = [&](bool on, const char* name) {
    if (on) out += (out.empty() ? "" : "+") + std::string(name);
  };
  add(m.layernorm, "layernorm");
  add(m.mla_up_proj, "mla_up_proj");
  add(m.core_attn, "core_attn");
  add(m.mlp, "mlp");
  add(m.shared_experts, "shared_experts");
  add(m.moe_act, "moe_act");
  return out;
}

namespace {

constexpr double kActivationBytes = 2;  // BF16 activations
constexpr double kFp32Bytes = 4;
constexpr double kGB = 1e9;

double per_expert_params(const ModelSpec& m) {
  return 3.0 * static_cast<double>(m.hidden) * static_cast<double>(m.expert_ffn);
}

// Bytes per channel of a cached GEMM input: FP8 carries a 4-byte scale per block.
double gemm_input_bytes(const MemoryInputs& in) {
  return in.gemm == Dtype::kFp8 ? 1.0 + 4.0 / in.scale_block : dtype_bytes(in.gemm);
}

// Activation bytes per token of one layer, split into what TP divides
// (attention, dense FFN, shared experts, norms) and the routed experts.
struct LayerActivation {
  double dense = 0;
  double routed = 0;  // h-wide parts (expert input and output), not divided by ETP
  double routed_ffn = 0;  // f-wide parts, divided by ETP
};

LayerActivation layer_activation(const ModelSpec& m, const MemoryInputs& in, bool moe) {
  const double a = kActivationBytes, g = gemm_input_bytes(in), h = static_cast<double>(m.hidden);
  LayerActivation out;
  if (in.recompute == Recompute::kFull) {  // the layer input only (Korthikanti et al. 2022, sec. 4.1)
    out.dense = a * h;
    return out;
  }
  const bool sel = in.recompute == Recompute::kSelective;
  // What is dropped and recomputed: selective is DeepSeek-V3's recipe (below);
  // a module list drops each module's outputs (Megatron's recompute_modules).
  const RecomputeModules mods = in.recompute == Recompute::kModules ? in.modules : RecomputeModules{};
  const bool norms = sel || mods.layernorm, up_proj = sel || mods.mla_up_proj;
  const AttentionSpec& at = m.attention;
  const double heads = at.heads;
  // Attention block: RMSNorm input, its output (the projections' GEMM input),
  // the core's Q, K, V, its softmax statistics (flash: FP32 per head) and output.
  double attn = a * h + (norms ? 0 : g * h) + (mods.core_attn ? 0 : kFp32Bytes * heads);
  if (at.kind == AttentionKind::kMla) {
    const double qk = at.qk_nope_head_dim + at.qk_rope_head_dim;
    if (at.q_lora_rank > 0) attn += a * at.q_lora_rank + (norms ? 0 : g * at.q_lora_rank);
    attn += a * (at.kv_lora_rank + at.qk_rope_head_dim) + (norms ? 0 : g * at.kv_lora_rank);
    if (!up_proj) attn += a * heads * (2.0 * qk + at.v_head_dim);  // MLA up-projection outputs
    if (!mods.core_attn) attn += a * heads * at.v_head_dim;
  } else {
    // Selective recomputation of GQA recomputes only the norm output (flash
    // attention already keeps no score matrix).
    attn += a * (heads + 2.0 * at.kv_heads) * at.head_dim + (mods.core_attn ? 0 : a * heads * at.head_dim);
  }
  // FFN block: RMSNorm input and output, then the SwiGLU's input (the gate/up
  // GEMM's output: in FP8 under DeepSeek-V3's recipe) and output (the down
  // GEMM's input, recomputed under selective). A recomputed FFN (mlp,
  // shared_experts) keeps only its input, the norm output.
  const double swiglu_in = sel ? g : a;
  auto swiglu = [&](double f, bool act_recomputed) { return swiglu_in * 2.0 * f + (act_recomputed ? 0 : g * f); };
  double ffn = a * h + (norms ? 0 : g * h);
  if (!moe) {
    if (!mods.mlp) ffn += swiglu(static_cast<double>(m.dense_ffn), sel);
  } else {
    ffn += kFp32Bytes * m.experts;  // router scores
    if (!mods.shared_experts) ffn += m.shared_experts * swiglu(static_cast<double>(m.shared_expert_ffn), sel);
    // Each token's top_k routed copies: the expert's input, and (not when
    // its SwiGLU output is recomputed, which recomputes them too) its
    // output, kept for the routing-weight gradient.
    const bool act = sel || mods.moe_act;
    out.routed = m.top_k * (g * h + (act ? 0 : a * h));
    out.routed_ffn = m.top_k * swiglu(static_cast<double>(m.expert_ffn), act);
  }
  out.dense = attn + ffn;
  return out;
}

// The layers of pipeline position `stage`: its chunks under the interleaved
// split; under DualPipe the rank holds stages `stage` and pp-1-stage.
struct StageLayers {
  int dense = 0, moe = 0;
  bool embedding = false, head = false;
};

StageLayers stage_layers(const ModelSpec& m, const MemoryInputs& in, int stage) {
  const int pp = in.layout.pp;
  const bool dual = in.schedule == PipelineSchedule::kDualPipe;
  const int vpp = dual ? 1 : in.vpp;
  const StageSplit split = split_layers(m.layers, pp, vpp);
  StageLayers out;
  auto add_stage = [&](int s) {
    for (std::size_t c = 0; c < split.chunk_layers.size(); ++c) {
      if (split.stage_of_chunk(static_cast<int>(c), pp) != s) continue;
      for (int l = split.chunk_first[c]; l < split.chunk_first[c] + split.chunk_layers[c]; ++l)
        (m.is_moe(l) ? out.moe : out.dense) += 1;
    }
    out.embedding = out.embedding || s == 0;
    out.head = out.head || s == pp - 1;
  };
  add_stage(stage);
  if (dual) add_stage(pp - 1 - stage);
  return out;
}

std::string gb(double bytes) { return fmt::format("{:.2f} GB", bytes / kGB); }

std::string params_text(double p) {
  return p >= 1e9 ? fmt::format("{:.3f}G params", p / 1e9) : fmt::format("{:.3f}M params", p / 1e6);
}

// "/ DP 128" under ZeRO-1, "(ZeRO 0: not sharded)" otherwise.
std::string shards_text(int zero_stage, const char* group, int size) {
  return zero_stage >= 1 ? fmt::format("/ {} {}", group, size) : std::string("(ZeRO 0: not sharded)");
}

MemoryBreakdown stage_memory(const ModelSpec& m, const MemoryInputs& in, int stage) {
  const ParallelLayout& L = in.layout;
  const double h = static_cast<double>(m.hidden);
  const StageLayers layers = stage_layers(m, in, stage);
  MemoryBreakdown b;
  b.stage = stage;
  b.dense_layers = layers.dense;
  b.moe_layers = layers.moe;

  // Parameters: TP splits attention, dense FFNs, shared experts and the
  // vocabulary; EP x ETP split the routed experts; the gate is replicated.
  const double embedding = static_cast<double>(m.vocab) * h;
  const double dense_ffn = 3.0 * h * static_cast<double>(m.dense_ffn);
  const double shared = m.shared_experts * 3.0 * h * static_cast<double>(m.shared_expert_ffn);
  const double gate = static_cast<double>(m.experts) * h;
  const double dense_params =
      ((layers.embedding ? embedding : 0) + (layers.head ? embedding : 0) +
       (layers.dense + layers.moe) * attention_params(m) + layers.dense * dense_ffn + layers.moe * shared) / L.tp +
      layers.moe * gate;
  // A redundant slot holds a whole expert: weights, gradients and optimizer state.
  const double expert_params =
      layers.moe * (static_cast<double>(m.experts + in.redundant_experts) / L.ep) * per_expert_params(m) / L.etp;
  const double grad = dtype_bytes(in.gradient);
  const double state = in.master_bytes + 2.0 * in.moment_bytes;
  const int dense_shards = in.zero_stage >= 1 ? L.dp : 1;
  const int expert_shards = in.zero_stage >= 1 ? L.edp() : 1;
  const std::string pd = params_text(dense_params), pe = params_text(expert_params);
  b.terms.push_back({"dense weights", in.weight_bytes * dense_params, fmt::format("{} x {} B", pd, in.weight_bytes)});
  b.terms.push_back({"expert weights", in.weight_bytes * expert_params, fmt::format("{} x {} B", pe, in.weight_bytes)});
  b.terms.push_back({"dense gradients", grad * dense_params, fmt::format("{} x {} B", pd, grad)});
  b.terms.push_back({"expert gradients", grad * expert_params, fmt::format("{} x {} B", pe, grad)});
  b.terms.push_back({"dense optimizer state", state * dense_params / dense_shards,
                     fmt::format("{} x (master {} + moments 2 x {}) B {}", pd, in.master_bytes, in.moment_bytes,
                                 shards_text(in.zero_stage, "DP", L.dp))});
  b.terms.push_back({"expert optimizer state", state * expert_params / expert_shards,
                     fmt::format("{} x (master {} + moments 2 x {}) B {}", pe, in.master_bytes, in.moment_bytes,
                                 shards_text(in.zero_stage, "EDP", L.edp()))});

  // Activations kept for backward over the micro-batches in flight.
  const double t = static_cast<double>(in.micro_batch_tokens);
  b.in_flight_micro_batches = in_flight_micro_batches(in.schedule, L.pp, in.vpp, in.micro_batches, stage, in.a2a_overlap);
  auto layer_bytes = [&](bool moe, const MemoryInputs& mi) {
    const LayerActivation la = layer_activation(m, mi, moe);
    return t * (la.dense / L.tp + la.routed + la.routed_ffn / L.etp);
  };
  // A micro-batch runs through one stage's layers; a DualPipe rank holds two
  // stages (one per direction), so its micro-batches see their mean.
  const double stage_share = in.schedule == PipelineSchedule::kDualPipe ? 0.5 : 1.0;
  const double per_micro_batch =
      stage_share * (layers.dense * layer_bytes(false, in) + layers.moe * layer_bytes(true, in));
  double activations = b.in_flight_micro_batches * per_micro_batch;
  std::string act_formula =
      fmt::format("{:.2f} micro-batches x {}({} dense + {} MoE layers) x {} tokens, recompute {}",
                  b.in_flight_micro_batches, stage_share < 1 ? "1/2 x " : "", layers.dense, layers.moe,
                  in.micro_batch_tokens, recompute_name(in.recompute, in.modules));
  if (in.recompute == Recompute::kFull && layers.dense + layers.moe > 0) {
    // One layer's full set exists while it is recomputed in backward.
    MemoryInputs none = in;
    none.recompute = Recompute::kNone;
    activations += layer_bytes(layers.moe > 0, none);
    act_formula += " + one layer recomputed";
  }
  b.terms.push_back({"activations", activations, act_formula});
  const double logits = layers.head ? t * static_cast<double>(m.vocab) * kFp32Bytes / L.tp : 0;
  b.terms.push_back({"output logits", logits,
                     layers.head ? fmt::format("{} tokens x {} vocab x 4 B / TP {} (one micro-batch)",
                                               in.micro_batch_tokens, m.vocab, L.tp)
                                 : std::string("none: this stage holds no output head")});

  // DeepEP-style receive buffers: what a rank receives in one dispatch and one combine.
  const bool moving = layers.moe > 0 && L.ep > 1;
  const double received = moving ? t * distinct_ranks_exact(L.ep, m.experts, m.top_k) : 0;
  b.terms.push_back({"dispatch/combine buffers", received * (in.dispatch_bytes_per_token + in.combine_bytes_per_token),
                     fmt::format("{:.0f} tokens received x ({} + {}) B", received, in.dispatch_bytes_per_token,
                                 in.combine_bytes_per_token)});
  return b;
}

}  // namespace

double MemoryBreakdown::total_bytes() const {
  double sum = 0;
  for (const MemoryTerm& t : terms) sum += t.bytes;
  return sum;
}

const MemoryTerm& MemoryBreakdown::largest() const {
  return *std::max_element(terms.begin(), terms.end(),
                           [](const MemoryTerm& x, const MemoryTerm& y) { return x.bytes < y.bytes; });
}

ParameterCount count_parameters(const ModelSpec& m) {
  const double experts = m.moe_layers() * static_cast<double>(m.experts) * per_expert_params(m);
  const double unused = m.moe_layers() * static_cast<double>(m.experts - m.top_k) * per_expert_params(m);
  const double total = dense_params(m) + experts;
  return {total, total - unused};
}

double in_flight_micro_batches(PipelineSchedule schedule, int pp, int vpp, int micro_batches, int stage,
                               bool a2a_overlap) {
  const double m = micro_batches;
  // The overlap's extra warm-up forward (pipeline_order()).
  const double overlap = a2a_overlap ? 1.0 : 0.0;
  switch (schedule) {
    case PipelineSchedule::kGpipe: return m;
    case PipelineSchedule::kOneFOneB: return std::min<double>(pp - stage + overlap, m);
    case PipelineSchedule::kInterleaved: {
      // Megatron runs the plain 1F1B schedule without virtual stages.
      if (vpp <= 1) return std::min<double>(pp - stage + overlap, m);
      // Megatron's warm-up: 2 (pp - stage - 1) + (vpp - 1) pp chunk forwards,
      // plus the one in the steady state; a chunk is 1/vpp of the stage.
      const double chunks = 2.0 * (pp - stage - 1) + (vpp - 1.0) * pp + 1.0 + overlap;
      return std::min(chunks, m * vpp) / vpp;
    }
    case PipelineSchedule::kDualPipe: return std::min<double>(pp + 1, m);
  }
  return m;
}

double activation_bytes_per_token(const ModelSpec& model, const MemoryInputs& inputs, bool moe) {
  const LayerActivation la = layer_activation(model, inputs, moe);
  return la.dense + la.routed + la.routed_ffn;
}

MemoryBreakdown memory_per_rank(const ModelSpec& model, const MemoryInputs& inputs) {
  MemoryBreakdown best = stage_memory(model, inputs, 0);
  for (int s = 1; s < inputs.layout.pp; ++s) {
    MemoryBreakdown b = stage_memory(model, inputs, s);
    if (b.total_bytes() > best.total_bytes()) best = std::move(b);
  }
  return best;
}

MemoryInputs current_memory_inputs(const WorkloadSpec& w) {
  MemoryInputs in;
  in.layout = w.parallel.layout();
  in.vpp = w.parallel.vpp;
  in.micro_batches = w.parallel.micro_batches;
  in.micro_batch_tokens = w.parallel.tokens_per_micro_batch;
  // The schedule the graph runs; one stage runs 1F1B at pp = 1 (each
  // micro-batch's forward then its backward, as Megatron accumulates
  // gradients): one micro-batch in flight.
  in.schedule = w.parallel.schedule;
  in.modules = w.memory.modules;
  in.a2a_overlap = w.parallel.moe_a2a_overlap;
  in.recompute = w.memory.recompute;
  in.zero_stage = w.memory.zero_stage;
  in.gemm = w.precision.gemm;
  in.scale_block = w.precision.scale_block;
  in.gradient = w.precision.gradient;
  in.moment_bytes = dtype_bytes(w.memory.moments);
  in.dispatch_bytes_per_token = dispatch_bytes_per_token(w);
  in.combine_bytes_per_token = combine_bytes_per_token(w);
  in.redundant_experts = w.routing.redundant_experts;
  return in;
}

MemoryFit check_memory_fit(const MemoryBreakdown& b, double capacity_bytes) {
  MemoryFit f;
  f.peak_bytes = b.total_bytes();
  f.capacity_bytes = capacity_bytes;
  f.capacity_known = capacity_bytes > 0;
  f.fits = !f.capacity_known || f.peak_bytes <= capacity_bytes;
  return f;
}

std::string describe_memory_fit(const MemoryBreakdown& b, const MemoryFit& f) {
  const MemoryTerm& top = b.largest();
  const std::string capacity = f.capacity_known ? fmt::format("HBM holds {}", gb(f.capacity_bytes))
                                                : std::string("HBM capacity unknown");
  return fmt::format("needs {} per rank, {}; largest term: {} {} ({})", gb(f.peak_bytes), capacity, top.name,
                     gb(top.bytes), top.formula);
}

}  // namespace epsim::workloads
