// Task graph of one training step, from the workload and its sampled routing.
#include "workloads/task_graph_builder.hpp"

#include <map>
#include <numeric>

#include "workloads/layer_costs.hpp"

namespace epsim::workloads {

namespace {

class Builder {
 public:
  Builder(const WorkloadSpec& w, const RoutingSample& r) : w_(w), r_(r) {
    g_.ranks = r.ranks;
    g_.ranks_per_node = r.ranks_per_node;
    g_.traffic.reserve(r.layers.size());
    for (const LayerRouting& l : r.layers) g_.traffic.push_back(l.traffic);
  }

  TaskGraph build() {
    const int layers = w_.model.layers, mbs = w_.parallel.micro_batches;
    std::vector<std::vector<TaskId>> tail(static_cast<std::size_t>(mbs));  // each micro-batch's last tasks
    for (int l = 0; l < layers; ++l) {
      for (int mb = 0; mb < mbs; ++mb) tail[static_cast<std::size_t>(mb)] = forward_layer(l, mb, tail[static_cast<std::size_t>(mb)]);
    }
    const ComputeCost head = output_head_cost(w_);
    for (int mb = 0; mb < mbs; ++mb) {
      auto& t = tail[static_cast<std::size_t>(mb)];
      TaskId fwd = compute(TaskKind::kDenseFfn, Phase::kForward, layers, mb, Dtype::kBf16, head, t);
      t = {compute(TaskKind::kDenseFfn, Phase::kBackward, layers, mb, Dtype::kBf16, twice(head), {fwd})};
    }
    std::vector<TaskId> dense_done;
    for (int l = layers - 1; l >= 0; --l) {
      for (int mb = 0; mb < mbs; ++mb) tail[static_cast<std::size_t>(mb)] = backward_layer(l, mb, tail[static_cast<std::size_t>(mb)]);
    }
    for (const auto& t : tail) dense_done.insert(dense_done.end(), t.begin(), t.end());
    return finish_step(dense_done);
  }

 private:
  // Backward: twice the forward's FLOPs, bytes and kernels, on the same rows.
  static ComputeCost twice(ComputeCost c) {
    c.flops *= 2;
    c.hbm_bytes *= 2;
    c.elementwise_bytes *= 2;
    c.kernels *= 2;
    return c;
  }

  TaskId add(Task t) {
    t.id = static_cast<TaskId>(g_.tasks.size());
    g_.tasks.push_back(std::move(t));
    return g_.tasks.back().id;
  }

  Task base(TaskKind kind, Phase phase, int layer, int mb, std::vector<TaskId> deps) const {
    Task t;
    t.kind = kind;
    t.phase = phase;
    t.layer = layer;
    t.micro_batch = mb;
    t.deps = std::move(deps);
    return t;
  }

  // A compute task with the same amounts on every rank.
  TaskId compute(TaskKind kind, Phase phase, int layer, int mb, Dtype dtype, ComputeCost c, std::vector<TaskId> deps) {
    Task t = base(kind, phase, layer, mb, std::move(deps));
    t.dtype = dtype;
    t.flops.assign(static_cast<std::size_t>(g_.ranks), c.flops);
    t.hbm_bytes.assign(static_cast<std::size_t>(g_.ranks), c.hbm_bytes);
    t.gemm_rows.assign(static_cast<std::size_t>(g_.ranks), c.rows);
    t.elementwise_bytes.assign(static_cast<std::size_t>(g_.ranks), c.elementwise_bytes);
    t.kernels = c.kernels;
    return add(std::move(t));
  }

  TaskId expert_gemm(Phase phase, int layer, int mb, TaskId dep) {
    const LayerRouting& lr = r_.at(layer - w_.model.dense_layers, mb);
    const double factor = phase == Phase::kBackward ? 2.0 : 1.0;
    Task t = base(TaskKind::kExpertGemm, phase, layer, mb, {dep});
    t.dtype = w_.precision.gemm;
    for (int rank = 0; rank < g_.ranks; ++rank) {
      ComputeCost c = expert_gemm_cost(w_, &lr.expert_tokens[static_cast<std::size_t>(rank) * r_.experts_per_rank],
                                       r_.experts_per_rank);
      t.flops.push_back(factor * c.flops);
      t.hbm_bytes.push_back(factor * c.hbm_bytes);
      t.gemm_rows.push_back(c.rows);
      t.kernels = static_cast<int>(factor) * c.kernels;
    }
    return add(std::move(t));
  }

  TaskId all_to_all(TaskKind kind, Phase phase, int layer, int mb, bool transpose, double bytes_per_token,
                    std::vector<TaskId> deps) {
    Task t = base(kind, phase, layer, mb, std::move(deps));
    t.traffic = (layer - w_.model.dense_layers) * w_.parallel.micro_batches + mb;
    t.transpose = transpose;
    t.bytes_per_token = bytes_per_token;
    return add(std::move(t));
  }

