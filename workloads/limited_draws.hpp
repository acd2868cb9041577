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

  // Whether draw_nodes and draw_source serve this layout: nodes of 8
  // experts, at most 32 nodes (DeepSeek-V3 at EP256). draw() then draws
  // by draw_nodes (the same random words, experts in node order).
  bool by_masks() const { return masks_; }

  // One token's experts by node (by_masks()): its nodes (count of them,
  // at most min(k, node_limit)), each with the mask of its experts taken;
  // the slots past count hold node 0 with mask 0.
  struct TokenNodes {
    int count = 0;
    int node[32];
    std::uint8_t mask[32];
  };
  void draw_nodes(Rng& rng, TokenNodes& nodes) const;

  // Draws `tokens` tokens (by_masks()) and adds, per token, +1 to
  // rank_row[r] for each distinct rank r (experts_per_rank dividing 8),
  // +1 to node_row[n] for each distinct node n, +1 to expert_count[e] for
  // each expert e (rank_row starts at 0, as NodePatternSampler::draw_source
  // has it). Returns the most nodes one token reached.
  int draw_source(Rng& rng, std::int32_t tokens, int experts_per_rank, std::int32_t* rank_row, std::int32_t* node_row,
                  std::int32_t* expert_count) const;

  // Weights as integers: a weight is its share of the layer's total in
  // units of 2^-kUnitBits (a positive weight at least one unit), so sums
  // and remainders are exact and every draw is one integer uniform.
  static constexpr int kUnitBits = 48;

 private:
  // draw() for kSlots slots and nodes of kPerNode experts (0: the layout's),
  // into chosen. kBitmap: draw_nodes, into nodes: the fixed alias draws over
  // experts and nodes as bit masks (masks_), kDraws of them when fixed
  // at compile time (at most k), else draws_.
  template <int kSlots, int kPerNode, bool kBitmap, int kDraws = 0>
  void draw_fixed(Rng& rng, int* chosen, TokenNodes* nodes) const;

  int per_node_, nodes_, node_limit_, k_, slots_;  // slots_: nodes a token can meet, min(k, node_limit)
  bool masks_;    // nodes of 8, at most 32 nodes: a token's experts are a byte per node
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
  // With masks_: the alias table over all experts packed, one word per
  // column (draw_fixed); per (node, half of its experts, mask of the half's
  // taken experts) the running weight of the half's untaken experts, 4
  // values at ((node * 2 + half) * 16 + mask) * 4 (32 KiB at 32 nodes).
  std::vector<std::uint64_t> mask_alias_;
  std::vector<std::uint64_t> half_running_;
  // The cumulative weight in buckets of 2^kBucketShift units (the total,
  // 2^kUnitBits plus rounding, in kBuckets of them and one more).
  static constexpr int kBucketBits = 12;
  static constexpr int kBucketShift = kUnitBits - kBucketBits;
  static constexpr std::uint64_t kBuckets = std::uint64_t{1} << kBucketBits;
  std::vector<std::uint32_t> bucket_node_;  // per bucket: the first node ending after its start
  std::uint64_t total_ = 0;
};

}  // namespace epsim::workloads
