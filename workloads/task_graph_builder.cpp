// Task graph of one training step, from the workload and its sampled routing.
#include "workloads/task_graph_builder.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <utility>

#include "core/error.hpp"
#include "workloads/grad_buckets.hpp"
#include "workloads/layer_costs.hpp"
#include "workloads/parallel_layout.hpp"
#include "workloads/pipeline_schedule.hpp"
#include "workloads/replica_fold.hpp"

namespace epsim::workloads {

namespace {

// An expert GEMM's per-rank amounts from its layer's expert loads (none
// yet: zero). The routing sample covers one stage's ranks: stage s's rank
// s x stage_ranks + i draws as the sample's rank i. The task's operators
// are those of its busiest rank; the others run their share of them
// (Task::share) at their own rows per expert.
void set_expert_loads(Task& t, const WorkloadSpec& w, const LayerRouting& lr, int ranks, int stage_ranks) {
  const bool backward = t.phase == Phase::kBackward;
  const int experts_per_rank = w.expert_slots_per_rank();
  const int first = t.stage < 0 ? 0 : t.stage * stage_ranks;
  t.flops.assign(static_cast<std::size_t>(ranks), 0.0);
  t.hbm_bytes.assign(static_cast<std::size_t>(ranks), 0.0);
  t.ops.clear();
  if (lr.expert_tokens.empty()) return;
  double busiest = -1;
  for (int local = 0; local < stage_ranks; ++local) {
    const auto rank = static_cast<std::size_t>(first + local);
    const ComputeCost c =
        expert_gemm_cost(w, &lr.expert_tokens[static_cast<std::size_t>(local) * experts_per_rank], experts_per_rank);
    const Operators& ops = backward ? c.backward : c.ops;
    t.flops[rank] = total_flops(ops);
    t.hbm_bytes[rank] = total_bytes(ops);
    if (t.flops[rank] > busiest) {
      busiest = t.flops[rank];
      t.ops = ops;
    }
  }
}

class Builder {
 public:
  Builder(const WorkloadSpec& w, const RoutingSample& r) : w_(w), r_(r), full_(w), fold_(replica_fold(w.parallel)) {
    // Dense kernels are priced on the whole micro-batch and sharded over
    // TP; the routing sample's tokens per rank are 1/tp of it (sequence
    // parallelism: each TP rank routes its share of the tokens).
    full_.parallel.tokens_per_micro_batch = w.parallel.micro_batch * w.parallel.sequence_length;
    if (w.parallel.tp > 1) tp_groups_ = w.parallel.layout().groups(GroupKind::kTensor);
    g_.ranks = w.parallel.world();
    g_.ranks_per_node = r.ranks_per_node;
    g_.stages = w.parallel.pp;
    g_.stage_ranks = r.ranks;
    if (fold_.replicas > 1) {
      g_.folded_replicas = fold_.replicas;
      for (int id = 0; id < fold_.full.world(); ++id) g_.full_rank_of.push_back(fold_.full_rank(id));
    }
    g_.traffic.reserve(r.layers.size() + 1);
    for (const LayerRouting& l : r.layers) {
      g_.traffic.push_back(l.traffic);
      g_.routed_picks += l.traffic.selections_per_rank * l.traffic.ranks;
      g_.dropped_picks += l.dropped_picks;
    }
  }

  TaskGraph build() {
    if (w_.serving) return build_serving();
    return w_.parallel.pp == 1 ? build_one_stage() : build_pipeline();
  }

 private:
  // A serving step (docs/serving.md): the forward of every layer for each
  // micro-batch, then the head; no backward, gradient sync or optimizer.
  // A decode step that drafts (serving.mtp_tokens) then runs an MTP
  // module and the head again per draft, as DeepSeek's speculative
  // decoding does: its tokens are verified by the next step. With two or
  // more micro-batches a MoE layer's pieces are listed micro-batch by
  // micro-batch, attention and router of each first, then experts and
  // combine of each, so that each rank's compute stream runs one
  // micro-batch's attention or experts while its communication stream
  // carries another's dispatch or combine: DeepSeek's two-micro-batch
  // overlap (its inference system's prefill and decode).
  TaskGraph build_serving() {
    const int mbs = w_.parallel.micro_batches;
    std::vector<std::vector<TaskId>> tail(static_cast<std::size_t>(mbs));
    for (int l = 0; l < w_.model.layers; ++l) {
      if (!w_.model.is_moe(l)) {
        for (int mb = 0; mb < mbs; ++mb) tail[mb] = forward_layer(l, mb, tail[mb]);
        continue;
      }
      std::vector<MoeForward> f;
      for (int mb = 0; mb < mbs; ++mb) f.emplace_back(l, mb, -1, Phase::kForward);
      for (int mb = 0; mb < mbs; ++mb) {
        forward_router(f[mb], tail[mb]);
        forward_dispatch(f[mb]);
      }
      for (int mb = 0; mb < mbs; ++mb) {
        forward_experts(f[mb]);
        forward_combine(f[mb]);
        tail[mb] = f[mb].out;
      }
    }
    const auto head = [&](int mb) {
      tail[mb] = {compute(TaskKind::kDenseFfn, Phase::kForward, w_.model.layers, mb, Dtype::kBf16,
                          sharded(serving_head_cost(full_)), tail[mb])};
    };
    for (int mb = 0; mb < mbs; ++mb) head(mb);
    for (int draft = 0; draft < w_.serving->mtp_tokens; ++draft) {
      for (int mb = 0; mb < mbs; ++mb) {
        tail[mb] = forward_layer(w_.model.layers, mb, tail[mb]);
        head(mb);
      }
    }
    return std::move(g_);
  }

