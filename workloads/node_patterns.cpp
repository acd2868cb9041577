// Uniform node-limited draws by node pattern: the exact pattern
// probabilities, and a per-token draw that needs no repeat handling.
//
// Probabilities. Under equal weights the draw of routing_sampler.cpp is a
// Markov chain on the multiset of per-node counts: with t experts drawn and
// fewer than L nodes met, the next expert is uniform over the E - t experts
// left, so it lands in a met node holding c of them with probability
// (m - c) / (E - t) and in a new node with probability (N - d) m / (E - t);
// once L nodes are met it is uniform over their L m - t experts left. The
// chain has a few dozen states for DeepSeek-V3 (k = 8, L = 4, m = 8).
//
// Why drawing by pattern is exact. Permuting nodes, or experts within a
// node, maps the draw process onto itself when weights are equal, so a
// token's expert set has the same probability as any set it maps to: given
// its pattern, the set is uniform over the sets with that pattern. Choosing
// an ordered tuple of distinct uniform nodes for the pattern's counts and a
// uniform subset of each size within them reaches every such set through
// the same number of tuples (the permutations of equal counts), so it is
// that uniform draw.
#include "workloads/node_patterns.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>

namespace epsim::workloads {

std::vector<NodePattern> uniform_node_patterns(int experts, int nodes, int node_limit, int k) {
  const int m = experts / nodes;
  using State = std::vector<int>;  // counts per met node, largest first
  std::map<State, double> current{{State{}, 1.0}};
  for (int t = 0; t < k; ++t) {
    std::map<State, double> next;
    for (const auto& [state, p] : current) {
      const auto met = static_cast<int>(state.size());
      const bool free_phase = met < node_limit;
      const double left = free_phase ? experts - t : node_limit * m - t;
      for (std::size_t i = 0; i < state.size(); ++i) {
        if (state[i] == m) continue;
        State s = state;
        ++s[i];
        std::sort(s.begin(), s.end(), std::greater<>());
        next[s] += p * (m - state[i]) / left;
      }
      if (free_phase) {
        State s = state;
        s.push_back(1);  // the smallest count: the order is kept
        next[s] += p * double(nodes - met) * m / left;
      }
    }
    current = std::move(next);
  }
  std::vector<NodePattern> out;
  for (const auto& [state, p] : current) out.push_back({state, p});
  return out;
}

namespace {

// A byte of a mask spread to one 8-bit counter per bit (0x01 where set):
// adding it to a word of counters counts the byte's bits at once.
struct ByteLanes {
  std::uint64_t lanes[256];
  ByteLanes() {
    for (int b = 0; b < 256; ++b) {
      lanes[b] = 0;
      for (int i = 0; i < 8; ++i) lanes[b] |= std::uint64_t(b >> i & 1) << (8 * i);
    }
  }
};
const ByteLanes kByteLanes;

// Counters are flushed before any can pass 255: a node gains at most one
// per token.
constexpr std::int32_t kLaneTokens = 255;

__extension__ using Wide = unsigned __int128;

}  // namespace

namespace {

// A drawn-subset token adds one word per expert slot to its expert's
// counter: +1 in the low 32 bits (the expert), +1 at bit 32 if its rank is
// new to the token (16 bits), +1 at bit 48 if its node is (16 bits). One
// add per slot counts experts, ranks and nodes; fields are spread to the
// rows before the 16-bit ones could overflow.
constexpr int kRankField = 32, kNodeField = 48;
constexpr std::int32_t kFieldTokens = 65535;

}  // namespace

NodePatternSampler::NodePatternSampler(int experts, int nodes, int node_limit, int k, int experts_per_rank)
    : nodes_(nodes), per_node_(experts / nodes), ranks_per_node_(experts / nodes / experts_per_rank),
      node_limit_(node_limit), k_(k), expert_words_((per_node_ + 7) / 8), rank_words_((ranks_per_node_ + 7) / 8),
      rank_is_expert_(experts_per_rank == 1) {
  std::vector<double> p;
  for (const NodePattern& pattern : uniform_node_patterns(experts, nodes, node_limit, k)) {
    p.push_back(pattern.probability);
    for (int i = 0; i < node_limit; ++i)
      pattern_counts_.push_back(i < static_cast<int>(pattern.counts.size()) ? pattern.counts[static_cast<std::size_t>(i)] : 0);
    pattern_reached_.push_back(static_cast<int>(pattern.counts.size()));
  }
  patterns_ = AliasTable(p);
  for (std::size_t q = 0; q < p.size(); ++q) {
    int w = 0;
    for (int i = 0; i < node_limit; ++i) {
      node_word_.push_back(static_cast<std::uint32_t>(w++));
      for (int c = 0; c < pattern_counts_[q * static_cast<std::size_t>(node_limit) + static_cast<std::size_t>(i)]; ++c) {
        slot_keep_.push_back(c > 0 ? ~std::uint64_t{0} : 0);
        slot_increment_.push_back(1 | std::uint64_t{c == 0} << kNodeField);
        slot_word_.push_back(static_cast<std::uint32_t>(w++));
        slot_node_.push_back(static_cast<std::uint32_t>(i));
      }
    }
  }
  for (int e = 0; e < per_node_; ++e) {
    rank_of_local_.push_back(static_cast<std::uint8_t>(e / experts_per_rank));
    const int first = e / experts_per_rank * experts_per_rank;
    rank_span_.push_back((experts_per_rank == 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << experts_per_rank) - 1)) << first);
  }
  for (int e = 0; e < per_node_; ++e) rank_bit_.push_back(std::uint64_t{1} << (e / experts_per_rank));
  for (int byte = 0; byte < expert_words_ * 8 && byte * 8 < per_node_; ++byte)
    for (int b = 0; b < 256; ++b) {
      std::uint64_t ranks = 0;
      for (int i = 0; i < 8 && byte * 8 + i < per_node_; ++i)
        if (b >> i & 1) ranks |= rank_bit_[static_cast<std::size_t>(byte * 8 + i)];
      rank_byte_.push_back(ranks);
    }
  if (per_node_ > kMaxWide) return;
  const int tabled = per_node_ > kMaxTabled ? kWideTabled : per_node_;
  for (int c = 0; c <= tabled; ++c) {
    subset_start_.push_back(static_cast<std::uint32_t>(subsets_.size() + wide_subsets_.size()));
    // The masks of c bits in increasing order: Gosper's step from each to the next.
    const std::uint64_t end = std::uint64_t{1} << per_node_;
    for (std::uint64_t mask = (std::uint64_t{1} << c) - 1; mask < end;) {
      const auto ranks = static_cast<std::uint32_t>(ranks_of(mask));
      if (per_node_ > kMaxTabled) {
        WideSubset wide{ranks, {}};
        int slot = 0;
        for (int e = 0; e < per_node_; ++e)
          if (mask >> e & 1) wide.experts[slot++] = static_cast<std::uint8_t>(e);
        for (; slot < kWideTabled; ++slot) wide.experts[slot] = static_cast<std::uint8_t>(per_node_ + slot);
        wide_subsets_.push_back(wide);
      } else {
        subsets_.push_back({static_cast<std::uint32_t>(mask), ranks});
      }
      if (mask == 0) break;
      const std::uint64_t low = mask & -mask, up = mask + low;
      mask = ((mask ^ up) >> 2) / low | up;
    }
    subset_size_.push_back(static_cast<std::uint32_t>(subsets_.size() + wide_subsets_.size()) - subset_start_.back());
  }
  for (const Subset& subset : subsets_) subset_lanes_.push_back(kByteLanes.lanes[subset.ranks & 0xff]);
  if (per_node_ > kMaxTabled) {
    std::uint64_t tuples = 1;
    for (int i = 0; i < node_limit && tuples <= kMaxTuples; ++i) tuples *= static_cast<std::uint64_t>(nodes - i);
    if (tuples <= kMaxTuples) {
      tuple_count_ = tuples;
      // Odometer over node_limit digits in [0, nodes), keeping those with distinct digits.
      std::vector<int> digits(static_cast<std::size_t>(node_limit), 0);
      for (;;) {
        std::vector<int> sorted = digits;
        std::sort(sorted.begin(), sorted.end());
        if (std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end())
          for (int d : digits) tuple_nodes_.push_back(static_cast<std::uint16_t>(d));
        int i = node_limit - 1;
        while (i >= 0 && ++digits[static_cast<std::size_t>(i)] == nodes) digits[static_cast<std::size_t>(i--)] = 0;
        if (i < 0) break;
      }
    }
  }
  for (int c : pattern_counts_) {
    const auto t = static_cast<std::size_t>(std::min(c, tabled));
    steps_.push_back({subset_start_[t], subset_size_[t], c > 0, c - static_cast<int>(t)});
  }
}

