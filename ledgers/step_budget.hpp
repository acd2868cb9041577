// Seed 002 (step_budget): a dense decoder-only Transformer's training step
// (forward, backward, AdamW, ring all-reduce) and inference (prefill, decode
// per token), each phase bounded by max(bytes / bandwidth, FLOPs / peak).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/moe_formulas.hpp"

namespace epsim::ledgers {

// The seed's command-line options. Defaults reproduce its printed table:
// a Llama-3-8B-shaped model (8.03e9 parameters, GQA with 8 KV heads of 128)
// and the calibrated machine of docs/bounds.md (729.3 TFLOPS, 4502 GB/s).
struct StepBudgetOptions {
  std::int64_t seq_len = 4096;   // --seq-len: tokens in the sequence (batch 1)
  std::int64_t layers = 32;      // --layers
  std::int64_t hidden = 4096;    // --hidden: d
  std::int64_t ffn = 14336;      // --ffn: MLP intermediate size (SwiGLU: 3 matrices)
  double params = 8.03e9;        // --params: parameters the optimizer and all-reduce touch
  std::int64_t world = 8;        // --world: data-parallel ranks of the all-reduce
  double peak_tflops = 729.3;    // --peak-tflops: dense BF16 peak, 1e12 FLOP/s
  double bandwidth_gbps = 4502;  // --bandwidth-gbps: HBM bandwidth, 1e9 B/s
  std::int64_t head_dim = 128;   // attention head width: heads = hidden / head_dim
  std::int64_t kv_heads = 8;     // GQA key/value heads: K and V are kv_heads x head_dim wide
};

// One row of a table.
struct Phase {
  std::string name;            // "forward", "backward", "optimizer", "communication", "prefill", "decode"
  double flops = 0.0;
  double bytes = 0.0;
  double memory_time_s = 0.0;   // bytes / bandwidth
  double compute_time_s = 0.0;  // flops / peak
  double bound_s = 0.0;         // max(memory, compute)
  double share = 0.0;           // bound_s / sum of the table's bound_s
};

struct StepBudget {
  StepBudgetOptions options;
  double layer_weight_params = 0.0;  // L x (2d^2 + 2 d kv + 3 d ffn): the GEMM weights
  double kv_width = 0.0;             // kv_heads x head_dim
  double heads = 0.0;                // hidden / head_dim
  std::vector<Phase> training;       // forward, backward, optimizer, communication
  std::vector<Phase> inference;      // prefill, decode (one token at KV length seq_len)
};

// Per-phase constants of the seed's model, stated once.
inline constexpr double kBytesPerElement = 2.0;        // BF16 weights, activations, gradients
inline constexpr double kSoftmaxFlopsPerScore = 5.0;   // max, subtract, exp, sum, divide
inline constexpr double kActivationTensors = 3.0;      // residual-stream and MLP-sized tensors touched per layer
// AdamW (core/moe_formulas.hpp): kAdamWFlopsPerParam = 15; bytes: read the
// BF16 gradient (2), read and write FP32 param/m/v (24).
inline constexpr double kAdamWBytesPerParam = kBytesPerElement + kAdamWStateBytesPerParam;

// The ledger. Throws InputError naming the option for non-positive or
// non-finite values and counts that would overflow 64 bits.
StepBudget step_budget(const StepBudgetOptions& options);

}  // namespace epsim::ledgers
