// Group-limited top-k of log(weight) + Gumbel scores, drawn step by step
// without repeats.
//
// The process (routing_sampler.cpp): experts are drawn by weight without
// replacement, each kept, until the token has met node_limit nodes; from
// then on only the remaining experts of the met nodes can be drawn. So each
// step draws one expert by weight among the "active" experts: the untaken
// experts of the met nodes, plus, while fewer than node_limit nodes are
// met, every expert of the other nodes.
//
// One step, exactly that, from one 64-bit random word: u uniform in [0, T),
// T the active weight = the remaining weight of each met node + (while the
// limit is not reached) the weight of the unmet nodes. u falls in a met
// node's remaining weight, or past them all in the unmet nodes' weight.
// - In met node i, u - (the remaining weight of the met nodes before i) is
//   uniform over i's remaining weight; a scan of its experts' weights,
//   skipping the taken ones (a 64-bit mask), finds the expert it falls on.
// - In the unmet weight, u - (the met nodes' remaining weight) is uniform
//   over it; adding back the weight of every met node whose start it
//   reaches (in the order of the nodes) maps it onto the layer's cumulative
//   node weights, where a bucket table and a short walk find the node and
//   the rest of it, within the node, the expert. The node joins the met ones.
// Either way the expert is drawn with probability weight / T: sequential
// sampling without replacement, the same distribution as drawing by weight
// and redrawing repeats, but every step takes a new expert.
//
// The token starts with such redrawing from an alias table over all
// experts, cheaper while few experts are taken. With nodes of 8 and at most
// 32 nodes (DeepSeek-V3 at EP256) it makes a fixed number of alias draws,
// draws_, each kept if new and allowed by the node limit, branch-free: the
// token's experts are one byte per node and its met nodes a 32-bit mask,
// one packed table word gives a column's threshold and both candidates'
// node and bit, so a draw is a few bit operations and whether it is kept
// (a coin flip under skew) costs no mispredicted branch; the exact steps
// then find a met node's untaken running weights in two tables per (node,
// half of its experts, mask of the half's taken ones), 32 KiB at 32 nodes
// (one table per (node, mask), 512 KiB, missed the first-level cache).
// Otherwise it redraws repeats until its nodes are met or
// repeats_ repeats. Which method draws the next expert depends only on the
// draws so far, and each uses fresh random bits, so the law is the same.
// Weights are integers (units of 2^-48 of the total),
// so the remainders are exact and the only approximation is the rounding
// of each weight to a unit; the uniform is the high word of random x T, off
// by less than 2^-64 at any threshold.
#include "workloads/limited_draws.hpp"

#include <algorithm>
#include <cmath>

