// What one rank holds in HBM during a training step: weights, gradients,
// optimizer state, the activations kept for backward and the dispatch /
// combine receive buffers, as named terms, and whether they fit the NPU.
// Plain arithmetic on a model and a layout: no TOML, no platform. Every
// term's formula and source is in docs/memory.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "workloads/parallel_layout.hpp"
#include "workloads/workload_spec.hpp"

namespace epsim::workloads {

// PipelineSchedule (workload_spec.hpp) decides how many micro-batches' activations a stage holds at its peak.

// Recompute is workload_spec.hpp's (the workload's [memory] table names it).
const char* to_string(Recompute recompute);
// The recomputation as its key names it: "none", "selective", "full", or
// the modules joined by "+" ("layernorm+moe_act").
std::string recompute_name(Recompute recompute, const RecomputeModules& modules);

// Everything memory_per_rank() needs beyond the model. Defaults: one rank,
// BF16 weights and gradients, FP32 master weights and Adam moments.
struct MemoryInputs {
  ParallelLayout layout;  // tp, pp, dp (dense data parallelism), ep, etp; edp follows
  int vpp = 1;            // model chunks per pipeline stage (interleaved schedule)
  int micro_batches = 1;
  std::int64_t micro_batch_tokens = 0;  // tokens per rank per micro-batch
  PipelineSchedule schedule = PipelineSchedule::kOneFOneB;
  bool a2a_overlap = false;  // Megatron's 1F1B all-to-all overlap: one more warm-up forward in flight
  Recompute recompute = Recompute::kNone;
  RecomputeModules modules;  // kModules: which
  int zero_stage = 0;  // 0: every rank holds all optimizer state; 1: sharded over DP (dense) and EDP (experts)
  Dtype gemm = Dtype::kBf16;      // GEMM inputs are cached in this dtype (FP8: 1 B + a 4 B scale per scale_block)
  int scale_block = 128;
  Dtype gradient = Dtype::kBf16;  // gradient buffer
  double weight_bytes = 2;        // model weights per parameter (BF16)
  double master_bytes = 4;        // FP32 master weights per parameter
  double moment_bytes = 4;        // each of Adam's two moments per parameter (DeepSeek-V3: BF16, 2)
  double dispatch_bytes_per_token = 0;  // on the wire, per (token, destination rank)
  double combine_bytes_per_token = 0;
  int redundant_experts = 0;  // routing.redundant_experts: redundant_experts / ep more expert slots per rank
};

// One named share of a rank's memory.
struct MemoryTerm {
  std::string name;     // "expert optimizer state"
  double bytes = 0;
  std::string formula;  // how it was computed, with the numbers filled in
};

struct MemoryBreakdown {
  int stage = 0;                  // the pipeline stage (rank position) the terms are for: the fullest
  double in_flight_micro_batches = 0;  // activations held, in micro-batches of the stage's layers
  int dense_layers = 0;           // layers the rank holds, dense (dense FFN) and MoE
  int moe_layers = 0;
  std::vector<MemoryTerm> terms;  // fixed order (docs/memory.md), zero terms included
  double total_bytes() const;
  const MemoryTerm& largest() const;  // the first of the largest
};

// Parameters of the model: all of them, and those one token runs through
// (every dense parameter plus top_k routed experts per MoE layer).
struct ParameterCount {
  double total = 0;
  double active = 0;
};
ParameterCount count_parameters(const ModelSpec& model);

// Micro-batches whose activations a stage holds at its peak (docs/memory.md).
double in_flight_micro_batches(PipelineSchedule schedule, int pp, int vpp, int micro_batches, int stage,
                               bool a2a_overlap);

// Activation bytes one token leaves in one layer for backward (MoE layer
// when `moe`, else dense FFN layer), before TP division.
double activation_bytes_per_token(const ModelSpec& model, const MemoryInputs& inputs, bool moe);

// Memory of the fullest pipeline stage's ranks (the largest total over
// stages). Requires a layout that check_layout accepts and
// check_stage_split(model.layers, pp, vpp, 0, 0) passes.
MemoryBreakdown memory_per_rank(const ModelSpec& model, const MemoryInputs& inputs);

// The inputs for a workload as epsim's step runs it: its [parallel] layout
// (TP, PP, VPP, EP, DP; the layers split evenly: first_stage_layers and
// last_stage_layers are not seen here), its pipeline schedule (one stage:
// 1F1B at pp = 1, each micro-batch's forward then its backward, one in
// flight, as the task graph runs it); and the workload's [memory] choices.
MemoryInputs current_memory_inputs(const WorkloadSpec& workload);

// Whether `breakdown` fits `capacity_bytes` (0: capacity unknown, taken as fitting).
struct MemoryFit {
  double peak_bytes = 0;
  double capacity_bytes = 0;
  bool fits = true;
  bool capacity_known = false;
};
MemoryFit check_memory_fit(const MemoryBreakdown& breakdown, double capacity_bytes);

// One line for an error or report: "needs 412.3 GB per rank, HBM holds 64.0 GB;
// largest term: expert optimizer state 245.1 GB (...)".
std::string describe_memory_fit(const MemoryBreakdown& breakdown, const MemoryFit& fit);

}  // namespace epsim::workloads