  // One stage: gradient accumulation as Megatron runs it without a
  // pipeline (forward_backward_no_pipelining): micro-batch i's forward,
  // head and backward, then micro-batch i + 1's, each waiting for the one
  // before, so one micro-batch's activations are held (docs/memory.md).
  // The order is 1F1B's at pp = 1 (pipeline_order); the gradient sync
  // waits for the last micro-batch's backward of each layer.
  TaskGraph build_one_stage() {
    const int mbs = w_.parallel.micro_batches;
    const std::vector<int> sequence = layer_sequence(0, w_.model.pipeline_layers());
    std::vector<TaskId> tail;  // the previous micro-batch's last tasks
    for (int mb = 0; mb < mbs; ++mb) {
      for (int l : sequence) tail = forward_layer(l, mb, tail);
      const TaskId fwd = head(Phase::kForward, mb, tail, -1);
      tail = {head(Phase::kBackward, mb, {fwd}, -1)};
      for (auto l = sequence.rbegin(); l != sequence.rend(); ++l) tail = backward_layer(*l, mb, tail);
    }
    return finish_step(tail);
  }

  // Pipeline stages: each stage runs its passes in pipeline_order(), each
  // pass waiting for the stage's previous one; passes are listed as the
  // stages could run them (a pass once its input from the neighbouring
  // stage is listed), so every rank's in-order streams see them in order.
  // A pair (DualPipe's F&B, or Megatron's 1F1B all-to-all overlap: a
  // forward and a backward of two micro-batches) waits for both inputs and
  // lists the two passes layer by layer, neither waiting for the other, so
  // one's all-to-all overlaps the other's compute; both outputs are sent
  // when the pair is done.
  TaskGraph build_pipeline() {
    const ParallelSpec& p = w_.parallel;
    const int chunks = pipeline_chunks(p.schedule, p.pp, p.vpp);
    split_ = chunk_split();
    p2p_traffic_ = add_p2p_traffic();
    const auto order = pipeline_order(p.schedule, p.pp, p.vpp, p.micro_batches, p.moe_a2a_overlap);
    const auto cell = [&](int chunk, int mb) { return static_cast<std::size_t>(chunk) * p.micro_batches + mb; };
    std::vector<TaskId> sent_forward(static_cast<std::size_t>(chunks) * p.micro_batches, -1);
    std::vector<TaskId> sent_backward(sent_forward.size(), -1);
    // A pass's input from the neighbouring stage, if it needs one: the
    // previous slice's activations or the next slice's gradients; false
    // while that is not listed yet.
    const auto input = [&](const PipelinePass& pass, std::vector<TaskId>& in) {
      const int c = pass.chunk, mb = pass.micro_batch;
      if (pass.forward && !is_first_chunk(c)) {
        if (sent_forward[cell(c - 1, mb)] < 0) return false;
        in.push_back(sent_forward[cell(c - 1, mb)]);
      }
      if (!pass.forward && !is_last_chunk(c)) {
        if (sent_backward[cell(c + 1, mb)] < 0) return false;
        in.push_back(sent_backward[cell(c + 1, mb)]);
      }
      return true;
    };
    const auto send = [&](const PipelinePass& pass, const std::vector<TaskId>& out) {
      const int c = pass.chunk, mb = pass.micro_batch;
      if (pass.forward && !is_last_chunk(c)) sent_forward[cell(c, mb)] = p2p(Phase::kForward, c, c + 1, mb, out);
      if (!pass.forward && !is_first_chunk(c)) sent_backward[cell(c, mb)] = p2p(Phase::kBackward, c, c - 1, mb, out);
    };
    std::vector<std::vector<TaskId>> stage_tail(static_cast<std::size_t>(p.pp));
    std::vector<std::size_t> next(static_cast<std::size_t>(p.pp), 0);
    std::size_t left = 0;
    for (const auto& o : order) left += o.size();
    while (left > 0) {
      bool listed = false;
      for (int s = 0; s < p.pp; ++s) {
        const auto& passes = order[static_cast<std::size_t>(s)];
        auto& tail = stage_tail[static_cast<std::size_t>(s)];
        std::size_t& i = next[static_cast<std::size_t>(s)];
        while (i < passes.size()) {
          const PipelinePass& pass = passes[i];
          std::vector<TaskId> in = tail;
          if (!input(pass, in)) break;
          if (!pass.paired) {
            tail = run_pass(pass, s, std::move(in));
            send(pass, tail);
            i += 1, left -= 1, listed = true;
            continue;
          }
          const PipelinePass& other = passes[i + 1];
          std::vector<TaskId> other_in = tail;
          if (!input(other, other_in)) break;
          // Both outputs leave when the pair ends (DualPipe sends after the overlapped pair).
          auto [out, other_out] = run_pair(pass, other, s, std::move(in), std::move(other_in));
          tail = std::move(out);
          tail.insert(tail.end(), other_out.begin(), other_out.end());
          send(pass, tail);
          send(other, tail);
          i += 2, left -= 2, listed = true;
        }
      }
      if (!listed) throw InternalError("pipeline schedule deadlocks: no stage can list its next pass");
    }
    for (int s = 0; s < p.pp; ++s) finish_stage(s, stage_tail[static_cast<std::size_t>(s)]);
    return std::move(g_);
  }