namespace epsim::workloads {

namespace {

__extension__ using Wide = unsigned __int128;

// Uniform in [0, n) from 64 random bits.
inline std::uint64_t below(std::uint64_t random, std::uint64_t n) {
  return static_cast<std::uint64_t>((static_cast<Wide>(random) * n) >> 64);
}

constexpr int kMaxSlots = 64;  // top_k <= 64 (loader)
constexpr int kMaxDraws = 64;

// Set bits of every byte (no popcnt instruction in the portable build).
struct BitCount {
  std::uint8_t bits[256];
  constexpr BitCount() : bits() {
    for (int b = 0; b < 256; ++b) bits[b] = static_cast<std::uint8_t>((b & 1) + (b >> 1 & 1) + (b >> 2 & 1) + (b >> 3 & 1) +
                                                                      (b >> 4 & 1) + (b >> 5 & 1) + (b >> 6 & 1) + (b >> 7 & 1));
  }
};
constexpr BitCount kBitCount;

}  // namespace

LimitedDraws::LimitedDraws(const std::vector<double>& weights, int per_node, int node_limit, int k, int rejection)
    : per_node_(per_node), nodes_(static_cast<int>(weights.size()) / per_node), node_limit_(node_limit), k_(k),
      slots_(std::min(k, node_limit)), masks_(per_node == 8 && nodes_ <= 32),
      repeats_(rejection < 0 ? kRepeats : rejection),
      draws_(rejection < 0 ? kDraws : std::min(kMaxDraws, (rejection + 1) / 2 * 2)) {
  const AliasTable all(weights);
  for (int c = 0; c < all.columns(); ++c) {
    all_threshold_.push_back(all.threshold(c));
    all_item_alias_.push_back(static_cast<std::uint64_t>(all.item(c)) |
                              static_cast<std::uint64_t>(all.alias(c)) << 32);
  }
  double sum = 0;
  for (double w : weights) sum += w;
  const double scale = std::ldexp(1.0, kUnitBits) / sum;
  for (double w : weights) {
    units_.push_back(w > 0 ? std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(w * scale))) : 0);
  }
  for (int n = 0; n < nodes_; ++n) {
    std::uint64_t units = 0;
    for (int j = 0; j < per_node; ++j) units += units_[static_cast<std::size_t>(n * per_node + j)];
    node_start_.push_back(total_);
    node_units_.push_back(units);
    total_ += units;
    node_end_.push_back(total_);
  }
  if (masks_) {
    // Per column: threshold << 26 | alias's << 13 | item's (node, bit in
    // the node's byte), so that a draw is one load.
    for (int c = 0; c < all.columns(); ++c) {
      auto info = [](int e) { return static_cast<std::uint64_t>(e >> 3) | std::uint64_t{1} << (e & 7) << 5; };
      mask_alias_.push_back(all.threshold(c) << 26 | info(all.alias(c)) << 13 | info(all.item(c)));
    }
    // Per (node, half, mask of the half's taken experts): the running
    // weight of its untaken experts, 4 values.
    for (int n = 0; n < nodes_; ++n) {
      for (int half = 0; half < 2; ++half) {
        for (std::uint64_t mask = 0; mask < 16; ++mask) {
          std::uint64_t running = 0;
          for (int j = 0; j < 4; ++j) {
            running += units_[static_cast<std::size_t>(n * 8 + half * 4 + j)] & (0 - (~mask >> j & 1));
            half_running_.push_back(running);
          }
        }
      }
    }
  }
  // bucket_node_[b]: the first node ending after b's start, b x 2^kBucketShift.
  std::uint32_t n = 0;
  for (std::uint64_t b = 0; b <= kBuckets; ++b) {
    while (n + 1 < static_cast<std::uint32_t>(nodes_) && node_end_[n] <= b << kBucketShift) ++n;
    bucket_node_.push_back(n);
  }
}

void LimitedDraws::draw(Rng& rng, int* chosen) const {
  if (masks_) {
    TokenNodes nodes;
    draw_nodes(rng, nodes);
    int c = 0;
    for (int i = 0; i < nodes.count; ++i) {
      for (int j = 0; j < 8; ++j) {
        if (nodes.mask[i] >> j & 1) chosen[c++] = nodes.node[i] * 8 + j;
      }
    }
    return;
  }
  if (slots_ == 4 && per_node_ == 8) return draw_fixed<4, 8, false>(rng, chosen, nullptr);
  draw_fixed<0, 0, false>(rng, chosen, nullptr);
}

void LimitedDraws::draw_nodes(Rng& rng, TokenNodes& nodes) const {
  // DeepSeek-V3's layout at EP256 (4 nodes of 8 experts) unrolled.
  if (slots_ == 4 && draws_ == kDraws && k_ >= kDraws) return draw_fixed<4, 8, true, kDraws>(rng, nullptr, &nodes);
  draw_fixed<0, 8, true>(rng, nullptr, &nodes);
}

