// Seed 002's inference closed forms for a MoE serving step.
#include "workloads/serving_ledger.hpp"

#include "workloads/layer_costs.hpp"
#include "workloads/model_flops.hpp"
#include "workloads/serving_memory.hpp"

namespace epsim::workloads {

ServingLedger serving_ledger(const WorkloadSpec& w) {
  const ServingSpec& s = *w.serving;
  ServingLedger l;
  l.weight_bytes = serving_weight_bytes(w) * s.micro_batches;
  const double sequences = static_cast<double>(s.batch);
  const double layers = w.model.layers + (s.prefill() ? 0 : s.mtp_tokens);
  const double per_token = kv_cache_bytes_per_token(w);
  l.cache_bytes = s.prefill() ? sequences * static_cast<double>(s.step_tokens()) * layers * per_token
                              : sequences * static_cast<double>(s.cached_tokens()) * layers * per_token;
  if (s.prefill())
    l.handoff_bytes = sequences * static_cast<double>(s.prompt_length) * w.model.layers * per_token / w.parallel.tp;
  const double tokens = sequences * static_cast<double>(s.step_tokens()) / w.parallel.tp;
  l.flops = tokens * model_flops(w).forward_per_token();
  return l;
}

}  // namespace epsim::workloads
