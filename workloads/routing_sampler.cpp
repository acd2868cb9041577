// Per-token routing draws, counted into traffic matrices and expert loads.
//
// Method. Tokens of one layer are i.i.d.: each draws k distinct experts by
// sequential sampling without replacement from the layer's weights (draw by
// weight, redraw on a repeat). That is exactly top-k of scores
// log(weight) + i.i.d. Gumbel noise: the experts in descending score order
// are a Plackett-Luce sequence, which is sequential sampling without
// replacement by weight (for equal weights, i.i.d. scores, as DeepEP's
// benchmark draws them).
//
// A binding node limit L is group-limited routing as DeepSeek-V3 and
// DeepEP's benchmark do it: keep the L nodes (groups) whose best expert
// scores highest, then the top k experts among them. In the score order,
// the L best groups are the first L distinct nodes met, and the top k among
// them are the first k experts of the order that lie in those nodes. So a
// token draws experts by weight without replacement, keeping each, until
// it has met L distinct nodes (or has k experts); then it draws by weight
// restricted to those nodes' remaining experts (a node by node weight, an
// expert in it from the node's alias table, redraw on a repeat) until it
// has k. Tests compare this with a brute-force score simulation.
//
// Draws use alias tables (O(1)); after kMaxRepeats repeats in one token the
// next expert is drawn exactly from the remaining weights, which is the
// same distribution. Equal weights under a node limit go by node pattern
// instead (node_patterns.hpp): the same distribution, found by symmetry.
// Other weights under a node limit, with nodes of up to 64 experts, go by
// LimitedDraws (limited_draws.hpp): the same process, whose exact steps
// take a new expert each; draw_limited below serves larger nodes.
#include "workloads/routing_sampler.hpp"

#include <algorithm>
#include <memory>
#include <optional>

#include "workloads/alias_table.hpp"
#include "workloads/expert_replicas.hpp"
#include "workloads/expert_weights.hpp"
#include "workloads/limited_draws.hpp"
#include "workloads/node_patterns.hpp"
#include "workloads/rng.hpp"

namespace epsim::workloads {

namespace {

constexpr int kMaxRepeats = 32;
constexpr int kLimitedRepeats = 1;
constexpr std::uint64_t kTokenStream = 0;

// What the draws of one layer need, shared by all its (micro-batch, replica) jobs.
struct LayerTables {
  std::vector<double> weights;       // per expert, sum 1
  bool uniform = false;              // all weights equal: node-limited draws go by pattern
  AliasTable experts;                // over all experts
  std::vector<double> node_weights;  // per node of a replica (binding node limit only)
  std::vector<int> node_positive;    // per node: experts of positive weight
  // Per node, an alias table over its experts (global ids), packed at
  // column offset node * per_node so that a draw is one flat lookup.
  std::vector<std::uint64_t> in_node_threshold;
  std::vector<int> in_node_item, in_node_alias;
  std::vector<std::uint64_t> in_node_columns;
  // Under a binding node limit with nodes of up to 64 experts: the draw
  // without repeats (limited_draws.hpp) instead of the alias tables.
  std::optional<LimitedDraws> limited;
  // Redundant experts: the layer's replica plan (expert_replicas.hpp).
  std::optional<ExpertReplicas> replicas;