// One table lookup per byte of the mask: no loop over its bits, whose
// count varies from token to token.
std::uint64_t NodePatternSampler::ranks_of(std::uint64_t experts) const {
  std::uint64_t ranks = 0;
  for (std::size_t byte = 0; byte * 256 < rank_byte_.size(); ++byte)
    ranks |= rank_byte_[byte * 256 + (experts >> (8 * byte) & 0xff)];
  return ranks;
}

void NodePatternSampler::flush(NodePatternScratch& scratch, std::int32_t* rank_row, std::int32_t* expert_count) const {
  auto add = [](std::vector<std::uint64_t>& lanes, int words, int per_node, std::int32_t* row) {
    for (std::size_t n = 0; n * static_cast<std::size_t>(words) < lanes.size(); ++n) {
      for (int i = 0; i < per_node; ++i) {
        const std::uint64_t word = lanes[n * static_cast<std::size_t>(words) + static_cast<std::size_t>(i / 8)];
        row[n * static_cast<std::size_t>(per_node) + static_cast<std::size_t>(i)] +=
            static_cast<std::int32_t>(word >> (8 * (i % 8)) & 0xff);
      }
    }
    std::fill(lanes.begin(), lanes.end(), 0);
  };
  add(scratch.rank_lanes, rank_words_, ranks_per_node_, rank_row);
  if (!rank_is_expert_) add(scratch.expert_lanes, expert_words_, per_node_, expert_count);
}

