// The node-pattern sampler's subsets in nodes of 17 to 32 experts, token by
// token against their exact law: given its pattern, a token's experts in a
// node are a uniform subset of the pattern's size, whether the subset comes
// from the table (up to 4 experts) or from it and expert-by-expert draws
// (5 and more). Chi-square over every possible cell, plus a bound on each
// cell, so that one missing or doubled subset fails too.
#include <algorithm>
#include <cmath>
#include <functional>
#include <cstdint>
#include <map>
#include <numeric>
#include <vector>

#include <catch2/catch.hpp>

#include "workloads/node_patterns.hpp"

using namespace epsim::workloads;

namespace {

double choose(int n, int c) {
  double r = 1;
  for (int i = 0; i < c; ++i) r = r * (n - i) / (i + 1);
  return r;
}

// Observed counts per cell against their expected counts: the statistic
// stays below dof + 6 sqrt(2 dof) (its mean and 6 standard deviations),
// and each cell within 6 sigma of its mean.
void check_counts(const std::vector<double>& seen, const std::vector<double>& expected) {
  REQUIRE(seen.size() == expected.size());
  double chi2 = 0, worst = 0, draws = 0, cells = 0, impossible = 0;
  for (std::size_t cell = 0; cell < seen.size(); ++cell) {
    const double n = seen[cell], mean = expected[cell];
    draws += n;
    if (mean == 0) {  // a cell that cannot occur (an empty pool)
      impossible += n;
      continue;
    }
    chi2 += (n - mean) * (n - mean) / mean;
    worst = std::max(worst, std::abs(n - mean) / std::sqrt(mean));
    ++cells;
  }
  CHECK(impossible == 0);
  const double dof = cells - 1;
  INFO(cells << " cells, " << draws << " draws: chi-square " << chi2 << " (dof " << dof << "), worst cell "
                   << worst << " sigma");
  CHECK(chi2 < dof + 6 * std::sqrt(2 * dof));
  CHECK(worst < 6);
}

// The same, every cell equally likely.
void check_uniform(const std::vector<double>& seen) {
  const double draws = std::accumulate(seen.begin(), seen.end(), 0.0);
  check_counts(seen, std::vector<double>(seen.size(), draws / static_cast<double>(seen.size())));
}

// The rank of a c-subset of {0..m-1} in the lexicographic order of masks
// (combinatorial number system): cells 0 to C(m, c) - 1.
std::uint64_t subset_rank(std::uint64_t mask) {
  std::uint64_t rank = 0;
  int i = 0;
  for (int e = 0; e < 64; ++e)
    if (mask >> e & 1) rank += static_cast<std::uint64_t>(choose(e, ++i));
  return rank;
}

// Draws one token at a time: its experts as a mask per node, and whether
// its ranks and nodes are those of its experts, each counted once, and the
// nodes at most `limit` (one flag per token: a Catch assertion per expert
// would cost more than the draws).
struct Token {
  std::vector<std::uint64_t> masks;
  bool consistent = true;
};

class TokenDrawer {
 public:
  TokenDrawer(const NodePatternSampler& sampler, int experts, int nodes, int per_rank, int limit)
      : sampler_(sampler), experts_(experts), nodes_(nodes), per_rank_(per_rank), limit_(limit) {}

  const Token& draw(Rng& rng) {
    ranks_.assign(static_cast<std::size_t>(experts_ / per_rank_), 0);
    node_.assign(static_cast<std::size_t>(nodes_), 0);
    count_.assign(static_cast<std::size_t>(experts_), 0);
    want_ranks_.assign(ranks_.size(), 0);
    want_node_.assign(node_.size(), 0);
    const int most = sampler_.draw_source(rng, 1, ranks_.data(), node_.data(), count_.data(), scratch_);
    token_.masks.assign(static_cast<std::size_t>(nodes_), 0);
    token_.consistent = true;
    const int per_node = experts_ / nodes_;
    for (int e = 0; e < experts_; ++e) {
      const std::int32_t c = count_[static_cast<std::size_t>(e)];
      token_.consistent &= c == 0 || c == 1;
      if (c == 0) continue;
      token_.masks[static_cast<std::size_t>(e / per_node)] |= std::uint64_t{1} << (e % per_node);
      want_ranks_[static_cast<std::size_t>(e / per_rank_)] = 1;
      want_node_[static_cast<std::size_t>(e / per_node)] = 1;
    }
    const int reached = std::accumulate(want_node_.begin(), want_node_.end(), 0);
    token_.consistent &= ranks_ == want_ranks_ && node_ == want_node_ && reached <= limit_ && most == reached;
    return token_;
  }

 private:
  const NodePatternSampler& sampler_;
  int experts_, nodes_, per_rank_, limit_;
  NodePatternScratch scratch_;
  std::vector<std::int32_t> ranks_, node_, count_, want_ranks_, want_node_;
  Token token_;
};

}  // namespace

