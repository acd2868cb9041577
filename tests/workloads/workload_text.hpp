// Small workloads written inline for tests: one TOML text with the knobs
// the sampler tests vary, read through the real loader.
#pragma once

#include <string>

#include <fmt/format.h>

#include "core/toml_reader.hpp"
#include "workloads/workload_loader.hpp"

namespace epsim::workloads::testing {

struct Knobs {
  int ep = 8;
  int experts = 64;
  int top_k = 4;
  int node_limit = 0;
  int ranks_per_node = 8;
  int tokens = 1024;
  int layers = 3;  // first one dense
  int micro_batches = 1;
  int dp = 1;  // replicas of the EP group: parallel.dp = dp x ep
  std::string routing = "kind = \"uniform\"";
  unsigned seed = 1;
};

inline std::string workload_text(const Knobs& k) {
  return fmt::format(R"(schema = 1
[model]
layers = {layers}
dense_layers = 1
hidden = 256
dense_ffn = 512
expert_ffn = 128
experts = {experts}
shared_experts = 1
top_k = {top_k}
node_limit = {node_limit}
vocab = 1000
[model.attention]
kind = "gqa"
heads = 4
kv_heads = 2
head_dim = 64
[parallel]
ep = {ep}
dp = {dp}
micro_batches = {mbs}
micro_batch = 1
sequence_length = {tokens}
ranks_per_node = {rpn}
[precision]
expert_alignment = 16
[routing]
{routing}
seed = {seed}
)",
                     fmt::arg("layers", k.layers), fmt::arg("experts", k.experts), fmt::arg("top_k", k.top_k),
                     fmt::arg("node_limit", k.node_limit), fmt::arg("ep", k.ep), fmt::arg("dp", k.dp * k.ep),
                     fmt::arg("mbs", k.micro_batches), fmt::arg("tokens", k.tokens),
                     fmt::arg("rpn", k.ranks_per_node), fmt::arg("routing", k.routing), fmt::arg("seed", k.seed));
}

inline WorkloadSpec workload(const Knobs& k) {
  toml::table root = parse_toml_text(workload_text(k), "test.toml");
  return read_workload(root, "test.toml", "");
}

}  // namespace epsim::workloads::testing