int NodePatternSampler::draw_source(Rng& rng, std::int32_t tokens, std::int32_t* rank_row, std::int32_t* node_row,
                                    std::int32_t* expert_count, NodePatternScratch& scratch) const {
  const auto nodes = static_cast<std::size_t>(nodes_);
  scratch.order.resize(nodes);
  std::iota(scratch.order.begin(), scratch.order.end(), 0);
  if (per_node_ > kMaxWide) return draw_drawn(rng, tokens, rank_row, node_row, expert_count, scratch);
  const bool wide = per_node_ > kMaxTabled;
  // Nodes of 17 to 32 count experts in 32-bit counters, and with one
  // expert per rank those are the rank counts.
  scratch.expert_lanes.assign(rank_is_expert_ || wide ? 0 : nodes * static_cast<std::size_t>(expert_words_), 0);
  scratch.rank_lanes.assign(rank_is_expert_ && wide ? 0 : nodes * static_cast<std::size_t>(rank_words_), 0);
  int most = 0;
  if (wide) {
    const auto stride = static_cast<std::size_t>(kWideStride);
    scratch.expert_counts.assign(nodes * stride, 0);
    // DeepSeek-V3 at EP64 unrolled: 4 nodes of 32 experts, 8 ranks each.
    const bool tuples = tuple_count_ > 0;
    most = tuples && node_limit_ == 4 && !rank_is_expert_ && rank_words_ == 1
               ? draw_wide<4, 1, true>(rng, tokens, rank_row, node_row, expert_count, scratch)
           : tuples ? draw_wide<0, 0, true>(rng, tokens, rank_row, node_row, expert_count, scratch)
                    : draw_wide<0, 0, false>(rng, tokens, rank_row, node_row, expert_count, scratch);
    flush(scratch, rank_row, expert_count);
    const auto per_node = static_cast<std::size_t>(per_node_);
    for (std::size_t n = 0; n < nodes; ++n) {
      for (std::size_t e = 0; e < per_node; ++e) {
        const std::int32_t count = scratch.expert_counts[n * stride + e];
        expert_count[n * per_node + e] += count;
        if (rank_is_expert_) rank_row[n * per_node + e] += count;
      }
    }
    return most;
  }
  // DeepSeek-V3's 4 nodes unrolled; one expert per rank and at most 8
  // ranks per node: one lane word per node, taken from the subset table.
  const bool ranks_only = rank_is_expert_ && rank_words_ == 1;
  most = node_limit_ == 4 && ranks_only ? draw_tabled<4, true>(rng, tokens, rank_row, node_row, expert_count, scratch)
         : ranks_only                  ? draw_tabled<0, true>(rng, tokens, rank_row, node_row, expert_count, scratch)
                                       : draw_tabled<0, false>(rng, tokens, rank_row, node_row, expert_count, scratch);
  flush(scratch, rank_row, expert_count);
  // One expert per rank: the rank counts were the expert counts (rank_row
  // starts at 0 for each source).
  if (rank_is_expert_) {
    const std::size_t experts = nodes * static_cast<std::size_t>(per_node_);
    for (std::size_t e = 0; e < experts; ++e) expert_count[e] += rank_row[e];
  }
  return most;
}

