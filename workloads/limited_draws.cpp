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
// token's experts are a 256-bit mask and its met nodes a 32-bit one, so a
// draw is a few bit operations and whether it is kept (a coin flip under
// skew) costs no mispredicted branch; the exact steps then find a met
// node's untaken running weights in a table per (node, mask of taken
// experts). Otherwise it redraws repeats until its nodes are met or
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
    // Per (node, mask of taken experts): the running weight of its
    // untaken experts, 8 values.
    untaken_running_.reserve(static_cast<std::size_t>(nodes_) * 256 * 8);
    for (int n = 0; n < nodes_; ++n) {
      for (std::uint64_t mask = 0; mask < 256; ++mask) {
        std::uint64_t running = 0;
        for (int j = 0; j < 8; ++j) {
          running += units_[static_cast<std::size_t>(n * 8 + j)] & (0 - (~mask >> j & 1));
          untaken_running_.push_back(running);
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
  // DeepSeek-V3's layout at EP256 (4 nodes of 8 experts) unrolled.
  if (masks_) return slots_ == 4 ? draw_fixed<4, 8, true>(rng, chosen) : draw_fixed<0, 8, true>(rng, chosen);
  if (slots_ == 4 && per_node_ == 8) return draw_fixed<4, 8, false>(rng, chosen);
  draw_fixed<0, 0, false>(rng, chosen);
}

template <int kSlots, int kPerNode, bool kBitmap>
void LimitedDraws::draw_fixed(Rng& rng, int* chosen) const {
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
  const std::uint64_t* untaken_running = untaken_running_.data();
  const auto per_node = static_cast<std::size_t>(kPerNode > 0 ? kPerNode : per_node_);
  const int k = k_, node_limit = node_limit_, max_repeats = repeats_;
  std::uint64_t unmet = total_;
  int met = 0, count = 0;
  Rng local = rng;
  // The mask draws write out[count] whether or not they keep the expert
  // (out has room for one more than k); with them the token's experts go
  // there and are copied to chosen at the end.
  int out[kMaxSlots + 1];
  int* result = kBitmap ? out : chosen;

  // Takes expert `index` of node n into `target` (== met: a new node).
  auto keep = [&](int target, std::size_t n, int index) __attribute__((always_inline)) {
    const bool is_new = target == met;
    const std::uint64_t weight = units[n * per_node + static_cast<std::size_t>(index)];
    left[target] = (is_new ? node_units[n] : left[target]) - weight;
    taken[target] |= std::uint64_t{1} << index;
    node[target] = static_cast<int>(n);
    unmet -= is_new ? node_units[n] : 0;
    met += is_new;
    result[count++] = static_cast<int>(n * per_node) + index;
  };

  // First by weight over all experts, a repeat rejected, then the exact
  // steps below.
  if constexpr (kBitmap) {
    // draws_ alias draws. The token's experts are a 256-bit mask (a load
    // and a store at the drawn expert's word: a short chain, few
    // instructions), its met nodes a 32-bit one; selects by masks, as the
    // compiler turns ?: into branches.
    std::uint64_t word[4] = {0, 0, 0, 0}, met_mask = 0;
    auto try_draw = [&](std::uint32_t random) __attribute__((always_inline)) {
      const std::uint64_t m = std::uint64_t{random} * columns;
      const auto column = static_cast<std::size_t>(m >> 32);
      const std::uint64_t pair = item_alias[column];
      const std::uint64_t item = pair & 0xffffffffULL, alias = pair >> 32;
      const std::uint64_t use_alias = 0 - static_cast<std::uint64_t>((m & 0xffffffffULL) >= threshold[column]);
      const auto e = static_cast<std::size_t>(item ^ ((item ^ alias) & use_alias));
      const std::uint64_t n = e >> 3;
      const std::uint64_t fresh = ~met_mask >> n & 1;
      const std::uint64_t open = static_cast<std::uint64_t>(met < node_limit) | (fresh ^ 1);
      const std::uint64_t held = word[e >> 6] >> (e & 63) & 1;
      const std::uint64_t kept = (held ^ 1) & open & static_cast<std::uint64_t>(count < k);
      word[e >> 6] |= kept << (e & 63);
      met_mask |= (kept & fresh) << n;
      met += static_cast<int>(kept & fresh);
      out[count] = static_cast<int>(e);
      count += static_cast<int>(kept);
    };
    for (int d = 0; d < draws_; d += 2) {
      const std::uint64_t random = local.next();
      try_draw(static_cast<std::uint32_t>(random >> 32));
      try_draw(static_cast<std::uint32_t>(random));
    }
    // The met nodes as slots (in node order): taken experts, weight left.
    int i = 0;
    for (std::uint64_t rest = met_mask; rest != 0; rest &= rest - 1, ++i) {
      const auto n = static_cast<std::size_t>(__builtin_ctzll(rest));
      const std::uint64_t mask = word[n >> 3] >> (n & 7) * 8 & 0xff;
      node[i] = static_cast<int>(n);
      taken[i] = mask;
      left[i] = untaken_running[(n << 8 | mask) << 3 | 7];
      unmet -= node_units[n];
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
        // The running weights of the node's untaken experts, from the table.
        const std::uint64_t* r = untaken_running + ((static_cast<std::uint64_t>(n) << 8 | mask) << 3);
#pragma GCC unroll 8
        for (std::size_t j = 0; j < 8; ++j) index += r[j] <= offset;
      } else {
        index = scan_node(static_cast<std::size_t>(n), mask, offset);
      }
      const int e = n * static_cast<int>(per_node) + index;
      const std::uint64_t weight = units[e];
      left[slot] -= weight;
      taken[slot] |= std::uint64_t{1} << index;
      total -= weight;
      result[count++] = e;
    } while (count < k);
  }
  if constexpr (kBitmap) {
    for (int c = 0; c < k; ++c) chosen[c] = out[c];  // std::copy called memmove
  }
  rng = local;
}

}  // namespace epsim::workloads