  // As AliasTable::draw32, on node `node`'s packed table.
  int draw_in_node(int node, int per_node, std::uint32_t random) const {
    const auto n = static_cast<std::size_t>(node);
    const std::uint64_t m = std::uint64_t{random} * in_node_columns[n];
    const std::size_t column = n * static_cast<std::size_t>(per_node) + static_cast<std::size_t>(m >> 32);
    return (m & 0xffffffffULL) < in_node_threshold[column] ? in_node_item[column] : in_node_alias[column];
  }
};

struct Layout {
  // per_rank and per_node hold where ep divides the experts: an uneven
  // placement (expert_home_rank) always has replicas and no binding node
  // limit (the loader), so it draws through rank_of, node_of and the plan.
  int ep, experts, k, per_rank, per_node, nodes, node_limit;
  bool limited;  // node_limit binds: 0 < node_limit < nodes
  std::vector<int> rank_of, node_of;  // per expert: lookups instead of divisions in the hot loop
};

// Exact draw from `weights`, skipping experts whose stamp is `token`:
// the fallback after many repeats, same distribution as redrawing.
int draw_remaining(Rng& rng, const std::vector<double>& weights, const std::vector<std::int32_t>& stamp,
                   std::int32_t token) {
  double left = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (stamp[i] != token) left += weights[i];
  }
  double u = rng.uniform() * left;
  int last = -1;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (stamp[i] == token || weights[i] <= 0) continue;
    last = static_cast<int>(i);
    u -= weights[i];
    if (u < 0) break;
  }
  return last;
}

// Draws tokens of one (layer, micro-batch, replica). "Stamps" mark what the
// current token already holds (stamp == token number), so deduplication
// costs one compare and no clearing.
class TokenDrawer {
 public:
  TokenDrawer(const LayerTables& t, const Layout& L)
      : t_(t), L_(L), expert_stamp_(static_cast<std::size_t>(L.experts), -1),
        node_stamp_(static_cast<std::size_t>(L.nodes), -1),
        nodes_(static_cast<std::size_t>(L.limited ? L.node_limit : 0)), bound_(nodes_.size()), left_(nodes_.size()),
        positive_(nodes_.size()) {}

  // Resets stamps for a new source rank (token numbers restart at 0).
  void new_source() {
    std::fill(expert_stamp_.begin(), expert_stamp_.end(), -1);
    std::fill(node_stamp_.begin(), node_stamp_.end(), -1);
  }

  // Fills chosen[0..k) with distinct experts of token number `token`;
  // they are stamped in expert_stamp().
  void draw(Rng& rng, std::int32_t token, int* chosen) {
    if (t_.limited) {
      t_.limited->draw(rng, chosen);
    } else if (L_.limited) {
      draw_limited(rng, token, chosen);
    } else {
      draw_free(rng, token, chosen);
    }
  }

 private:
  bool take(int e, std::int32_t token) {
    std::int32_t& s = expert_stamp_[static_cast<std::size_t>(e)];
    if (s == token) return false;
    s = token;
    return true;
  }

  void draw_free(Rng& rng, std::int32_t token, int* chosen) {
    int count = 0, repeats = 0;
    HalfWords bits;
    while (count < L_.k) {
      int e = t_.experts.draw32(bits.next(rng));
      if (!take(e, token)) {
        if (++repeats <= kMaxRepeats) continue;
        e = draw_remaining(rng, t_.weights, expert_stamp_, token);
        take(e, token);
      }
      chosen[count++] = e;
    }
  }

  // Takes expert e (new to the token) as chosen[count++]; a node met for
  // the first time joins nodes_.
  void keep(int e, std::int32_t token, int* chosen, int& count, int& node_count) {
    chosen[count++] = e;
    std::int32_t& n = node_stamp_[static_cast<std::size_t>(L_.node_of[static_cast<std::size_t>(e)])];
    if (n == token) return;
    n = token;
    nodes_[static_cast<std::size_t>(node_count++)] = L_.node_of[static_cast<std::size_t>(e)];
  }