  std::vector<TaskId> forward_layer(int l, int mb, const std::vector<TaskId>& in) {
    const TaskId attn = compute(TaskKind::kAttention, Phase::kForward, l, mb, Dtype::kBf16, attention_cost(w_), in);
    if (!w_.model.is_moe(l)) {
      return {compute(TaskKind::kDenseFfn, Phase::kForward, l, mb, w_.precision.gemm, dense_ffn_cost(w_), {attn})};
    }
    const TaskId gate = compute(TaskKind::kGate, Phase::kForward, l, mb, Dtype::kFp32, gate_cost(w_), {attn});
    const TaskId dispatch = all_to_all(TaskKind::kDispatch, Phase::kForward, l, mb, false, dispatch_bytes_per_token(w_), {gate});
    const TaskId experts = expert_gemm(Phase::kForward, l, mb, dispatch);
    std::vector<TaskId> out;
    if (w_.model.shared_experts > 0) {
      out.push_back(compute(TaskKind::kSharedExpert, Phase::kForward, l, mb, w_.precision.gemm, shared_expert_cost(w_), {gate}));
    }
    out.push_back(all_to_all(TaskKind::kCombine, Phase::kForward, l, mb, true, combine_bytes_per_token(w_), {experts}));
    return out;
  }

  // Gradients flow back through the same routing: combine-backward sends
  // along the dispatch pattern and dispatch-backward along the combine
  // pattern, both in BF16.
  std::vector<TaskId> backward_layer(int l, int mb, const std::vector<TaskId>& in) {
    std::vector<TaskId> before_attention;
    if (!w_.model.is_moe(l)) {
      before_attention.push_back(
          compute(TaskKind::kDenseFfn, Phase::kBackward, l, mb, w_.precision.gemm, twice(dense_ffn_cost(w_)), in));
    } else {
      const double grad_bytes = token_bytes(Dtype::kBf16, w_.model.hidden, w_.precision.scale_block);
      const TaskId combine = all_to_all(TaskKind::kCombine, Phase::kBackward, l, mb, false, grad_bytes, in);
      const TaskId experts = expert_gemm(Phase::kBackward, l, mb, combine);
      experts_last_[mb] = experts;
      const TaskId dispatch = all_to_all(TaskKind::kDispatch, Phase::kBackward, l, mb, true, grad_bytes, {experts});
      before_attention.push_back(
          compute(TaskKind::kGate, Phase::kBackward, l, mb, Dtype::kFp32, twice(gate_cost(w_)), {dispatch}));
      if (w_.model.shared_experts > 0) {
        before_attention.push_back(compute(TaskKind::kSharedExpert, Phase::kBackward, l, mb, w_.precision.gemm,
                                           twice(shared_expert_cost(w_)), in));
      }
    }
    return {compute(TaskKind::kAttention, Phase::kBackward, l, mb, Dtype::kBf16, twice(attention_cost(w_)),
                    before_attention)};
  }

  // Dense parameters are replicated on all ep x dp ranks (attention is data
  // parallel over every rank): one all-reduce over all ranks. Routed
  // experts have one replica per DP group: all-reduce across replicas of
  // each EP rank (groups of one rank when dp = 1, which cost nothing).
  TaskGraph finish_step(const std::vector<TaskId>& backward_done) {
    const double grad = dtype_bytes(w_.precision.gradient);
    Task dense = base(TaskKind::kGradAllReduce, Phase::kGradSync, -1, -1, backward_done);
    dense.groups.emplace_back(static_cast<std::size_t>(g_.ranks));
    std::iota(dense.groups[0].begin(), dense.groups[0].end(), 0);
    dense.bytes = dense_params(w_.model) * grad;
    const TaskId dense_id = add(std::move(dense));

    std::vector<TaskId> expert_deps;
    for (const auto& [mb, id] : experts_last_) expert_deps.push_back(id);
    Task experts = base(TaskKind::kGradAllReduce, Phase::kGradSync, -1, -1, expert_deps);
    for (int r = 0; r < w_.parallel.ep; ++r) {
      std::vector<int> group;
      for (int d = 0; d < w_.parallel.dp; ++d) group.push_back(d * w_.parallel.ep + r);
      experts.groups.push_back(std::move(group));
    }
    experts.bytes = expert_params_per_rank(w_) * grad;
    const TaskId experts_id = add(std::move(experts));

    const double params = dense_params(w_.model) + expert_params_per_rank(w_);
    compute(TaskKind::kOptimizer, Phase::kOptimizer, -1, -1, Dtype::kFp32, optimizer_cost(params, w_.precision.gradient),
            {dense_id, experts_id});
    return std::move(g_);
  }

  const WorkloadSpec& w_;
  const RoutingSample& r_;
  TaskGraph g_;
  std::map<int, TaskId> experts_last_;  // per micro-batch: its last expert-GEMM backward
};

}  // namespace

TaskGraph build_task_graph(const WorkloadSpec& w, const RoutingSample& routing) { return Builder(w, routing).build(); }

TaskGraph build_task_graph(const WorkloadSpec& w) { return build_task_graph(w, sample_routing(w)); }

}  // namespace epsim::workloads
