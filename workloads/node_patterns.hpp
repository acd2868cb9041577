// Uniform node-limited routing collapsed by symmetry: a token's "node
// pattern" (how many of its k experts fall in each node it reaches) and the
// exact probability of each pattern. With equal weights, the token's expert
// set is equally likely to be any set with the same pattern, so a token is
// drawn as a pattern, then distinct uniform nodes, then a uniform subset of
// each node's experts of the pattern's size (docs/workload.md).
#pragma once

#include <cstdint>
#include <vector>

#include "workloads/alias_table.hpp"
#include "workloads/rng.hpp"

namespace epsim::workloads {

struct NodePattern {
  std::vector<int> counts;  // experts per reached node, largest first; sums to k
  double probability = 0;
};

// Every pattern of group-limited top-k (docs/workload.md) under equal
// weights: `experts` split evenly over `nodes`, a token keeps the first
// `node_limit` nodes its draws meet, then draws the rest of its k experts
// within them. Probabilities sum to 1 (up to rounding). Requires
// 0 < node_limit < nodes, experts divisible by nodes, and
// node_limit x experts / nodes >= k.
std::vector<NodePattern> uniform_node_patterns(int experts, int nodes, int node_limit, int k);

// Working memory of one job for NodePatternSampler::draw_source.
struct NodePatternScratch {
  std::vector<int> order;                  // a permutation of the nodes
  std::vector<std::uint64_t> expert_lanes;  // per node: 8-bit counters, 8 experts per word
  std::vector<std::uint64_t> rank_lanes;    // per node: 8-bit counters, 8 ranks per word
  // Nodes of 17 to 32 experts: per node, a counter per expert and one per
  // slot of a tabled subset (a subset of fewer experts adds to those).
  std::vector<std::int32_t> expert_counts;
  // Drawn subsets (nodes of more than 32 experts):
  std::vector<std::uint64_t> words;      // a token's first node_limit + k random words
  std::vector<std::size_t> base;         // a token's nodes' first experts, in pattern order
  std::vector<std::uint32_t> local;      // a token's experts within their nodes, by slot
  std::vector<std::uint64_t> increment;  // a token's counter adds, by slot
  std::vector<std::uint64_t> fields;     // per expert: packed expert, rank and node counts
};

// Draws and counts the tokens of one source rank by pattern. Tables depend
// on the layout only, so one instance serves every layer.
class NodePatternSampler {
 public:
  // Whether a node's experts fit one 64-bit mask.
  static bool fits(int experts_per_node) { return experts_per_node <= 64; }

  // Same requirements as uniform_node_patterns, plus fits(experts / nodes)
  // and experts_per_rank dividing experts / nodes.
  NodePatternSampler(int experts, int nodes, int node_limit, int k, int experts_per_rank);