  // Layers of each chunk: the layers split over pp x vpp chunks; under
  // DualPipe over pp slices, the same slices in both directions.
  StageSplit chunk_split() const {
    const ParallelSpec& p = w_.parallel;
    const bool dual = p.schedule == PipelineSchedule::kDualPipe;
    StageSplit split = split_layers(w_.model.pipeline_layers(), p.pp, dual ? 1 : pipeline_chunks(p.schedule, p.pp, p.vpp) / p.pp,
                                    p.first_stage_layers, p.last_stage_layers);
    if (!dual) return split;
    for (int k = 0; k < p.pp; ++k) {
      split.chunk_layers.push_back(split.chunk_layers[static_cast<std::size_t>(k)]);
      split.chunk_first.push_back(split.chunk_first[static_cast<std::size_t>(k)]);
    }
    return split;
  }

  int stage_of(int chunk) const { return chunk_stage(w_.parallel.schedule, w_.parallel.pp, chunk); }

  std::vector<TaskId> run_pass(const PipelinePass& pass, int s, std::vector<TaskId> in) {
    return pass.forward ? forward_chunk(pass.chunk, pass.micro_batch, s, std::move(in))
                        : backward_chunk(pass.chunk, pass.micro_batch, s, std::move(in));
  }

  // A forward and a backward chunk listed layer by layer (pair_layer()),
  // each chained only to itself: the replay runs one's compute while the
  // other's dispatch or combine is in flight.
  std::pair<std::vector<TaskId>, std::vector<TaskId>> run_pair(const PipelinePass& a, const PipelinePass& b, int s,
                                                               std::vector<TaskId> a_in, std::vector<TaskId> b_in) {
    const PipelinePass& f = a.forward ? a : b;
    const PipelinePass& bw = a.forward ? b : a;
    std::vector<TaskId> fwd = a.forward ? std::move(a_in) : std::move(b_in);
    std::vector<TaskId> bwd = a.forward ? std::move(b_in) : std::move(a_in);
    if (is_last_chunk(bw.chunk)) bwd = {head(Phase::kBackward, bw.micro_batch, bwd, s)};
    const std::vector<int> f_layers = chunk_sequence(f.chunk);
    std::vector<int> b_layers = chunk_sequence(bw.chunk);
    std::reverse(b_layers.begin(), b_layers.end());
    for (std::size_t i = 0; i < std::max(f_layers.size(), b_layers.size()); ++i)
      pair_layer(i < f_layers.size() ? f_layers[i] : -1, i < b_layers.size() ? b_layers[i] : -1, f.micro_batch,
                 bw.micro_batch, fwd, bwd, s);
    if (is_last_chunk(f.chunk)) fwd = {head(Phase::kForward, f.micro_batch, fwd, s)};
    if (a.forward) return {std::move(fwd), std::move(bwd)};
    return {std::move(bwd), std::move(fwd)};
  }

  // The output head and loss of the last chunk, after the MTP modules
  // (model.mtp_modules, each its own head); the backward twice the forward,
  // in reverse. Its backward completes the head's gradients (for the gradient buckets).
  TaskId head(Phase phase, int mb, std::vector<TaskId> in, int s) {
    const int heads = 1 + w_.model.mtp_modules;
    const ComputeCost one = sharded(output_head_cost(full_));
    ComputeCost c = one;
    for (int m = 1; m < heads; ++m) c += one;
    const bool forward = phase == Phase::kForward;
    const TaskId t = compute(TaskKind::kDenseFfn, phase, w_.model.layers, mb, Dtype::kBf16, forward ? c : twice(c),
                             std::move(in), s);
    if (!forward) grad_ready_[w_.model.layers].push_back(t);
    return t;
  }

  // The layers chunk c runs, in forward order: its slice of the model's
  // pipeline positions (ModelSpec::pipeline_layers), where DeepSeek-V3's
  // multi-token prediction modules (model.mtp_modules) come last, as
  // Megatron's pipeline layout places them. Each module is a layer labelled
  // model.layers (beside the head): a projection of [hidden; next token's
  // embedding] (2h -> h) and one MoE block run as the main layers' are,
  // router, dispatch, experts and combine included, so that DualPipe and
  // the 1F1B all-to-all overlap pair it as they pair any layer.
  std::vector<int> chunk_sequence(int c) const {
    const auto i = static_cast<std::size_t>(c);
    return layer_sequence(split_.chunk_first[i], split_.chunk_layers[i]);
  }
  std::vector<int> layer_sequence(int first_position, int positions) const {
    std::vector<int> sequence;
    for (int p = first_position; p < first_position + positions; ++p) sequence.push_back(std::min(p, w_.model.layers));
    return sequence;
  }
  bool is_mtp(int l) const { return l == w_.model.layers; }
  bool is_moe_block(int l) const { return is_mtp(l) || w_.model.is_moe(l); }
  TaskId mtp_projection(Phase phase, int mb, std::vector<TaskId> in, int s) {
    const ComputeCost c = sharded(mtp_projection_cost(full_));
    return compute(TaskKind::kDenseFfn, phase, w_.model.layers, mb, w_.precision.gemm,
                   phase == Phase::kBackward ? twice(c) : c, std::move(in), s);
  }