  void draw_limited(Rng& rng, std::int32_t token, int* chosen) {
    int count = 0, node_count = 0, repeats = 0;
    HalfWords bits;
    while (count < L_.k && node_count < L_.node_limit) {
      int e = t_.experts.draw32(bits.next(rng));
      if (!take(e, token)) {
        if (++repeats <= kMaxRepeats) continue;
        e = draw_remaining(rng, t_.weights, expert_stamp_, token);
        take(e, token);
      }
      keep(e, token, chosen, count, node_count);
    }
    if (count == L_.k) return;
    const int* nodes = nodes_.data();
    // Cumulative node weights as 32-bit thresholds: one compare per node picks
    // a node with probability proportional to its weight among the chosen.
    double total = 0;
    for (int i = 0; i < node_count; ++i) total += t_.node_weights[static_cast<std::size_t>(nodes[i])];
    std::uint64_t* bound = bound_.data();
    const double scale = 4294967296.0 / total;
    double running = 0;
    for (int i = 0; i < node_count; ++i) {
      running += t_.node_weights[static_cast<std::size_t>(nodes[i])];
      bound[i] = static_cast<std::uint64_t>(running * scale);
    }
    bound[node_count - 1] = std::uint64_t{1} << 32;

    // Rejection first: cheap while the met nodes' remaining weight is most
    // of their weight (uniform-like layers).
    repeats = 0;
    while (count < L_.k && repeats <= kLimitedRepeats) {
      // High 32 bits pick the node, low 32 bits the expert in it.
      const std::uint64_t random = rng.next();
      const std::uint64_t high = random >> 32;
      int i = 0;
      for (int j = 0; j + 1 < node_count; ++j) i += high >= bound[j];  // branch-free
      const int e = t_.draw_in_node(nodes[i], L_.per_node, static_cast<std::uint32_t>(random));
      if (take(e, token)) {
        chosen[count++] = e;
      } else {
        ++repeats;
      }
    }
    if (count == L_.k) return;
    // After more than kLimitedRepeats repeats in this token: a met node by
    // the weight of its experts not yet taken, then one of those by weight.
    // Within the node, redraw repeats from its alias table while at least
    // half its weight is left (at most 2 tries expected); below that, an
    // exact scan of its experts. Which of the two runs depends on the
    // token's draws so far only, and both draw exactly by weight among the
    // node's remaining experts with fresh random bits. Under skew a heavy
    // expert taken early leaves its node light: plain rejection over the
    // met nodes redrew it again and again.
    double* left = left_.data();
    int* positive = positive_.data();  // per met node: experts of positive weight not taken
    for (int i = 0; i < node_count; ++i) {
      left[i] = t_.node_weights[static_cast<std::size_t>(nodes[i])];
      positive[i] = t_.node_positive[static_cast<std::size_t>(nodes[i])];
    }
    for (int c = 0; c < count; ++c) {
      const auto e = static_cast<std::size_t>(chosen[c]);
      int i = 0;
      while (nodes[i] != L_.node_of[e]) ++i;
      left[i] -= t_.weights[e];
      --positive[i];
    }
    // Exactly 0 once a node has nothing left to draw, whatever the rounding.
    for (int i = 0; i < node_count; ++i) left[i] = positive[i] > 0 ? left[i] : 0.0;
    while (count < L_.k) {
      double total = 0;
      for (int i = 0; i < node_count; ++i) total += left[i];
      double u = rng.uniform() * total;
      int i = 0;
      while (i + 1 < node_count && (u >= left[i] || left[i] <= 0)) u -= left[i++];
      while (left[i] <= 0) --i;  // rounding at the top end; some node has weight left (loader check)
      const int n = nodes[i];
      int e = -1;
      if (2 * left[i] >= t_.node_weights[static_cast<std::size_t>(n)]) {
        do {
          e = t_.draw_in_node(n, L_.per_node, bits.next(rng));
        } while (expert_stamp_[static_cast<std::size_t>(e)] == token);
      } else {
        // u is uniform in [0, left[i]): walk the node's remaining experts.
        for (int x = n * L_.per_node; x < (n + 1) * L_.per_node; ++x) {
          const double weight = t_.weights[static_cast<std::size_t>(x)];
          if (expert_stamp_[static_cast<std::size_t>(x)] == token || weight <= 0) continue;
          e = x;  // the last remaining one if rounding leaves u >= 0
          u -= weight;
          if (u < 0) break;
        }
      }
      take(e, token);
      chosen[count++] = e;
      left[i] -= t_.weights[static_cast<std::size_t>(e)];
      if (--positive[i] == 0) left[i] = 0;
    }
  }

