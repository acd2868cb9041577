// What a report is about: the platform, workload, layout and seed it was
// run with and the epsim version that ran it, so that a report (text or
// JSON) read on its own says what it is. The caller fills it; plain data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "workloads/routing_placement.hpp"
#include "workloads/task_graph.hpp"

namespace epsim::sim {

struct Scenario {
  std::string platform;        // as given: preset name, cluster TOML or SimGrid XML path
  std::string platform_name;   // the cluster's own name ("atlas-800t-a2"); "" when not known (XML)
  std::string npu_model;       // "Ascend 910B"; "" when not known (XML)
  std::string workload;        // as given: preset name or workload TOML path
  std::string model;           // model.name
  int ep = 0;                  // expert-parallel ranks
  int dp = 0;                  // data-parallel replicas
  int ranks_per_node = 0;
  long long seed = 0;          // routing.seed
  std::vector<std::string> overrides;  // --set key=value, as given
  // The rest of the layout (docs/layout.md) and the batch.
  int tp = 1;
  int pp = 1;
  int vpp = 1;
  int etp = 1;
  int edp = 1;
  std::string pipeline_schedule = "1f1b";
  int micro_batches = 0;          // per step and DP rank
  long long micro_batch = 0;      // sequences per micro-batch and DP rank
  long long sequence_length = 0;  // tokens per sequence
  long long global_batch = 0;     // sequences per step
  // Throughput: model FLOPs per token (workloads/model_flops.hpp) and the
  // dtype whose peak MFU is taken against (precision.gemm); no throughput
  // is reported when global_batch is 0.
  double model_flops_per_token = 0;
  double active_params = 0;
  workloads::Dtype mfu_dtype = workloads::Dtype::kBf16;
  // The routing and where its hottest experts sit (absent: not known).
  std::optional<workloads::RoutingPlacement> routing = std::nullopt;
  // The software stack that priced the kernels (docs/stacks.md); "" when none (XML).
  std::string stack = {};
  // A serving step (docs/serving.md): its phase ("prefill", "decode"; ""
  // for a training step), sequences per rank and the keys each of their
  // tokens attends to (a prompt's length, or the cache and the new token).
  std::string serving_phase = {};
  long long serving_batch = 0;
  long long serving_context = 0;
  std::int64_t serving_steps_to_first_token = 1;  // prefill: a prompt's chunks (serving.chunk)
  double serving_tokens_per_sequence = 0;  // served per sequence and step: a prompt, or decode's expected output
  // Seed 002's inference ledger for one rank (workloads/serving_ledger.hpp).
  double serving_weight_bytes = 0;
  double serving_cache_bytes = 0;
  double serving_flops = 0;
  // Prefill: the KV cache a rank hands to the decode pool per batch of
  // prompts (ServingLedger::handoff_bytes) and the rank's share of the
  // fabric that carries it (its NIC, or its supernode port; 0: the
  // platform names none, an XML or a single node).
  double serving_handoff_bytes = 0;
  double serving_handoff_Bps = 0;
  std::string serving_handoff_over = {};  // "NIC" or "supernode port"
};

// The project version (CMake project VERSION), e.g. "0.1.0".
const char* epsim_version();

}  // namespace epsim::sim