  std::vector<TaskId> forward_chunk(int c, int mb, int s, std::vector<TaskId> in) {
    for (int l : chunk_sequence(c)) in = forward_layer(l, mb, in, s);
    if (is_last_chunk(c)) in = {head(Phase::kForward, mb, in, s)};
    return in;
  }

  std::vector<TaskId> backward_chunk(int c, int mb, int s, std::vector<TaskId> in) {
    if (is_last_chunk(c)) in = {head(Phase::kBackward, mb, in, s)};
    const std::vector<int> sequence = chunk_sequence(c);
    for (auto l = sequence.rbegin(); l != sequence.rend(); ++l) in = backward_layer(*l, mb, in, s);
    return in;
  }

  // The first and last slices of the model along a chunk's direction (the
  // embedding's and the head's).
  bool is_first_chunk(int chunk) const { return chunk_position(w_.parallel.schedule, w_.parallel.pp, chunk) == 0; }
  bool is_last_chunk(int chunk) const {
    const ParallelSpec& p = w_.parallel;
    const int slices = p.schedule == PipelineSchedule::kDualPipe ? p.pp : static_cast<int>(split_.chunk_layers.size());
    return chunk_position(p.schedule, p.pp, chunk) == slices - 1;
  }

  // Whether stage s holds a chunk that `is` (the first: the embedding; the
  // last: the head; DualPipe's end stages hold both).
  bool holds(int s, bool (Builder::*is)(int) const) const {
    for (int c = 0; c < static_cast<int>(split_.chunk_layers.size()); ++c)
      if (stage_of(c) == s && (this->*is)(c)) return true;
    return false;
  }

  std::vector<int> stage_rank_list(int s) const {
    std::vector<int> out(static_cast<std::size_t>(g_.stage_ranks));
    std::iota(out.begin(), out.end(), s * g_.stage_ranks);
    return out;
  }

  // The pattern of every point-to-point transfer: rank i of the sending
  // stage to rank i of the receiving one (the same pipeline group), each
  // carrying the rank's micro-batch of activations or gradients.
  int add_p2p_traffic() {
    TrafficMatrix m;
    const int n = g_.stage_ranks;
    m.ranks = 2 * n;
    m.ranks_per_node = g_.ranks_per_node;
    m.tokens.assign(static_cast<std::size_t>(m.ranks) * m.ranks, 0);
    m.node_tokens.assign(static_cast<std::size_t>(m.ranks) * m.nodes(), 0);
    const auto tokens = static_cast<std::int32_t>(w_.parallel.tokens_per_micro_batch);
    for (int i = 0; i < n; ++i) {
      m.tokens[static_cast<std::size_t>(i) * m.ranks + n + i] = tokens;
      m.node_tokens[static_cast<std::size_t>(i) * m.nodes() + (n + i) / m.ranks_per_node] = tokens;
    }
    g_.traffic.push_back(std::move(m));
    return static_cast<int>(g_.traffic.size()) - 1;
  }

  // The dense parameters' DP groups of stage s (-1: of the whole graph):
  // ranks holding the same TP shard, over the full layout when the graph
  // is folded (its other EP groups' ranks as phantom ids).
  std::vector<std::vector<int>> data_groups(int s) const { return stage_groups(GroupKind::kData, s); }

  // The groups of `kind` (DP or EDP) of stage s (-1: every stage) in the
  // full layout, as graph ids (ReplicaFold::id); at tp 1 without folding
  // one DP group is the stage itself, and with edp 1 the EDP groups are of
  // one rank (they cost nothing, and are kept so graphs have the same
  // shape for every dp).
  std::vector<std::vector<int>> stage_groups(GroupKind kind, int s) const {
    std::vector<std::vector<int>> out;
    const int full_stage = fold_.full.stage_ranks();
    for (std::vector<int>& g : fold_.full.groups(kind)) {
      if (s >= 0 && g.front() / full_stage != s) continue;
      for (int& r : g) r = fold_.id(r);
      out.push_back(std::move(g));
    }
    return out;
  }

  // Chunk `from`'s output (forward: activations; backward: their gradients,
  // both BF16 hidden-wide per token) to chunk `to`'s stage.
  TaskId p2p(Phase phase, int from, int to, int mb, std::vector<TaskId> deps) {
    const int layer = phase == Phase::kForward ? split_.chunk_first[static_cast<std::size_t>(to)]
                                               : split_.chunk_first[static_cast<std::size_t>(from)];
    Task t = base(TaskKind::kPipelineP2p, phase, layer, mb, std::move(deps));
    t.traffic = p2p_traffic_;
    t.bytes_per_token = token_bytes(Dtype::kBf16, w_.model.hidden, w_.precision.scale_block);
    std::vector<int> ranks = stage_rank_list(stage_of(from));
    for (int r : stage_rank_list(stage_of(to))) ranks.push_back(r);
    t.groups.push_back(std::move(ranks));
    return add(std::move(t));
  }

  // Stage s's gradient sync and optimizer, for the parameters it holds:
  // its layers, the embedding on the first stage, the head on the last.
  void finish_stage(int s, const std::vector<TaskId>& done) {
    std::vector<int> layers;
    for (std::size_t c = 0; c < split_.chunk_layers.size(); ++c) {
      if (stage_of(static_cast<int>(c)) != s) continue;
      for (int l = split_.chunk_first[c]; l < split_.chunk_first[c] + split_.chunk_layers[c]; ++l)
        if (l < w_.model.layers) layers.push_back(l);  // an MTP module's parameters are not synced (docs/workload.md)
    }
    std::sort(layers.begin(), layers.end());  // DualPipe's second slice may come first
    std::vector<TaskId> expert_done;
    const auto last = stage_experts_last_.find(s);
    if (last != stage_experts_last_.end()) expert_done.push_back(last->second);
    sync_and_update(s, grad_items(layers, holds(s, &Builder::is_first_chunk), holds(s, &Builder::is_last_chunk)), done,
                    expert_done);
  }

