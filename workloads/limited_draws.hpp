// Group-limited top-k draws for skewed weights (any weights, in fact):
// alias draws with repeats redrawn while few experts are taken, then exact
// steps that each take one new expert, with no rejection
// (docs/workload.md, "The routing sampler").
#pragma once

#include <cstdint>
#include <vector>

#include "workloads/alias_table.hpp"
#include "workloads/rng.hpp"

namespace epsim::workloads {

class LimitedDraws {
 public:
  // Whether a node's experts fit the 64-bit masks of taken experts.
  static bool fits(int experts_per_node) { return experts_per_node <= 64; }

  // `weights` per expert (>= 0), split into nodes of `per_node` (fits());
  // a token keeps the first `node_limit` nodes it meets and draws `k`
  // experts. The loader's check must hold: the node_limit weakest nodes
  // with any weight hold at least k experts of positive weight. A token
  // first draws by alias table, rejecting repeats, then by exact steps:
  // with nodes of 8 and at most 32 nodes, a fixed `rejection` alias draws
  // (rounded up to even; default kDraws); otherwise until its nodes are
  // met or `rejection` repeats (default kRepeats). Tests set 0 to run exact
  // steps only; the distribution is the same whatever `rejection`.
  static constexpr int kDraws = 8;
  static constexpr int kRepeats = 16;
  LimitedDraws(const std::vector<double>& weights, int per_node, int node_limit, int k, int rejection = -1);

  // Fills chosen[0..k) with one token's distinct experts.
  void draw(Rng& rng, int* chosen) const;

  // Weights as integers: a weight is its share of the layer's total in
  // units of 2^-kUnitBits (a positive weight at least one unit), so sums
  // and remainders are exact and every draw is one integer uniform.
  static constexpr int kUnitBits = 48;

 private:
  // draw() for kSlots slots and nodes of kPerNode experts (0: the layout's).
  // kBitmap: the fixed alias draws over experts and nodes as bit masks (masks_).
  template <int kSlots, int kPerNode, bool kBitmap>
  void draw_fixed(Rng& rng, int* chosen) const;

  int per_node_, nodes_, node_limit_, k_, slots_;  // slots_: nodes a token can meet, min(k, node_limit)
  bool masks_;    // nodes of 8, at most 32 nodes: a token's experts fit a 256-bit mask
  int repeats_;   // otherwise: repeats before the exact steps
  int draws_;     // with masks_: alias draws per token before the exact steps (even)
  // An alias table over all experts (AliasTable's, copied out so that the
  // draw loop reads it through local pointers).
  std::vector<std::uint64_t> all_threshold_;
  std::vector<std::uint64_t> all_item_alias_;  // item | alias << 32
  std::vector<std::uint64_t> units_;    // per expert
  std::vector<std::uint64_t> node_units_;  // per node: sum of its experts' units
  std::vector<std::uint64_t> node_start_;  // per node: units of the nodes before it
  std::vector<std::uint64_t> node_end_;    // node_start_ + node_units_
  // With masks_: per (node, mask of its taken experts), the running weight
  // of its untaken experts, 8 values, at ((node << 8) | mask) << 3.
  std::vector<std::uint64_t> untaken_running_;
  // The cumulative weight in buckets of 2^kBucketShift units (the total,
  // 2^kUnitBits plus rounding, in kBuckets of them and one more).
  static constexpr int kBucketBits = 12;
  static constexpr int kBucketShift = kUnitBits - kBucketBits;
  static constexpr std::uint64_t kBuckets = std::uint64_t{1} << kBucketBits;
  std::vector<std::uint32_t> bucket_node_;  // per bucket: the first node ending after its start
  std::uint64_t total_ = 0;
};

}  // namespace epsim::workloads