  // Draws `tokens` tokens from `rng` and adds, per token, +1 to
  // rank_row[r] for each distinct rank r, +1 to node_row[n] for each
  // distinct node n, +1 to expert_count[e] for each expert e (indices local
  // to the replica; rank_row starts at 0). Returns the most nodes one token reached.
  int draw_source(Rng& rng, std::int32_t tokens, std::int32_t* rank_row, std::int32_t* node_row,
                  std::int32_t* expert_count, NodePatternScratch& scratch) const;
 private:
  // Nodes of up to kMaxTabled experts draw a subset from a table of all
  // subsets; nodes of up to kMaxWide from a table of the subsets of up to
  // kWideTabled experts (C(32, 4) = 35,960 at most), a larger count adding
  // its other experts one by one; larger nodes draw every expert one by one.
  static constexpr int kMaxTabled = 16, kMaxWide = 32, kWideTabled = 4;
  // Expert counters per node of 17 to 32 experts (NodePatternScratch::expert_counts).
  static constexpr std::size_t kWideStride = kMaxWide + kWideTabled;
  struct Subset {
    std::uint32_t experts, ranks;  // masks within the node
  };
  // A subset of nodes of 17 to 32 experts: its ranks (a mask within the
  // node) and its experts in increasing order, a slot left empty holding
  // per_node + slot (counters nobody reads).
  struct WideSubset {
    std::uint32_t ranks;
    std::uint8_t experts[kWideTabled];
  };
  // Draws tokens [0, tokens) of draw_source, all counters in 8-bit lanes
  // (flushed every kLaneTokens tokens), subsets from the table.
  // kNodeLimit: node_limit when fixed at compile time, else 0; kRanksOnly:
  // one expert per rank and at most 8 ranks per node.
  template <int kNodeLimit, bool kRanksOnly>
  int draw_tabled(Rng& rng, std::int32_t tokens, std::int32_t* rank_row, std::int32_t* node_row,
                  std::int32_t* expert_count, NodePatternScratch& scratch) const;
  // The same for nodes of kMaxTabled + 1 to kMaxWide experts: nodes from
  // the tuple table, subsets of up to kWideTabled experts from the subset
  // table, larger ones completed expert by expert; expert counters of 32
  // bits in scratch.expert_counts, rank counters in 8-bit lanes.
  // kNodeLimit as above; kRankWords: rank lane words per node when fixed
  // at compile time (and several experts per rank), else 0; kTuples:
  // whether the tuple table exists.
  template <int kNodeLimit, int kRankWords, bool kTuples>
  int draw_wide(Rng& rng, std::int32_t tokens, std::int32_t* rank_row, std::int32_t* node_row,
                std::int32_t* expert_count, NodePatternScratch& scratch) const;
  // draw_source for nodes of more than kMaxWide experts: experts drawn one
  // by one, each counted by one add to a packed per-expert counter.
  int draw_drawn(Rng& rng, std::int32_t tokens, std::int32_t* rank_row, std::int32_t* node_row,
                 std::int32_t* expert_count, NodePatternScratch& scratch) const;
  // Adds the packed counters of draw_drawn to the rows and clears them.
  void spread_fields(std::vector<std::uint64_t>& fields, std::int32_t* rank_row, std::int32_t* node_row,
                     std::int32_t* expert_count) const;
  std::uint64_t ranks_of(std::uint64_t experts) const;
  // Adds the 8-bit lane counters to the rows and clears them.
  void flush(NodePatternScratch& scratch, std::int32_t* rank_row, std::int32_t* expert_count) const;

  int nodes_, per_node_, ranks_per_node_, node_limit_, k_;
  int expert_words_, rank_words_;  // 64-bit lane words per node
  bool rank_is_expert_;            // one expert per rank: rank counts are the expert counts
  AliasTable patterns_;
  std::vector<int> pattern_counts_;  // node_limit per pattern, largest first, 0-padded
  std::vector<int> pattern_reached_;  // nonzero counts per pattern
  std::vector<std::uint32_t> subset_start_, subset_size_;  // per tabled subset size c
  std::vector<Subset> subsets_;  // grouped by size, each size in increasing order of masks
  std::vector<WideSubset> wide_subsets_;  // the same for nodes of 17 to 32 experts
  // Nodes of 17 to 32 experts: every ordered tuple of node_limit distinct
  // nodes, lexicographic, node_limit entries each; empty (tuple_count_ 0)
  // when there are more than kMaxTuples.
  static constexpr std::uint64_t kMaxTuples = 4096;
  std::uint64_t tuple_count_ = 0;
  std::vector<std::uint16_t> tuple_nodes_;
  std::vector<std::uint64_t> subset_lanes_;  // per subset: its ranks as 8-bit lanes (first 8 ranks)
  // Per pattern and node: the table entries of its subset size (at most
  // the largest tabled one), whether it has experts, and how many experts
  // it draws beyond the table's subset.
  struct Step {
    std::uint32_t start, size;
    std::int32_t reached, extra;
  };
  std::vector<Step> steps_;
  std::vector<std::uint64_t> rank_bit_;  // per expert of a node: the bit of its rank in the node
  // Drawn subsets, per pattern: the word (index in the token's first
  // node_limit + k) of each node and of each of the k expert slots, the
  // slot's node, and all ones where a slot continues the previous slot's node.
  std::vector<std::uint32_t> node_word_, slot_word_, slot_node_;
  std::vector<std::uint64_t> slot_keep_;
  std::vector<std::uint64_t> slot_increment_;  // per pattern and slot: its counter add but the rank field
  std::vector<std::uint64_t> rank_span_;  // per expert of a node: the experts of its rank
  std::vector<std::uint8_t> rank_of_local_;  // per expert of a node: its rank in the node
  std::vector<std::uint64_t> rank_byte_;  // [byte * 256 + b]: ranks of the experts of b at that byte of a node's mask
};

}  // namespace epsim::workloads