  const LayerTables& t_;
  const Layout& L_;
  std::vector<std::int32_t> expert_stamp_;
  std::vector<std::int32_t> node_stamp_;
  std::vector<int> nodes_;    // nodes the token has met, in order (node_limit of them at most)
  std::vector<std::uint64_t> bound_;  // per met node: cumulative weight threshold
  std::vector<double> left_;  // per met node: weight of its experts not taken
  std::vector<int> positive_;  // per met node: experts of positive weight not taken
};

LayerTables make_tables(const WorkloadSpec& w, int moe_layer, const Layout& L) {
  LayerTables t;
  t.weights = expert_weights(w, moe_layer);
  t.uniform = std::all_of(t.weights.begin(), t.weights.end(), [&](double x) { return x == t.weights[0]; });
  t.experts = AliasTable(t.weights);
  if (w.routing.redundant_experts > 0) t.replicas = plan_replicas(t.weights, L.ep, w.routing.redundant_experts);
  if (!L.limited) return t;
  // Equal weights draw by node pattern (RoutingJobs::run): no tables here;
  // mitigations need every token's experts, so they draw token by token.
  if (t.uniform && NodePatternSampler::fits(L.per_node) && !w.routing.per_token_mitigations()) return t;
  if (LimitedDraws::fits(L.per_node)) {
    t.limited.emplace(t.weights, L.per_node, L.node_limit, L.k);
    return t;
  }
  t.node_weights.assign(static_cast<std::size_t>(L.nodes), 0.0);
  for (int n = 0; n < L.nodes; ++n) {
    std::vector<double> local(t.weights.begin() + n * L.per_node, t.weights.begin() + (n + 1) * L.per_node);
    for (double x : local) t.node_weights[static_cast<std::size_t>(n)] += x;
    t.node_positive.push_back(static_cast<int>(std::count_if(local.begin(), local.end(), [](double x) { return x > 0; })));
    const AliasTable table = t.node_weights[static_cast<std::size_t>(n)] > 0 ? AliasTable(local) : AliasTable();
    t.in_node_columns.push_back(static_cast<std::uint64_t>(table.columns()));
    for (int c = 0; c < L.per_node; ++c) {
      const bool used = c < table.columns();
      t.in_node_threshold.push_back(used ? table.threshold(c) : 0);
      t.in_node_item.push_back(n * L.per_node + (used ? table.item(c) : 0));
      t.in_node_alias.push_back(n * L.per_node + (used ? table.alias(c) : 0));
    }
  }
  return t;
}