template <int kSlots, int kPerNode, bool kBitmap, int kDraws>
void LimitedDraws::draw_fixed(Rng& rng, int* chosen, TokenNodes* nodes) const {
  // Per slot (a met node, in the order met): node, taken experts, weight left.
  int node[kMaxSlots];
  std::uint64_t taken[kMaxSlots], left[kMaxSlots];
  const int slots = kSlots > 0 ? kSlots : slots_;
  for (int i = 0; i < slots; ++i) {
    node[i] = -1;
    taken[i] = left[i] = 0;
  }
  const std::uint64_t* units = units_.data();
  const std::uint64_t* node_units = node_units_.data();
  const std::uint64_t* node_start = node_start_.data();
  const std::uint64_t* node_end = node_end_.data();
  const std::uint32_t* bucket_node = bucket_node_.data();
  const std::uint64_t* threshold = all_threshold_.data();
  const std::uint64_t* item_alias = all_item_alias_.data();
  const std::uint64_t columns = all_threshold_.size();
  const std::uint64_t* mask_alias = mask_alias_.data();
  const std::uint64_t* half_running = half_running_.data();
  const auto per_node = static_cast<std::size_t>(kPerNode > 0 ? kPerNode : per_node_);
  const int k = k_, node_limit = node_limit_, max_repeats = repeats_;
  std::uint64_t unmet = total_;
  int met = 0, count = 0;
  Rng local = rng;
  // With the masks the token's experts are its slots, copied to `nodes` at
  // the end; otherwise each is written to chosen as it is taken.

  // Takes expert `index` of node n into `target` (== met: a new node).
  auto keep = [&](int target, std::size_t n, int index) __attribute__((always_inline)) {
    const bool is_new = target == met;
    const std::uint64_t weight = units[n * per_node + static_cast<std::size_t>(index)];
    left[target] = (is_new ? node_units[n] : left[target]) - weight;
    taken[target] |= std::uint64_t{1} << index;
    node[target] = static_cast<int>(n);
    unmet -= is_new ? node_units[n] : 0;
    met += is_new;
    if constexpr (!kBitmap) chosen[count] = static_cast<int>(n * per_node) + index;
    ++count;
  };

  // First by weight over all experts, a repeat rejected, then the exact
  // steps below.
  if constexpr (kBitmap) {
    // Alias draws: draws_, or kDraws fixed at compile time (at most k).
    // The token's taken experts are one byte per node (bit j: its expert
    // j), its met nodes a 32-bit mask. A draw keeps its expert unless its
    // node is new and the limit is reached; setting a taken expert's bit
    // again changes nothing, so a repeat needs no test. The first `slots`
    // draws cannot pass the limit and skip that test. With kDraws <= k
    // every draw has room and the experts are counted at the end; draws_
    // may pass k, so that path counts (and refuses) draw by draw. Selects
    // by masks, as the compiler turns ?: into branches.
    constexpr bool kCounted = kDraws == 0;
    std::uint8_t bytes[32] = {};
    std::uint64_t met_mask = 0;
    auto try_draw = [&](std::uint32_t random, bool check_limit) __attribute__((always_inline)) {
      const std::uint64_t m = std::uint64_t{random} * columns;
      const std::uint64_t entry = mask_alias[m >> 32];
      const std::uint64_t use_alias = (m & 0xffffffffULL) >= (entry >> 26);
      const std::uint64_t info = entry >> (use_alias * 13);
      const auto n = static_cast<std::size_t>(info & 31);
      const std::uint64_t bit = info >> 5 & 0xff;
      const std::uint64_t byte = bytes[n];
      const std::uint64_t fresh = byte == 0;
      std::uint64_t kept = check_limit ? (fresh ^ 1) | static_cast<std::uint64_t>(met < node_limit) : 1;
      if constexpr (kCounted) {
        kept &= static_cast<std::uint64_t>((byte & bit) == 0) & static_cast<std::uint64_t>(count < k);
        count += static_cast<int>(kept);
      }
      bytes[n] = static_cast<std::uint8_t>(byte | (bit & (0 - kept)));
      met_mask |= (fresh & kept) << n;
      met += static_cast<int>(fresh & kept);
    };
    if constexpr (kCounted) {
      for (int d = 0; d < draws_; d += 2) {
        const std::uint64_t random = local.next();
        try_draw(static_cast<std::uint32_t>(random >> 32), true);
        try_draw(static_cast<std::uint32_t>(random), true);
      }
    } else {
      static_assert(kSlots > 0 && kSlots % 2 == 0 && kDraws % 2 == 0, "draws in pairs, free ones first");
#pragma GCC unroll 16
      for (int d = 0; d < kDraws; d += 2) {
        const std::uint64_t random = local.next();
        try_draw(static_cast<std::uint32_t>(random >> 32), d >= kSlots);
        try_draw(static_cast<std::uint32_t>(random), d >= kSlots);
      }
    }
    // The met nodes as slots (in node order): taken experts, weight left.
    int i = 0;
    for (std::uint64_t rest = met_mask; rest != 0; rest &= rest - 1, ++i) {
      const auto n = static_cast<std::size_t>(__builtin_ctzll(rest));
      const std::uint64_t mask = bytes[n];
      node[i] = static_cast<int>(n);
      taken[i] = mask;
      left[i] = half_running[(n * 32 + (mask & 15)) * 4 + 3] + half_running[(n * 32 + 16 + (mask >> 4)) * 4 + 3];
      unmet -= node_units[n];
      if constexpr (!kCounted) count += kBitCount.bits[mask];
    }
  } else {
    // Until the token's nodes are met or after repeats_ repeats.
    HalfWords bits;
    int repeats = 0;
    while (count < k && met < node_limit && repeats < max_repeats) {
      // As AliasTable::draw32.
      const std::uint64_t m = std::uint64_t{bits.next(local)} * columns;
      const auto column = static_cast<std::size_t>(m >> 32);
      // Item or alias without a branch: the choice is a coin flip under skew.
      const std::uint64_t pair = item_alias[column];
      const std::uint64_t use_alias = (m & 0xffffffffULL) >= threshold[column];
      const auto e = static_cast<std::size_t>(pair >> (32 * use_alias) & 0xffffffffULL);
      const std::size_t n = e / per_node;
      const int index = static_cast<int>(e - n * per_node);
      int target = met;
#pragma GCC unroll 8
      for (int i = 0; i < slots; ++i) target = node[i] == static_cast<int>(n) ? i : target;
      if (taken[target] >> index & 1) {
        ++repeats;
        continue;
      }
      keep(target, n, index);
    }
  }

  // The met nodes' [start, start + width) in the cumulative node weights,
  // sorted by start, for the exact steps while nodes can still be met;
  // unused entries start at ~0 and are never reached.
  std::uint64_t met_start[kMaxSlots], met_width[kMaxSlots];
  auto add_met = [&](std::size_t n) {
    std::uint64_t start = node_start[n], width = node_units[n];
    for (int i = 0; i < slots; ++i) {
      if (start < met_start[i]) {
        std::swap(start, met_start[i]);
        std::swap(width, met_width[i]);
      }
    }
  };
  if (count < k && met < node_limit) {
    for (int i = 0; i < slots; ++i) {
      met_start[i] = ~std::uint64_t{0};
      met_width[i] = 0;
    }
    for (int i = 0; i < met; ++i) add_met(static_cast<std::size_t>(node[i]));
  }

  // The met slot u falls in (slots when past them all) and the remaining
  // weight of the met slots before it.
  auto find_slot = [&](std::uint64_t u, std::uint64_t& before) __attribute__((always_inline)) {
    int slot = 0;
    std::uint64_t running = 0;
    before = 0;
#pragma GCC unroll 8
    for (int i = 0; i < slots; ++i) {
      running += left[i];
      const bool past = u >= running;
      slot += past;
      before = past ? running : before;
    }
    return slot;
  };
  // The expert of node n whose running weight (the `mask` ones taken,
  // counting 0) first passes offset.
  auto scan_node = [&](std::size_t n, std::uint64_t mask, std::uint64_t offset) __attribute__((always_inline)) {
    const std::uint64_t* w = units + n * per_node;
    std::uint64_t acc = 0;
    int index = 0;
#pragma GCC unroll 8
    for (std::size_t j = 0; j < per_node; ++j) {
      acc += w[j] & ((mask >> j & 1) - 1);
      index += acc <= offset;
    }
    return index;
  };

  while (count < k && met < node_limit) {
    std::uint64_t met_left = 0;
#pragma GCC unroll 8
    for (int i = 0; i < slots; ++i) met_left += left[i];
    const std::uint64_t u = below(local.next(), met_left + unmet);
    std::uint64_t before;
    const int slot = find_slot(u, before);
    std::size_t n;
    std::uint64_t mask, offset;
    int target;
    if (slot == slots) {
      // Past the met nodes: u - met_left lands among the unmet nodes.
      std::uint64_t v = u - met_left;
#pragma GCC unroll 8
      for (int i = 0; i < slots; ++i) v += met_start[i] <= v ? met_width[i] : 0;
      // The node v falls in: a bucket of the cumulative weights names the
      // first node it can be, then a short walk (no step for most buckets).
      n = bucket_node[std::min<std::uint64_t>(v >> kBucketShift, kBuckets)];
      while (node_end[n] <= v) ++n;
      target = met;
      mask = 0;
      offset = v - node_start[n];
      add_met(n);
    } else {
      target = slot;
      n = static_cast<std::size_t>(node[slot]);
      mask = taken[slot];
      offset = u - before;
    }
    keep(target, n, scan_node(n, mask, offset));
  }

  // Once node_limit nodes are met (every slot holds one): the same step
  // among their remaining experts only, with nothing unmet to test.
  if (count < k) {
    std::uint64_t total = 0;
    for (int i = 0; i < slots; ++i) total += left[i];
    do {
      const std::uint64_t u = below(local.next(), total);
      std::uint64_t before;
      const int slot = find_slot(u, before);
      const std::uint64_t mask = taken[slot];
      const int n = node[slot];
      const std::uint64_t offset = u - before;
      int index = 0;
      if constexpr (kBitmap) {
        // The running weights of the node's untaken experts, from the
        // tables of its two halves (the high half's after the low half's).
        const std::uint64_t* low = half_running + (static_cast<std::size_t>(n) * 32 + (mask & 15)) * 4;
        const std::uint64_t* high = half_running + (static_cast<std::size_t>(n) * 32 + 16 + (mask >> 4)) * 4;
#pragma GCC unroll 4
        for (std::size_t j = 0; j < 4; ++j) index += (low[j] <= offset) + (low[3] + high[j] <= offset);
      } else {
        index = scan_node(static_cast<std::size_t>(n), mask, offset);
      }
      const int e = n * static_cast<int>(per_node) + index;
      const std::uint64_t weight = units[e];
      left[slot] -= weight;
      taken[slot] |= std::uint64_t{1} << index;
      total -= weight;
      if constexpr (!kBitmap) chosen[count] = e;
      ++count;
    } while (count < k);
  }
  if constexpr (kBitmap) {
    nodes->count = met;
    for (int i = 0; i < slots; ++i) {
      nodes->node[i] = i < met ? node[i] : 0;
      nodes->mask[i] = static_cast<std::uint8_t>(i < met ? taken[i] : 0);
    }
  }
  rng = local;
}

}  // namespace epsim::workloads