  // A module's backward pass: its backward operators, on the same rows.
  static ComputeCost twice(const ComputeCost& c) { return ComputeCost(c.backward, {}); }

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

  // A compute task with the same amounts on every rank (stage -1) or on
  // stage s's ranks only.
  TaskId compute(TaskKind kind, Phase phase, int layer, int mb, Dtype dtype, ComputeCost c, std::vector<TaskId> deps,
                 int stage = -1) {
    Task t = base(kind, phase, layer, mb, std::move(deps));
    t.dtype = dtype;
    t.stage = stage;
    const auto n = static_cast<std::size_t>(g_.ranks);
    const bool all = stage < 0;
    t.flops.assign(n, all ? c.flops : 0.0);
    t.hbm_bytes.assign(n, all ? c.hbm_bytes : 0.0);
    t.ops = std::move(c.ops);
    for (int r = all ? 0 : stage * g_.stage_ranks; !all && r < (stage + 1) * g_.stage_ranks; ++r) {
      const auto i = static_cast<std::size_t>(r);
      t.flops[i] = c.flops;
      t.hbm_bytes[i] = c.hbm_bytes;
    }
    return add(std::move(t));
  }

  // A MoE layer's index among the sampled ones; an MTP module's block
  // (layer model.layers) takes the last layer's routing: the same tokens,
  // routed by a router of the same shape (its own is not sampled).
  int moe_index(int layer) const { return std::min(layer, w_.model.layers - 1) - w_.model.dense_layers; }

  TaskId expert_gemm(Phase phase, int layer, int mb, TaskId dep, int stage) {
    Task t = base(TaskKind::kExpertGemm, phase, layer, mb, {dep});
    t.dtype = w_.precision.gemm;
    t.stage = stage;
    t.routing = moe_index(layer) * w_.parallel.micro_batches + mb;
    set_expert_loads(t, w_, r_.at(moe_index(layer), mb), g_.ranks, g_.stage_ranks);
    return add(std::move(t));
  }

  TaskId all_to_all(TaskKind kind, Phase phase, int layer, int mb, bool transpose, double bytes_per_token,
                    std::vector<TaskId> deps, int stage) {
    Task t = base(kind, phase, layer, mb, std::move(deps));
    t.traffic = moe_index(layer) * w_.parallel.micro_batches + mb;
    t.routing = t.traffic;
    t.transpose = transpose;
    t.bytes_per_token = bytes_per_token;
    if (stage >= 0) t.groups.push_back(stage_rank_list(stage));
    return add(std::move(t));
  }

  // A MoE layer's forward in the four pieces an overlapped pair interleaves
  // (attention and router, dispatch, experts, combine), and its backward in
  // its four (combine, experts, dispatch, router and attention).
  struct MoeForward {
    MoeForward(int layer, int micro_batch, int stage, Phase pass) : l(layer), mb(micro_batch), s(stage), phase(pass) {}
    int l, mb, s;
    Phase phase;
    TaskId gate = -1, dispatch = -1, experts = -1;
    std::vector<TaskId> out;  // the shared expert's, then combine's
  };
  struct MoeBackward {
    MoeBackward(int layer, int micro_batch, int stage, std::vector<TaskId> input)
        : l(layer), mb(micro_batch), s(stage), in(std::move(input)) {}
    int l, mb, s;
    std::vector<TaskId> in;
    TaskId combine = -1, experts = -1, dispatch = -1;
  };

  TaskId forward_attention(int l, int mb, const std::vector<TaskId>& in, int s, Phase phase) {
    return tp_all_reduce(
        phase, l, mb, compute(TaskKind::kAttention, phase, l, mb, Dtype::kBf16, sharded(attention_cost(full_, l)), in, s),
        s);
  }
  // An MTP module's projection first, then attention and the router.
  void forward_router(MoeForward& f, const std::vector<TaskId>& in) {
    const TaskId attn = forward_attention(
        f.l, f.mb, is_mtp(f.l) ? std::vector<TaskId>{mtp_projection(f.phase, f.mb, in, f.s)} : in, f.s, f.phase);
    f.gate = compute(TaskKind::kGate, f.phase, f.l, f.mb, Dtype::kFp32, gate_cost(w_), {attn}, f.s);
  }
  void forward_dispatch(MoeForward& f) {
    f.dispatch = all_to_all(TaskKind::kDispatch, f.phase, f.l, f.mb, false, dispatch_bytes_per_token(w_), {f.gate}, f.s);
  }
  void forward_experts(MoeForward& f) {
    f.experts = expert_gemm(f.phase, f.l, f.mb, f.dispatch, f.s);
    if (w_.model.shared_experts > 0) {
      f.out.push_back(tp_all_reduce(f.phase, f.l, f.mb,
                                    compute(TaskKind::kSharedExpert, f.phase, f.l, f.mb, w_.precision.gemm,
                                            sharded(shared_expert_cost(full_)), {f.gate}, f.s),
                                    f.s));
    }
  }
  // Recomputation stops at the expert GEMM: combine's output is the next
  // layer's input, which full recomputation kept.
  void forward_combine(MoeForward& f) {
    f.out.push_back(f.phase == Phase::kRecompute ? f.experts
                                                 : all_to_all(TaskKind::kCombine, f.phase, f.l, f.mb, true,
                                                              combine_bytes_per_token(w_), {f.experts}, f.s));
  }