// Draws every token of one (layer, micro-batch, replica) and counts them.
// `patterns`: the draw for uniform weights under a node limit, or null.
void sample_job(const WorkloadSpec& w, const LayerTables& t, const Layout& L, const NodePatternSampler* patterns,
                int moe_layer, int micro_batch, int replica, LayerRouting& out) {
  TrafficMatrix& m = out.traffic;
  const int total_nodes = m.nodes();
  const int rank0 = replica * L.ep;
  const int node0 = replica * L.nodes;
  std::vector<std::int32_t> expert_count(static_cast<std::size_t>(L.experts), 0);
  std::vector<std::int32_t> rank_stamp(static_cast<std::size_t>(L.ep));
  std::vector<std::int32_t> node_stamp(static_cast<std::size_t>(L.nodes));
  NodePatternScratch pattern_scratch;
  TokenDrawer drawer(t, L);
  std::vector<int> chosen_buffer(static_cast<std::size_t>(L.k));
  int* chosen = chosen_buffer.data();
  int max_nodes = 0;
  const auto tokens = static_cast<std::int32_t>(w.parallel.tokens_per_micro_batch);
  // Mitigations: per (source, expert), picks kept under the capacity and
  // picks made (the replica of a replicated expert alternates with them).
  const std::int64_t capacity = expert_capacity(w);
  const bool per_token = w.routing.per_token_mitigations();
  const int slots = t.replicas ? t.replicas->slots_per_rank : L.per_rank;
  const int ranks_per_node = L.ep / L.nodes;
  std::vector<std::int32_t> picks(per_token ? static_cast<std::size_t>(L.experts) : 0);
  std::vector<std::int32_t> slot_count(static_cast<std::size_t>(L.ep) * slots, 0);
  for (int src = 0; src < L.ep; ++src) {
    const auto global_src = static_cast<std::size_t>(rank0 + src);
    Rng rng(stream_seed(w.routing.seed, kTokenStream, static_cast<std::uint64_t>(moe_layer),
                        static_cast<std::uint64_t>(micro_batch), global_src));
    std::int32_t* rank_row = &m.tokens[global_src * static_cast<std::size_t>(m.ranks) + static_cast<std::size_t>(rank0)];
    std::int32_t* node_row = &m.node_tokens[global_src * static_cast<std::size_t>(total_nodes) + static_cast<std::size_t>(node0)];
    if (patterns != nullptr) {
      max_nodes = std::max(max_nodes, patterns->draw_source(rng, tokens, rank_row, node_row, expert_count.data(), pattern_scratch));
      continue;
    }
    if (t.limited && t.limited->by_masks() && !per_token) {
      max_nodes = std::max(max_nodes, t.limited->draw_source(rng, tokens, L.per_rank, rank_row, node_row, expert_count.data()));
      continue;
    }
    drawer.new_source();
    std::fill(rank_stamp.begin(), rank_stamp.end(), -1);
    std::fill(node_stamp.begin(), node_stamp.end(), -1);
    if (per_token) {
      std::fill(picks.begin(), picks.end(), 0);
      for (std::int32_t token = 0; token < tokens; ++token) {
        drawer.draw(rng, token, chosen);
        int node_count = 0;
        for (int i = 0; i < L.k; ++i) {
          const auto e = static_cast<std::size_t>(chosen[i]);
          const std::int32_t made = picks[e]++;
          if (capacity > 0 && made >= capacity) {  // over the capacity: dropped
            ++out.dropped_picks;
            continue;
          }
          const int slot = t.replicas ? t.replicas->replicas[e][static_cast<std::size_t>(made) % t.replicas->replicas[e].size()]
                                      : L.rank_of[e] * slots + static_cast<int>(e) % L.per_rank;
          ++slot_count[static_cast<std::size_t>(slot)];
          const auto r = static_cast<std::size_t>(slot / slots);
          const int new_rank = rank_stamp[r] != token;
          rank_stamp[r] = token;
          rank_row[r] += new_rank;
          const auto n = r / static_cast<std::size_t>(ranks_per_node);
          const int new_node = node_stamp[n] != token;
          node_stamp[n] = token;
          node_row[n] += new_node;
          node_count += new_node;
        }
        max_nodes = std::max(max_nodes, node_count);
      }
      continue;
    }
    for (std::int32_t token = 0; token < tokens; ++token) {
      drawer.draw(rng, token, chosen);
      int node_count = 0;
      for (int i = 0; i < L.k; ++i) {
        const auto e = static_cast<std::size_t>(chosen[i]);
        ++expert_count[e];
        // Branch-free: whether a rank or node is new to this token is a coin
        // flip the branch predictor cannot learn under a node limit.
        const auto r = static_cast<std::size_t>(L.rank_of[e]);
        const int new_rank = rank_stamp[r] != token;
        rank_stamp[r] = token;
        rank_row[r] += new_rank;
        const auto n = static_cast<std::size_t>(L.node_of[e]);
        const int new_node = node_stamp[n] != token;
        node_stamp[n] = token;
        node_row[n] += new_node;
        node_count += new_node;
      }
      max_nodes = std::max(max_nodes, node_count);
    }
  }
  if (per_token)
    std::copy(slot_count.begin(), slot_count.end(), out.expert_tokens.begin() + static_cast<std::ptrdiff_t>(rank0) * slots);
  else
    std::copy(expert_count.begin(), expert_count.end(),
              out.expert_tokens.begin() + static_cast<std::ptrdiff_t>(rank0) * L.per_rank);
  out.max_nodes_per_token = std::max(out.max_nodes_per_token, max_nodes);
}

}  // namespace