template <int kNodeLimit, bool kRanksOnly>
int NodePatternSampler::draw_tabled(Rng& rng, std::int32_t tokens, std::int32_t* rank_row, std::int32_t* node_row,
                                    std::int32_t* expert_count, NodePatternScratch& scratch) const {
  // Distinct uniform nodes by a partial Fisher-Yates shuffle of a
  // permutation kept across tokens: whatever order it is left in, the
  // first node_limit entries after the swaps are a uniform ordered tuple of
  // distinct nodes, with no repeats to redraw. Every token makes all
  // node_limit steps (a pattern's missing nodes have 0 experts), so the
  // loop has no data-dependent branches. The generator and every table are
  // held in locals: through members or the caller's Rng the compiler must
  // reload them after each store to a counter (it cannot rule out aliasing).
  Rng local = rng;
  HalfWords bits;
  int* order = scratch.order.data();
  std::uint64_t* expert_lanes = scratch.expert_lanes.data();
  std::uint64_t* rank_lanes = scratch.rank_lanes.data();
  const int nodes = nodes_, node_limit = kNodeLimit > 0 ? kNodeLimit : node_limit_;
  const int rank_words = rank_words_, expert_words = expert_words_;
  const bool rank_is_expert = rank_is_expert_;
  const int* pattern_reached = pattern_reached_.data();
  const std::uint64_t* byte_lanes = kByteLanes.lanes;
  const std::uint64_t* subset_lanes = subset_lanes_.data();
  const Step* steps = steps_.data();
  int most = 0;
  for (std::int32_t first = 0; first < tokens; first += kLaneTokens) {
    if (first > 0) flush(scratch, rank_row, expert_count);
    const std::int32_t last = tokens - first > kLaneTokens ? first + kLaneTokens : tokens;
    for (std::int32_t token = first; token < last; ++token) {
      const auto p = static_cast<std::size_t>(patterns_.draw32(bits.next(local)));
      most = std::max(most, pattern_reached[p]);
      const Step* step = &steps[p * static_cast<std::size_t>(node_limit)];
#pragma GCC unroll 4
      for (int i = 0; i < node_limit; ++i) {
        const std::uint64_t random = local.next();
        // One of the nodes - i not yet taken: multiply-shift of the high half (bias below nodes / 2^32).
        const auto j = static_cast<std::size_t>(i) +
                       static_cast<std::size_t>(((random >> 32) * static_cast<std::uint64_t>(nodes - i)) >> 32);
        std::swap(order[i], order[j]);
        const auto n = static_cast<std::size_t>(order[i]);
        node_row[n] += step[i].reached;
        // The subset: multiply-shift of the low half (bias below entries / 2^32).
        const std::size_t entry = step[i].start + ((random & 0xffffffffULL) * step[i].size >> 32);
        if (kRanksOnly) {
          rank_lanes[n] += subset_lanes[entry];
          continue;
        }
        const Subset s = subsets_[entry];
        for (int w = 0; w < rank_words; ++w)
          rank_lanes[n * static_cast<std::size_t>(rank_words) + static_cast<std::size_t>(w)] += byte_lanes[s.ranks >> (8 * w) & 0xff];
        if (rank_is_expert) continue;
        for (int w = 0; w < expert_words; ++w)
          expert_lanes[n * static_cast<std::size_t>(expert_words) + static_cast<std::size_t>(w)] += byte_lanes[s.experts >> (8 * w) & 0xff];
      }
    }
  }
  rng = local;
  return most;
}

