// Seed 002's inference ledger (ledgers/step_budget.hpp: a phase bounded by
// max(bytes / bandwidth, FLOPs / peak)) for one rank of a MoE serving step
// (docs/serving.md): what the step must read from HBM and compute at least,
// no communication, beside what the replay finds.
#pragma once

#include "workloads/workload_spec.hpp"

namespace epsim::workloads {

struct ServingLedger {
  double weight_bytes = 0;  // the rank's weights, read once per micro-batch
  double cache_bytes = 0;   // decode: every sequence's KV cache read once; prefill: the new entries written
  double flops = 0;         // the step's tokens x (2 x active params + the attention core per token)
  // Prefill: the KV cache a rank hands to the decode pool for its batch of
  // prompts, every prompt's whole cache (a prefix hit's too: the decode
  // side holds all of it), batch x prompt_length x layers x bytes per
  // token / tp (the TP ranks share the sending); 0 for decode.
  double handoff_bytes = 0;
  double bytes() const { return weight_bytes + cache_bytes; }
};

// The ledger of a rank of serving workload `w` (w.serving must be set).
ServingLedger serving_ledger(const WorkloadSpec& w);

}  // namespace epsim::workloads