struct RoutingJobs::State {
  const WorkloadSpec& w;
  Layout L{};
  RoutingSample sample;
  std::vector<LayerTables> tables;  // per MoE layer
  std::optional<NodePatternSampler> patterns;
};

RoutingJobs::RoutingJobs(const WorkloadSpec& w) : s_(std::make_unique<State>(State{w, {}, {}, {}, {}})) {
  const ParallelSpec& p = w.parallel;
  Layout& L = s_->L;
  L.ep = p.ep;
  L.experts = w.model.experts;
  L.k = w.model.top_k;
  L.per_rank = w.model.experts / p.ep;
  L.nodes = p.nodes_per_replica();
  L.per_node = w.model.experts / L.nodes;
  L.node_limit = w.model.node_limit;
  L.limited = node_limit_binds(w);
  for (int e = 0; e < L.experts; ++e) {
    L.rank_of.push_back(expert_home_rank(e, L.experts, L.ep));
    L.node_of.push_back(L.rank_of.back() / p.ranks_per_node);
  }

  RoutingSample& s = s_->sample;
  s.ranks = p.ranks();
  s.ranks_per_node = p.ranks_per_node;
  s.experts_per_rank = w.expert_slots_per_rank();
  s.micro_batches = p.micro_batches;
  s.tokens_per_rank = p.tokens_per_micro_batch;
  const int moe_layers = w.model.moe_layers();
  s.layers.resize(static_cast<std::size_t>(moe_layers) * static_cast<std::size_t>(p.micro_batches));
  for (int l = 0; l < moe_layers; ++l) {
    for (int mb = 0; mb < p.micro_batches; ++mb) {
      LayerRouting& out = s.layers[static_cast<std::size_t>(l * p.micro_batches + mb)];
      out.layer = l + w.model.dense_layers;
      out.micro_batch = mb;
      out.traffic.ranks = s.ranks;
      out.traffic.ranks_per_node = p.ranks_per_node;
      out.traffic.selections_per_rank = p.tokens_per_micro_batch * w.model.top_k;
      out.traffic.tokens_per_rank = p.tokens_per_micro_batch;
      const auto ranks = static_cast<std::size_t>(s.ranks);
      out.traffic.tokens.assign(ranks * ranks, 0);
      out.traffic.node_tokens.assign(ranks * static_cast<std::size_t>(out.traffic.nodes()), 0);
      out.expert_tokens.assign(ranks * static_cast<std::size_t>(s.experts_per_rank), 0);
    }
  }

  s_->tables.resize(static_cast<std::size_t>(moe_layers));
  for (int l = 0; l < moe_layers; ++l) s_->tables[static_cast<std::size_t>(l)] = make_tables(w, l, L);
  if (L.limited && NodePatternSampler::fits(L.per_node) && !w.routing.per_token_mitigations())
    s_->patterns.emplace(L.experts, L.nodes, L.node_limit, L.k, L.per_rank);
}

RoutingJobs::~RoutingJobs() = default;

int RoutingJobs::count() const { return static_cast<int>(s_->sample.layers.size()); }

void RoutingJobs::run(int job) {
  const WorkloadSpec& w = s_->w;
  const int micro_batches = w.parallel.micro_batches;
  const int l = job / micro_batches, mb = job % micro_batches;
  const LayerTables& t = s_->tables[static_cast<std::size_t>(l)];
  for (int replica = 0; replica < w.parallel.edp(); ++replica)
    sample_job(w, t, s_->L, t.uniform && s_->patterns ? &*s_->patterns : nullptr, l, mb, replica,
               s_->sample.layers[static_cast<std::size_t>(job)]);
}

RoutingSample& RoutingJobs::sample() { return s_->sample; }

}  // namespace epsim::workloads
