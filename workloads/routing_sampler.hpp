// The routing sampler: for every MoE layer, micro-batch and source rank,
// each token draws its k distinct experts (a real per-token draw), and the
// draws are counted into what the simulator needs: tokens per (source rank,
// destination rank) deduplicated per rank, per (source rank, destination
// node) deduplicated per node, and tokens per expert.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "workloads/task_graph.hpp"
#include "workloads/workload_spec.hpp"

namespace epsim::workloads {

// One MoE layer in one micro-batch, over all ep x dp ranks. DP replicas
// draw independently and never exchange tokens: traffic is block-diagonal.
struct LayerRouting {
  int layer = 0;        // model layer index (counting dense layers)
  int micro_batch = 0;
  TrafficMatrix traffic;
  // Tokens that picked each expert slot, before alignment:
  // [rank * experts_per_rank + j] for the rank's j-th slot (its own experts,
  // then its redundant ones: workloads/expert_replicas.hpp).
  std::vector<std::int32_t> expert_tokens;
  int max_nodes_per_token = 0;  // over all tokens of the layer: <= node limit
  // (token, expert) picks the routing's capacity dropped (routing.capacity_factor): not sent, not computed.
  std::int64_t dropped_picks = 0;
};

struct RoutingSample {
  int ranks = 0;
  int ranks_per_node = 0;
  int experts_per_rank = 0;  // expert slots per rank (WorkloadSpec::expert_slots_per_rank)
  int micro_batches = 0;
  std::int64_t tokens_per_rank = 0;  // per micro-batch
  std::vector<LayerRouting> layers;  // index = moe_layer * micro_batches + micro_batch

  const LayerRouting& at(int moe_layer, int micro_batch) const {
    return layers[static_cast<std::size_t>(moe_layer * micro_batches + micro_batch)];
  }
};

// The jobs of drawing a step's routing, one per (MoE layer, micro-batch):
// job moe_layer x micro_batches + micro_batch draws sample().layers[job]
// (every EP replica's tokens), each token from a random stream of its own,
// so the result depends on neither the order nor the thread jobs run on.
// Distinct jobs may run at once on different threads (routing_stream.hpp).
class RoutingJobs {
 public:
  explicit RoutingJobs(const WorkloadSpec& w);  // `w` must outlive this
  ~RoutingJobs();
  RoutingJobs(const RoutingJobs&) = delete;
  RoutingJobs& operator=(const RoutingJobs&) = delete;

  int count() const;
  void run(int job);
  // Every layer sized, counts zero until its job has run.
  RoutingSample& sample();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// Rows an expert GEMM runs for `tokens` tokens: rounded up to `alignment`.
inline std::int64_t aligned_rows(std::int64_t tokens, int alignment) {
  return (tokens + alignment - 1) / alignment * alignment;
}

}  // namespace epsim::workloads
