// The plan's step bound: model FLOPs per chunk, the stages' work and the
// pipeline's fill and drain chains.
#include "app/plan_bound.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#include "workloads/layer_costs.hpp"
#include "workloads/parallel_layout.hpp"
#include "workloads/pipeline_schedule.hpp"

namespace epsim::app {

namespace {

// Forward seconds per token of layer `l`: 2 x its matmul parameters (top_k
// routed experts in an MoE layer) plus its attention core, as
// workloads::model_flops counts them, each class at its rate.
double layer_forward_s(const workloads::WorkloadSpec& w, const PlanRates& rates, int l) {
  const workloads::ModelSpec& m = w.model;
  const double routed = m.is_moe(l) ? m.top_k * 3.0 * static_cast<double>(m.hidden) * static_cast<double>(m.expert_ffn) : 0.0;
  const double attention = workloads::attention_params(m);
  const double dense = workloads::dense_layer_params(m, l) - attention;
  const double tokens = static_cast<double>(w.parallel.tokens_per_micro_batch);
  const double core = std::max(0.0, workloads::attention_cost(w, l).flops / tokens - 2.0 * attention);
  return (2.0 * attention + core) / rates.attention_flops + 2.0 * dense / rates.dense_flops +
         2.0 * routed / rates.grouped_flops;
}

}  // namespace

PlanRates plan_rates(const topology::ClusterSpec& cluster, const workloads::PrecisionSpec& precision) {
  const topology::NpuSpec& npu = cluster.npu;
  double peak = npu.flops_bf16;
  if (precision.gemm == workloads::Dtype::kFp8) {
    if (npu.flops_fp8 > 0)
      peak = std::max(peak, npu.flops_fp8);
    else if (precision.gemm_fallback == workloads::Dtype::kInt8)
      peak = std::max(peak, npu.flops_int8);
  }
  // The stack's best shares, so that the bound stays below every priced shape
  // (the attention task runs its projections as GEMMs beside the core).
  const topology::StackSpec& s = cluster.stack;
  const double dense = std::max(s.gemm_bf16.max, s.gemm_fp8.max);
  const double grouped = std::max(s.grouped_bf16.max, s.grouped_fp8.max);
  const double attention = std::max({dense, s.attention.max, s.attention_backward.max});
  return {peak, peak * attention, peak * dense, peak * grouped};
}

namespace {

// Per stage: the passes' work (W_s) and the fill and drain chains around it.
struct StageTimes {
  std::vector<double> work_s;
  std::vector<double> fill_drain_s;
};

StageTimes stage_times(const workloads::WorkloadSpec& w, const PlanRates& rates) {
  const workloads::ParallelSpec& p = w.parallel;
  const bool dualpipe = p.schedule == workloads::PipelineSchedule::kDualPipe;
  const int vpp = p.schedule == workloads::PipelineSchedule::kInterleaved ? p.vpp : 1;
  // Slices of the layers along a micro-batch's path (positions).
  const workloads::StageSplit split =
      workloads::split_layers(w.model.pipeline_layers(), p.pp, vpp, p.first_stage_layers, p.last_stage_layers);
  const int positions = static_cast<int>(split.chunk_layers.size());
  const double tokens = static_cast<double>(p.tokens_per_micro_batch);
  const double backward_share = w.memory.recompute == workloads::Recompute::kFull ? 3.0 : 2.0;
  std::vector<double> forward_s(static_cast<std::size_t>(positions), 0.0);
  for (int pos = 0; pos < positions; ++pos) {
    double per_token_s = 0;
    // An MTP module's position (l >= layers) adds nothing: the bound leaves MTP out.
    for (int l = split.chunk_first[pos]; l < std::min(split.chunk_first[pos] + split.chunk_layers[pos], w.model.layers); ++l)
      per_token_s += layer_forward_s(w, rates, l);
    if (pos == positions - 1) per_token_s += 2.0 * workloads::embedding_params(w.model) / rates.dense_flops;  // the output head
    forward_s[static_cast<std::size_t>(pos)] = tokens * per_token_s;
  }
  // Chains of the passes ahead of each position.
  std::vector<double> ahead_s(static_cast<std::size_t>(positions) + 1, 0.0);
  for (int pos = 0; pos < positions; ++pos)
    ahead_s[static_cast<std::size_t>(pos) + 1] = ahead_s[static_cast<std::size_t>(pos)] + forward_s[static_cast<std::size_t>(pos)];

  const int chunks = workloads::pipeline_chunks(p.schedule, p.pp, vpp);
  const double passes = dualpipe ? p.micro_batches / 2.0 : p.micro_batches;
  std::vector<double> work_s(static_cast<std::size_t>(p.pp), 0.0);
  std::vector<double> first_chain_s(static_cast<std::size_t>(p.pp), std::numeric_limits<double>::infinity());
  for (int c = 0; c < chunks; ++c) {
    const auto stage = static_cast<std::size_t>(workloads::chunk_stage(p.schedule, p.pp, c));
    const auto pos = static_cast<std::size_t>(workloads::chunk_position(p.schedule, p.pp, c));
    work_s[stage] += passes * (1.0 + backward_share) * forward_s[pos];
    first_chain_s[stage] = std::min(first_chain_s[stage], ahead_s[pos]);
  }
  // Forward chain before the stage's first pass, backward chain (backward_share x as long) after its last.
  StageTimes out{work_s, std::vector<double>(work_s.size(), 0.0)};
  for (std::size_t s = 0; s < work_s.size(); ++s) out.fill_drain_s[s] = (1.0 + backward_share) * first_chain_s[s];
  return out;
}

}  // namespace

double plan_step_bound_s(const workloads::WorkloadSpec& w, const PlanRates& rates) {
  const StageTimes t = stage_times(w, rates);
  double bound = 0;
  for (std::size_t s = 0; s < t.work_s.size(); ++s) bound = std::max(bound, t.work_s[s] + t.fill_drain_s[s]);
  return bound;
}

std::vector<double> plan_fill_drain_s(const workloads::WorkloadSpec& w, const PlanRates& rates) {
  return stage_times(w, rates).fill_drain_s;
}

}  // namespace epsim::app