namespace epsim::workloads {

namespace {

// Counters are flushed before any can pass 255: a token adds at most 1 to
// a lane.
constexpr std::int32_t kLaneTokens = 255;

// Per mask of a node's 8 experts, one 8-bit lane per group of 2^g
// experts (g = 0..3): 1 if the mask holds any of them. g = 0 spreads the
// mask's bits to bytes; 2^g = experts per rank marks the node's ranks.
struct GroupLanes {
  std::uint64_t lanes[4][256];
  constexpr GroupLanes() : lanes() {
    for (int g = 0; g < 4; ++g) {
      const int size = 1 << g;
      for (int mask = 0; mask < 256; ++mask) {
        for (int group = 0; group * size < 8; ++group)
          lanes[g][mask] |= static_cast<std::uint64_t>((mask >> (group * size) & ((1 << size) - 1)) != 0) << (8 * group);
      }
    }
  }
};
constexpr GroupLanes kGroupLanes;

}  // namespace

int LimitedDraws::draw_source(Rng& rng, std::int32_t tokens, int experts_per_rank, std::int32_t* rank_row,
                              std::int32_t* node_row, std::int32_t* expert_count) const {
  // Per node, 8-bit counters in one 64-bit word, one add per (token, node)
  // instead of one count per expert and rank: lane j of expert_lanes[n]
  // counts expert j of node n, lane r of rank_lanes[n] its rank r. With
  // one expert per rank the two are the same and only the ranks are kept.
  const bool rank_is_expert = experts_per_rank == 1;
  const int ranks_per_node = 8 / experts_per_rank;
  const std::uint64_t* expert_lane = kGroupLanes.lanes[0];
  const std::uint64_t* rank_lane = kGroupLanes.lanes[__builtin_ctz(static_cast<unsigned>(experts_per_rank))];
  std::uint64_t expert_lanes[32] = {}, rank_lanes[32] = {};
  auto flush = [&] {
    for (int n = 0; n < nodes_; ++n) {
      for (int r = 0; r < ranks_per_node; ++r) rank_row[n * ranks_per_node + r] += static_cast<std::int32_t>(rank_lanes[n] >> (8 * r) & 0xff);
      for (int j = 0; j < 8 && !rank_is_expert; ++j) expert_count[n * 8 + j] += static_cast<std::int32_t>(expert_lanes[n] >> (8 * j) & 0xff);
      rank_lanes[n] = expert_lanes[n] = 0;
    }
  };
  Rng local = rng;
  TokenNodes token;
  int most = 0;
  const int slots = slots_;
  for (std::int32_t first = 0; first < tokens; first += kLaneTokens) {
    const std::int32_t last = tokens - first > kLaneTokens ? first + kLaneTokens : tokens;
    for (std::int32_t t = first; t < last; ++t) {
      draw_nodes(local, token);
      most = std::max(most, token.count);
      // Every slot, unused ones (mask 0) adding nothing: no branch on the
      // number of nodes reached.
      for (int i = 0; i < slots; ++i) {
        const auto n = static_cast<std::size_t>(token.node[i]);
        const std::uint8_t mask = token.mask[i];
        node_row[n] += mask != 0;
        rank_lanes[n] += rank_lane[mask];
        if (!rank_is_expert) expert_lanes[n] += expert_lane[mask];
      }
    }
    flush();
  }
  // rank_row started at 0: with one expert per rank it holds the expert counts.
  if (rank_is_expert) {
    for (int e = 0; e < nodes_ * 8; ++e) expert_count[e] += rank_row[e];
  }
  rng = local;
  return most;
}

}  // namespace epsim::workloads