// Nodes of 17 to 32 experts. A token's ordered tuple of distinct nodes is
// one entry of a table of all of them (while there are at most
// kMaxTuples; else the partial Fisher-Yates shuffle of draw_tabled), each
// node's subset of at most kWideTabled experts an entry of the subset
// table, and each of those experts one add to its own 32-bit counter.
//
// Random words: the tuple and the first two subsets from one 64-bit word,
// later subsets two per word (without the tuple table, each node and its
// subset from one word). Within a word, multiply-shift by the first range,
// the low word of the product by the next range, and so on: the results
// are the mixed-radix digits of floor(word x R / 2^64), R the product of
// the ranges, so each outcome is within a relative R / 2^64 of its exact
// probability: R <= 1,680 x 35,960^2 for DeepSeek-V3 at EP64 (8 nodes of
// 32, top-8 of 4), 1.2e-7; kMaxTuples x 35,960^2, 2.9e-7, for any layout.
template <int kNodeLimit, int kRankWords, bool kTuples>
int NodePatternSampler::draw_wide(Rng& rng, std::int32_t tokens, std::int32_t* rank_row, std::int32_t* node_row,
                                  std::int32_t* expert_count, NodePatternScratch& scratch) const {
  // Generator and tables in locals, as in draw_tabled.
  Rng local = rng;
  HalfWords bits;
  int* order = scratch.order.data();
  std::uint64_t* rank_lanes = scratch.rank_lanes.data();
  std::int32_t* expert_counts = scratch.expert_counts.data();
  const int nodes = nodes_, node_limit = kNodeLimit > 0 ? kNodeLimit : node_limit_;
  const int rank_words = kRankWords > 0 ? kRankWords : rank_words_;
  const bool rank_is_expert = kRankWords > 0 ? false : rank_is_expert_;
  const auto per_node = static_cast<std::uint64_t>(per_node_);
  const auto tuple_count = static_cast<std::uint64_t>(tuple_count_);
  const std::uint16_t* tuple_nodes = tuple_nodes_.data();
  const int* pattern_reached = pattern_reached_.data();
  const std::uint64_t* byte_lanes = kByteLanes.lanes;
  const std::uint64_t* rank_bit = rank_bit_.data();
  const WideSubset* subsets = wide_subsets_.data();
  const Step* steps = steps_.data();
  int most = 0;
  for (std::int32_t first = 0; first < tokens; first += kLaneTokens) {
    if (first > 0) flush(scratch, rank_row, expert_count);
    const std::int32_t last = tokens - first > kLaneTokens ? first + kLaneTokens : tokens;
    for (std::int32_t token = first; token < last; ++token) {
      const auto p = static_cast<std::size_t>(patterns_.draw32(bits.next(local)));
      most = std::max(most, pattern_reached[p]);
      const Step* step = &steps[p * static_cast<std::size_t>(node_limit)];
      std::uint64_t rest = 0;  // what is left of the current word
      const std::uint16_t* tuple = nullptr;
      if (kTuples) {
        const Wide pick = Wide{local.next()} * tuple_count;
        tuple = tuple_nodes + static_cast<std::size_t>(pick >> 64) * static_cast<std::size_t>(node_limit);
        rest = static_cast<std::uint64_t>(pick);
      }
#pragma GCC unroll 4
      for (int i = 0; i < node_limit; ++i) {
        std::size_t n = 0;
        if (kTuples) {
          if (i >= 2 && i % 2 == 0) rest = local.next();
          n = tuple[i];
        } else {
          const Wide node_pick = Wide{local.next()} * static_cast<std::uint64_t>(nodes - i);
          const auto j = static_cast<std::size_t>(i) + static_cast<std::size_t>(node_pick >> 64);
          std::swap(order[i], order[j]);
          n = static_cast<std::size_t>(order[i]);
          rest = static_cast<std::uint64_t>(node_pick);
        }
        const Wide subset_pick = Wide{rest} * step[i].size;
        rest = static_cast<std::uint64_t>(subset_pick);
        // Read in place: each slot's expert one byte load, no shifts.
        const WideSubset& s = subsets[step[i].start + static_cast<std::size_t>(subset_pick >> 64)];
        node_row[n] += step[i].reached;
        std::int32_t* count = expert_counts + n * kWideStride;
#pragma GCC unroll 4
        for (int slot = 0; slot < kWideTabled; ++slot) ++count[s.experts[slot]];
        std::uint32_t ranks = s.ranks;
        if (__builtin_expect(step[i].extra > 0, 0)) {
          // More experts than the table's subsets hold (2 % of DeepSeek-V3's
          // EP64 tokens): the rest one by one, uniform over the node, a
          // repeat redrawn. A uniform subset grown by uniform draws without
          // replacement is a uniform subset of the larger size.
          std::uint32_t taken = 0;
          for (std::uint8_t e : s.experts) taken |= e < per_node ? std::uint32_t{1} << e : 0;
          for (int extra = step[i].extra; extra > 0;) {
            const auto e = static_cast<std::size_t>((Wide{local.next()} * per_node) >> 64);
            const std::uint32_t bit = std::uint32_t{1} << e;
            if (taken & bit) continue;
            taken |= bit;
            ++count[e];
            ranks |= static_cast<std::uint32_t>(rank_bit[e]);
            --extra;
          }
        }
        if (rank_is_expert) continue;  // the expert counters are the rank counters
#pragma GCC unroll 4
        for (int w = 0; w < rank_words; ++w)
          rank_lanes[n * static_cast<std::size_t>(rank_words) + static_cast<std::size_t>(w)] += byte_lanes[ranks >> (8 * w) & 0xff];
      }
    }
  }
  rng = local;
  return most;
}