  // A layer's forward; with phase kRecompute the same kernels and
  // collectives again before its backward, up to the expert GEMM.
  std::vector<TaskId> forward_layer(int l, int mb, const std::vector<TaskId>& in, int s = -1,
                                    Phase phase = Phase::kForward) {
    if (!is_moe_block(l)) {
      const TaskId attn = forward_attention(l, mb, in, s, phase);
      return {tp_all_reduce(
          phase, l, mb,
          compute(TaskKind::kDenseFfn, phase, l, mb, w_.precision.gemm, sharded(dense_ffn_cost(full_)), {attn}, s), s)};
    }
    MoeForward f{l, mb, s, phase};
    forward_router(f, in);
    forward_dispatch(f);
    forward_experts(f);
    forward_combine(f);
    return f.out;
  }

  // A TP-sharded kernel: 1/tp of the whole micro-batch's kernel (heads,
  // FFN columns or vocabulary split over the TP group); identity at tp 1.
  // The GEMMs keep their rows (M: the micro-batch's tokens) and kernels.
  ComputeCost sharded(const ComputeCost& c) const {
    if (w_.parallel.tp == 1) return c;
    return ComputeCost(shard(c.ops), shard(c.backward));
  }
  Operators shard(Operators ops) const {
    const double tp = w_.parallel.tp;
    for (Operator& o : ops) {
      o.flops /= tp;
      o.bytes /= tp;
      if (o.op_class == OpClass::kGemm || o.op_class == OpClass::kGroupedGemm) o.n /= tp;  // 1/tp as wide
    }
    return ops;
  }

  // After a TP-sharded kernel, its TP group sums the partial outputs: an
  // all-reduce of the micro-batch's BF16 activations (with sequence
  // parallelism, the all-gather before the kernel and the reduce-scatter
  // after it move the same ring bytes). At tp 1: nothing, `after` itself.
  TaskId tp_all_reduce(Phase phase, int layer, int mb, TaskId after, int stage) {
    const ParallelSpec& p = w_.parallel;
    if (p.tp == 1) return after;
    Task t = base(TaskKind::kTpAllReduce, phase, layer, mb, {after});
    for (const auto& g : tp_groups_)
      if (stage < 0 || g.front() / g_.stage_ranks == stage) t.groups.push_back(g);
    t.bytes = static_cast<double>(p.micro_batch * p.sequence_length) *
              token_bytes(Dtype::kBf16, w_.model.hidden, w_.precision.scale_block);
    return add(std::move(t));
  }

  // Gradients flow back through the same routing: combine-backward sends
  // along the dispatch pattern and dispatch-backward along the combine
  // pattern, both in BF16.
  double gradient_bytes_per_token() const {
    return token_bytes(Dtype::kBf16, w_.model.hidden, w_.precision.scale_block);
  }
  void backward_combine(MoeBackward& b) {
    b.combine = all_to_all(TaskKind::kCombine, Phase::kBackward, b.l, b.mb, false, gradient_bytes_per_token(), b.in, b.s);
  }
  void backward_experts(MoeBackward& b) {
    b.experts = expert_gemm(Phase::kBackward, b.l, b.mb, b.combine, b.s);
    stage_experts_last_[b.s] = b.experts;
  }
  void backward_dispatch(MoeBackward& b) {
    b.dispatch =
        all_to_all(TaskKind::kDispatch, Phase::kBackward, b.l, b.mb, true, gradient_bytes_per_token(), {b.experts}, b.s);
  }
  // The router's and shared expert's backward, then attention's (and an MTP module's projection's).
  std::vector<TaskId> backward_router(const MoeBackward& b) {
    std::vector<TaskId> before_attention = {
        compute(TaskKind::kGate, Phase::kBackward, b.l, b.mb, Dtype::kFp32, twice(gate_cost(w_)), {b.dispatch}, b.s)};
    if (w_.model.shared_experts > 0) {
      before_attention.push_back(tp_all_reduce(Phase::kBackward, b.l, b.mb,
                                               compute(TaskKind::kSharedExpert, Phase::kBackward, b.l, b.mb,
                                                       w_.precision.gemm, twice(sharded(shared_expert_cost(full_))),
                                                       b.in, b.s),
                                               b.s));
    }
    std::vector<TaskId> out = backward_attention(b.l, b.mb, before_attention, b.s);
    if (is_mtp(b.l)) out = {mtp_projection(Phase::kBackward, b.mb, out, b.s)};  // then an MTP module's projection
    return out;
  }
  std::vector<TaskId> backward_attention(int l, int mb, const std::vector<TaskId>& before_attention, int s) {
    ComputeCost attention = twice(sharded(attention_cost(full_, l)));
    if (w_.memory.recompute == Recompute::kSelective) attention += sharded(selective_recompute_cost(full_, l));
    if (w_.memory.recompute == Recompute::kModules) attention += sharded(module_recompute_cost(full_, l));
    const TaskId done = tp_all_reduce(
        Phase::kBackward, l, mb,
        compute(TaskKind::kAttention, Phase::kBackward, l, mb, Dtype::kBf16, attention, before_attention, s), s);
    grad_ready_[l].push_back(done);
    return {done};
  }
  // The backward's input: full recomputation first reruns the layer's forward.
  std::vector<TaskId> backward_input(int l, int mb, const std::vector<TaskId>& gradient_in, int s) {
    return w_.memory.recompute == Recompute::kFull ? forward_layer(l, mb, gradient_in, s, Phase::kRecompute)
                                                   : gradient_in;
  }

