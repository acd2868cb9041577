// Active parameters and attention-core FLOPs per token.
#include "workloads/model_flops.hpp"

#include "workloads/layer_costs.hpp"

namespace epsim::workloads {

ModelFlops model_flops(const WorkloadSpec& w) {
  const ModelSpec& m = w.model;
  const double h = static_cast<double>(m.hidden);
  const double routed = m.top_k * 3.0 * h * static_cast<double>(m.expert_ffn);
  ModelFlops out;
  for (int l = 0; l < m.layers; ++l) out.active_params += dense_layer_params(m, l) + (m.is_moe(l) ? routed : 0.0);
  out.active_params += embedding_params(m);  // the output head, vocab x hidden
  // attention_cost() holds the core for T tokens beside 2 T x the projections (per layer: its window).
  const double tokens = static_cast<double>(w.parallel.tokens_per_micro_batch);
  for (int l = 0; l < m.layers; ++l)
    out.attention_core_flops += attention_cost(w, l).flops / tokens - 2.0 * attention_params(m);
  return out;
}

}  // namespace epsim::workloads