void NodePatternSampler::spread_fields(std::vector<std::uint64_t>& fields, std::int32_t* rank_row, std::int32_t* node_row,
                                       std::int32_t* expert_count) const {
  const auto per_node = static_cast<std::size_t>(per_node_), ranks_per_node = static_cast<std::size_t>(ranks_per_node_);
  for (std::size_t e = 0; e < fields.size(); ++e) {
    const std::uint64_t f = fields[e];
    const std::size_t n = e / per_node;
    expert_count[e] += static_cast<std::int32_t>(f & 0xffffffffULL);
    rank_row[n * ranks_per_node + rank_of_local_[e % per_node]] += static_cast<std::int32_t>(f >> kRankField & 0xffff);
    node_row[n] += static_cast<std::int32_t>(f >> kNodeField);
  }
  std::fill(fields.begin(), fields.end(), 0);
}

// The same stream as drawing node by node (node word, then the node's
// experts one word each, a repeat redrawn), in fixed-length loops: a token
// always takes at least node_limit + k words, whose roles (node or expert
// slot) depend on its pattern only, so they are drawn at once and read
// through the pattern's tables; the rare repeat removes its word and draws
// one more at the end. No loop depends on the pattern's counts.
int NodePatternSampler::draw_drawn(Rng& rng, std::int32_t tokens, std::int32_t* rank_row, std::int32_t* node_row,
                                   std::int32_t* expert_count, NodePatternScratch& scratch) const {
  // The expert of a word within its node: multiply-shift of the high half.
  const auto per_node = static_cast<std::uint64_t>(per_node_);
  auto in_node = [&](std::uint64_t random) { return static_cast<std::uint32_t>(((random >> 32) * per_node) >> 32); };
  Rng local = rng;
  HalfWords bits;
  const int nodes = nodes_, node_limit = node_limit_, k = k_;
  const int words = node_limit + k;
  scratch.words.resize(static_cast<std::size_t>(words));
  scratch.base.resize(static_cast<std::size_t>(node_limit));
  scratch.local.resize(static_cast<std::size_t>(k));
  scratch.increment.resize(static_cast<std::size_t>(k));
  scratch.fields.assign(static_cast<std::size_t>(nodes_) * per_node, 0);
  std::uint64_t* word = scratch.words.data();
  std::size_t* base = scratch.base.data();
  std::uint32_t* local_expert = scratch.local.data();
  std::uint64_t* increment = scratch.increment.data();
  std::uint64_t* fields = scratch.fields.data();
  int* order = scratch.order.data();
  const int* pattern_reached = pattern_reached_.data();
  const std::uint32_t* slot_word = slot_word_.data();
  const std::uint32_t* slot_node = slot_node_.data();
  const std::uint32_t* node_word = node_word_.data();
  const std::uint64_t* slot_keep = slot_keep_.data();
  const std::uint64_t* rank_span = rank_span_.data();
  int most = 0;
  for (std::int32_t first = 0; first < tokens; first += kFieldTokens) {
    if (first > 0) spread_fields(scratch.fields, rank_row, node_row, expert_count);
    const std::int32_t last = tokens - first > kFieldTokens ? first + kFieldTokens : tokens;
    for (std::int32_t token = first; token < last; ++token) {
      const auto p = static_cast<std::size_t>(patterns_.draw32(bits.next(local)));
      most = std::max(most, pattern_reached[p]);
#pragma GCC unroll 16
      for (int q = 0; q < words; ++q) word[q] = local.next();
      const std::uint32_t* sw = &slot_word[p * static_cast<std::size_t>(k)];
      const std::uint64_t* keep = &slot_keep[p * static_cast<std::size_t>(k)];
      const std::uint64_t* slot_increment = &slot_increment_[p * static_cast<std::size_t>(k)];
      // The slots' experts; a repeat rejects its word: the sequential draw
      // takes the next word for that slot and every later draw shifts by
      // one, which is the same mapping on the words with that one removed.
      for (;;) {
        std::uint64_t experts = 0, repeats = 0;
#pragma GCC unroll 8
        for (int s = 0; s < k; ++s) {
          const std::uint32_t x = in_node(word[sw[s]]);
          const std::uint64_t bit = std::uint64_t{1} << x;
          experts &= keep[s];
          repeats |= experts & bit;
          increment[s] = slot_increment[s] | std::uint64_t{(experts & rank_span[x]) == 0} << kRankField;
          experts |= bit;
          local_expert[s] = x;
        }
        if (repeats == 0) break;
        std::uint32_t rejected = 0;
        experts = 0;
        for (int s = 0; s < k; ++s) {  // the first slot whose expert repeats
          const std::uint64_t bit = std::uint64_t{1} << local_expert[s];
          if (keep[s] == 0) experts = 0;
          if (experts & bit) {
            rejected = sw[s];
            break;
          }
          experts |= bit;
        }
        std::copy(word + rejected + 1, word + words, word + rejected);
        word[words - 1] = local.next();
      }
      const std::uint32_t* nw = &node_word[p * static_cast<std::size_t>(node_limit)];
#pragma GCC unroll 4
      for (int i = 0; i < node_limit; ++i) {
        const auto j = static_cast<std::size_t>(i) +
                       static_cast<std::size_t>(((word[nw[i]] >> 32) * static_cast<std::uint64_t>(nodes - i)) >> 32);
        std::swap(order[i], order[j]);
        base[i] = static_cast<std::size_t>(order[i]) * per_node;
      }
      const std::uint32_t* sn = &slot_node[p * static_cast<std::size_t>(k)];
#pragma GCC unroll 8
      for (int s = 0; s < k; ++s) fields[base[sn[s]] + local_expert[s]] += increment[s];
    }
  }
  rng = local;
  spread_fields(scratch.fields, rank_row, node_row, expert_count);
  return most;
}

}  // namespace epsim::workloads