  std::vector<TaskId> backward_layer(int l, int mb, const std::vector<TaskId>& gradient_in, int s = -1) {
    const std::vector<TaskId> in = backward_input(l, mb, gradient_in, s);
    if (!is_moe_block(l)) {
      return backward_attention(
          l, mb,
          {tp_all_reduce(Phase::kBackward, l, mb,
                         compute(TaskKind::kDenseFfn, Phase::kBackward, l, mb, w_.precision.gemm,
                                 twice(sharded(dense_ffn_cost(full_))), in, s),
                         s)},
          s);
    }
    MoeBackward b{l, mb, s, in};
    backward_combine(b);
    backward_experts(b);
    backward_dispatch(b);
    return backward_router(b);
  }

  // One layer of an overlapped pair: a backward layer and a forward layer of
  // two micro-batches, their pieces listed in the order DeepSeek's DualPipe
  // (its overlap figure) and Megatron-Core's schedule_layer_1f1b issue them,
  // so that each communication stream takes B combine, F dispatch, B
  // dispatch, F combine and the compute stream prefers F attention, B
  // experts, F experts, B attention: each all-to-all runs under the other
  // micro-batch's compute. A dense layer on either side is listed whole.
  void pair_layer(int fl, int bl, int mb_f, int mb_b, std::vector<TaskId>& fwd, std::vector<TaskId>& bwd, int s) {
    if (fl < 0 || bl < 0 || !is_moe_block(fl) || !is_moe_block(bl)) {
      if (bl >= 0) bwd = backward_layer(bl, mb_b, bwd, s);
      if (fl >= 0) fwd = forward_layer(fl, mb_f, fwd, s);
      return;
    }
    MoeBackward b{bl, mb_b, s, backward_input(bl, mb_b, bwd, s)};
    MoeForward f{fl, mb_f, s, Phase::kForward};
    backward_combine(b);
    forward_router(f, fwd);
    forward_dispatch(f);
    backward_experts(b);
    backward_dispatch(b);
    forward_experts(f);
    forward_combine(f);
    bwd = backward_router(b);
    fwd = f.out;
  }

  // The one-stage step's gradient sync and optimizer, for every layer, the
  // embedding and the head.
  TaskGraph finish_step(const std::vector<TaskId>& backward_done) {
    std::vector<int> layers(static_cast<std::size_t>(w_.model.layers));
    std::iota(layers.begin(), layers.end(), 0);
    std::vector<TaskId> expert_done;  // the last micro-batch's last expert-GEMM backward (they are chained)
    const auto last = stage_experts_last_.find(-1);
    if (last != stage_experts_last_.end()) expert_done.push_back(last->second);
    sync_and_update(-1, grad_items(layers, true, true), backward_done, expert_done);
    return std::move(g_);
  }

  // Parameters whose gradients one backward step completes, per rank: the
  // head's, a layer's (dense over TP, its routed experts) or the embedding's.
  struct GradItem {
    double dense = 0;
    double expert = 0;
    std::vector<TaskId> ready;  // per micro-batch, the backward task after which they are complete
  };

  // The gradients of `layers` (ascending; plus embedding and head when
  // held) in the order the backward pass completes them: head, the layers
  // from the top, embedding (complete with the lowest layer's backward).
  std::vector<GradItem> grad_items(const std::vector<int>& layers, bool embedding, bool head) const {
    const double tp = w_.parallel.tp;
    const auto ready = [&](int layer) {
      const auto it = grad_ready_.find(layer);
      return it == grad_ready_.end() ? std::vector<TaskId>{} : it->second;
    };
    std::vector<GradItem> out;
    if (head) out.push_back({embedding_params(w_.model) / tp, 0, ready(w_.model.layers)});
    for (auto l = layers.rbegin(); l != layers.rend(); ++l)
      out.push_back({dense_layer_params(w_.model, *l) / tp, expert_params_per_rank(w_, w_.model.is_moe(*l) ? 1 : 0),
                     ready(*l)});
    if (embedding) out.push_back({embedding_params(w_.model) / tp, 0, layers.empty() ? std::vector<TaskId>{} : ready(layers.front())});
    return out;
  }

  // The EDP groups of stage s (-1: the one-stage graph): each EP rank with
  // its replicas, ep ranks apart.
  std::vector<std::vector<int>> expert_data_groups(int s) const { return stage_groups(GroupKind::kExpertData, s); }

  // A kGradAllReduce task: every group runs `op` over `bytes` per rank.
  TaskId group_collective(GroupCollective op, std::vector<std::vector<int>> groups, double bytes,
                          std::vector<TaskId> deps) {
    Task t = base(TaskKind::kGradAllReduce, Phase::kGradSync, -1, -1, std::move(deps));
    t.groups = std::move(groups);
    t.bytes = bytes;
    t.group_op = op;
    return add(std::move(t));
  }