TEST_CASE("node-pattern subsets of nodes of 17 experts are uniform, tabled or completed one by one",
          "[routing][patterns]") {
  // 3 nodes of 17 experts, one per rank, top-c of 1 node: every token is c
  // experts of one node, each of the 3 C(17, c) sets equally likely; c = 2
  // and 4 come from the table, c = 5 from a 4-subset and one more draw.
  for (int c : {2, 4, 5}) {
    INFO("top-" << c);
    const NodePatternSampler sampler(51, 3, 1, c, 1);
    TokenDrawer drawer(sampler, 51, 3, 1, 1);
    Rng rng(stream_seed(5, static_cast<std::uint64_t>(c)));
    const auto per_node = static_cast<std::uint64_t>(choose(17, c));
    std::vector<double> seen(3 * per_node);
    int inconsistent = 0;
    for (std::uint64_t i = 0; i < 60 * 3 * per_node; ++i) {
      const Token& t = drawer.draw(rng);
      inconsistent += !t.consistent;
      for (std::uint64_t n = 0; n < 3; ++n) {
        if (t.masks[n] == 0) continue;
        inconsistent += __builtin_popcountll(t.masks[n]) != c;
        ++seen[n * per_node + subset_rank(t.masks[n])];
      }
    }
    CHECK(inconsistent == 0);
    check_uniform(seen);
  }
}

TEST_CASE("node-pattern tokens in nodes of 32 experts: patterns at their exact odds, uniform nodes and subsets",
          "[routing][patterns]") {
  // DeepSeek-V3's EP64 draw, top-8 of 4 nodes of 32 experts, 4 per rank,
  // on 5 nodes (the table of node tuples) and on 10 (more than 4,096
  // tuples: nodes by Fisher-Yates). Patterns against their exact
  // probabilities (those expected fewer than 5 times pooled in one cell);
  // for each count c <= 4, how often each node holds c experts against
  // uniform over the nodes; each node's subset of c experts against
  // uniform over the C(32, c) subsets for c = 1 to 3 (tabled), and for
  // c >= 5 (a tabled 4-subset completed one by one; C(32, 5) subsets are
  // too many to count) each of its pairs against uniform over the C(32, 2)
  // pairs.
  for (int nodes : {5, 10}) {
    INFO(nodes << " nodes");
    const int experts = 32 * nodes;
    const std::vector<NodePattern> patterns = uniform_node_patterns(experts, nodes, 4, 8);
    const NodePatternSampler sampler(experts, nodes, 4, 8, 4);
    TokenDrawer drawer(sampler, experts, nodes, 4, 4);
    Rng rng(stream_seed(9, static_cast<std::uint64_t>(nodes)));
    const double tokens = 200000;
    auto pattern_key = [](std::vector<int> counts) {
      std::sort(counts.begin(), counts.end(), std::greater<>());
      std::uint64_t key = 0;
      for (int c : counts) key = key * 10 + static_cast<std::uint64_t>(c);
      return key;
    };
    std::vector<double> expected_patterns{0};  // cell 0: the patterns expected fewer than 5 times
    std::map<std::uint64_t, std::size_t> cell_of;  // pattern -> its cell
    for (const NodePattern& q : patterns) {
      const double mean = q.probability * tokens;
      if (mean >= 5) expected_patterns.push_back(0);
      cell_of[pattern_key(q.counts)] = mean < 5 ? 0 : expected_patterns.size() - 1;
      expected_patterns[cell_of[pattern_key(q.counts)]] += mean;
    }
    std::vector<double> seen_patterns(expected_patterns.size()), pairs(static_cast<std::size_t>(choose(32, 2)));
    std::vector<std::vector<double>> subsets, holding(5, std::vector<double>(static_cast<std::size_t>(nodes)));
    for (int c = 0; c <= 3; ++c) subsets.emplace_back(static_cast<std::size_t>(choose(32, c)));
    int inconsistent = 0;
    for (double i = 0; i < tokens; ++i) {
      const Token& t = drawer.draw(rng);
      inconsistent += !t.consistent;
      std::vector<int> counts;
      for (std::size_t n = 0; n < t.masks.size(); ++n) {
        const std::uint64_t mask = t.masks[n];
        const int c = __builtin_popcountll(mask);
        if (c == 0) continue;
        counts.push_back(c);
        if (c <= 4) ++holding[static_cast<std::size_t>(c)][n];
        if (c <= 3) ++subsets[static_cast<std::size_t>(c)][subset_rank(mask)];
        if (c < 5) continue;
        for (int a = 0; a < 32; ++a)
          for (int b = a + 1; b < 32; ++b)
            if ((mask >> a & 1) && (mask >> b & 1)) ++pairs[subset_rank(std::uint64_t{1} << a | std::uint64_t{1} << b)];
      }
      const auto cell = cell_of.find(pattern_key(counts));
      inconsistent += std::accumulate(counts.begin(), counts.end(), 0) != 8 || cell == cell_of.end();
      if (cell != cell_of.end()) ++seen_patterns[cell->second];
    }
    CHECK(inconsistent == 0);
    check_counts(seen_patterns, expected_patterns);
    for (int c = 1; c <= 4; ++c) {
      INFO("nodes holding " << c << " experts");
      check_uniform(holding[static_cast<std::size_t>(c)]);
    }
    for (int c = 1; c <= 3; ++c) {
      INFO(c << " experts in a node");
      check_uniform(subsets[static_cast<std::size_t>(c)]);
    }
    check_uniform(pairs);
  }
}