  // Gradient sync and optimizer of stage s (-1: the one-stage step) over
  // `items` (grad_items order). Dense gradients reduce over the DP groups,
  // expert gradients over the EDP groups; ZeRO-0 all-reduces them and
  // AdamW updates every parameter the rank holds; ZeRO-1 (Megatron's
  // distributed optimizer) reduce-scatters them, AdamW updates the rank's
  // 1/DP (dense) and 1/EDP (expert) shard, and the updated BF16 parameters
  // are all-gathered after it. With parallel.overlap_grad_reduce the
  // reductions go in buckets (grad_buckets.hpp), each waiting only for the
  // backward tasks completing its gradients, so the DP stream runs them
  // beside the rest of the backward; without, one per group after the whole
  // backward (`done`; the experts' after `expert_done` when given).
  void sync_and_update(int s, const std::vector<GradItem>& items, const std::vector<TaskId>& done,
                       const std::vector<TaskId>& expert_done) {
    const ParallelSpec& p = w_.parallel;
    const bool zero = w_.memory.zero_stage >= 1;
    const GroupCollective reduce = zero ? GroupCollective::kReduceScatter : GroupCollective::kAllReduce;
    const double grad = dtype_bytes(w_.precision.gradient);
    const auto dense_groups = data_groups(s);
    const auto expert_groups = expert_data_groups(s);
    std::vector<double> dense_bytes, expert_bytes;
    double dense = 0, expert = 0;
    for (const GradItem& i : items) {
      dense_bytes.push_back(i.dense * grad);
      expert_bytes.push_back(i.expert * grad);
      dense += i.dense;
      expert += i.expert;
    }
    std::vector<TaskId> synced;
    if (!p.overlap_grad_reduce) {
      synced.push_back(group_collective(reduce, dense_groups, dense * grad, done));
      synced.push_back(group_collective(reduce, expert_groups, expert * grad, expert_done.empty() ? done : expert_done));
    } else {
      // Both kinds' buckets in the order their last gradients complete.
      const std::vector<GradBucket> dense_buckets = bucket_gradients(dense_bytes, p.grad_bucket_bytes);
      const std::vector<GradBucket> expert_buckets = bucket_gradients(expert_bytes, p.grad_bucket_bytes);
      const auto ready = [&](const GradBucket& b) {
        std::vector<TaskId> deps;
        for (std::size_t i = b.first; i <= b.last; ++i) deps.insert(deps.end(), items[i].ready.begin(), items[i].ready.end());
        std::sort(deps.begin(), deps.end());
        deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
        return deps.empty() ? done : deps;
      };
      std::size_t d = 0, e = 0;
      while (d < dense_buckets.size() || e < expert_buckets.size()) {
        const bool dense_next = e == expert_buckets.size() ||
                                (d < dense_buckets.size() && dense_buckets[d].last <= expert_buckets[e].last);
        const GradBucket& b = dense_next ? dense_buckets[d++] : expert_buckets[e++];
        synced.push_back(group_collective(reduce, dense_next ? dense_groups : expert_groups, b.bytes, ready(b)));
      }
      if (synced.empty()) synced = done;
    }
    const double shard_dense = zero ? dense / p.full_dp() : dense,
                 shard_expert = zero ? expert / p.full_edp() : expert;
    const TaskId optimizer = compute(TaskKind::kOptimizer, Phase::kOptimizer, -1, -1, Dtype::kFp32,
                                     optimizer_cost(shard_dense + shard_expert, w_.precision.gradient), synced, s);
    if (!zero) return;
    group_collective(GroupCollective::kAllGather, dense_groups, dense * kParameterBytes, {optimizer});
    group_collective(GroupCollective::kAllGather, expert_groups, expert * kParameterBytes, {optimizer});
  }

  // The model weights ZeRO-1 all-gathers after the update: BF16, as the
  // memory model holds them (docs/memory.md), also under FP8 GEMMs.
  static constexpr double kParameterBytes = 2;

  const WorkloadSpec& w_;
  const RoutingSample& r_;
  WorkloadSpec full_;  // w_ with the whole micro-batch's tokens on one rank (before TP sharding)
  ReplicaFold fold_;
  std::vector<std::vector<int>> tp_groups_;
  TaskGraph g_;
  // Per layer (model.layers: the head), the backward task of each
  // micro-batch after which the layer's gradients are complete.
  std::map<int, std::vector<TaskId>> grad_ready_;
  // Per stage (-1: the one-stage step): its last expert-GEMM backward (the stage's passes are chained).
  std::map<int, TaskId> stage_experts_last_;
  StageSplit split_;                          // pipeline only: layers per model chunk
  int p2p_traffic_ = -1;
};

}  // namespace

TaskGraph build_task_graph(const WorkloadSpec& w, const RoutingSample& routing) { return Builder(w, routing).build(); }

void fill_routing(TaskGraph& graph, const WorkloadSpec& w, int job, LayerRouting routing) {
  for (Task& t : graph.tasks)
    if (t.routing == job && t.kind == TaskKind::kExpertGemm)
      set_expert_loads(t, w, routing, graph.ranks, graph.stage_ranks);
  graph.dropped_picks += routing.dropped_picks;
  graph.traffic[static_cast<std::size_t>(job)] = std::move(routing.traffic);
}

TaskGraph build_task_graph(const WorkloadSpec& w) { return build_task_graph(w, sample_routing(w)); }

}  // namespace epsim::workloads
