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

// Observed counts per cell against their expected counts (cells never seen
// count 0): the statistic stays below dof + 6 sqrt(2 dof) (its mean and 6
// standard deviations), and each cell within 6 sigma of its mean.
void check_counts(const std::map<std::uint64_t, double>& seen, const std::map<std::uint64_t, double>& expected) {
  double chi2 = 0, worst = 0, draws = 0;
  for (const auto& [cell, mean] : expected) {
    const auto it = seen.find(cell);
    const double n = it == seen.end() ? 0 : it->second;
    chi2 += (n - mean) * (n - mean) / mean;
    worst = std::max(worst, std::abs(n - mean) / std::sqrt(mean));
    draws += n;
  }
  for (const auto& [cell, n] : seen) REQUIRE(expected.count(cell) == 1);  // no impossible cell
  const double dof = static_cast<double>(expected.size()) - 1;
  INFO(expected.size() << " cells, " << draws << " draws: chi-square " << chi2 << " (dof " << dof << "), worst cell "
                       << worst << " sigma");
  CHECK(chi2 < dof + 6 * std::sqrt(2 * dof));
  CHECK(worst < 6);
}

// The same, every cell of `cells` (numbered 0 to cells - 1) equally likely.
void check_uniform(const std::map<std::uint64_t, double>& seen, std::uint64_t cells) {
  double draws = 0;
  for (const auto& [cell, n] : seen) draws += n;
  std::map<std::uint64_t, double> expected;
  for (std::uint64_t c = 0; c < cells; ++c) expected[c] = draws / static_cast<double>(cells);
  check_counts(seen, expected);
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

// One token's experts, as a mask per node; `consistent` says whether its
// ranks and nodes are those of its experts, each counted once, and the
// nodes at most `limit`. (Checked per token in one flag: a Catch assertion
// per expert would cost more than the draws.)
struct Token {
  std::vector<std::uint64_t> masks;
  bool consistent = true;
};

Token draw_one(const NodePatternSampler& sampler, Rng& rng, int experts, int nodes, int per_rank, int limit,
               NodePatternScratch& scratch) {
  std::vector<std::int32_t> ranks(static_cast<std::size_t>(experts / per_rank)), node(static_cast<std::size_t>(nodes)),
      count(static_cast<std::size_t>(experts));
  const int most = sampler.draw_source(rng, 1, ranks.data(), node.data(), count.data(), scratch);
  std::vector<std::int32_t> want_ranks(ranks.size()), want_node(node.size());
  Token t;
  t.masks.assign(static_cast<std::size_t>(nodes), 0);
  const int per_node = experts / nodes;
  for (int e = 0; e < experts; ++e) {
    const std::int32_t c = count[static_cast<std::size_t>(e)];
    t.consistent &= c == 0 || c == 1;
    if (c == 0) continue;
    t.masks[static_cast<std::size_t>(e / per_node)] |= std::uint64_t{1} << (e % per_node);
    want_ranks[static_cast<std::size_t>(e / per_rank)] = 1;
    want_node[static_cast<std::size_t>(e / per_node)] = 1;
  }
  const int reached = std::accumulate(want_node.begin(), want_node.end(), 0);
  t.consistent &= ranks == want_ranks && node == want_node && reached <= limit && most == reached;
  return t;
}

}  // namespace

TEST_CASE("node-pattern subsets of nodes of 17 experts are uniform, tabled or completed one by one",
          "[routing][patterns]") {
  // 3 nodes of 17 experts, one per rank, top-c of 1 node: every token is c
  // experts of one node, each of the 3 C(17, c) sets equally likely; c = 2
  // and 4 come from the table, c = 5 from a 4-subset and one more draw.
  for (int c : {2, 4, 5}) {
    INFO("top-" << c);
    const NodePatternSampler sampler(51, 3, 1, c, 1);
    NodePatternScratch scratch;
    Rng rng(stream_seed(5, static_cast<std::uint64_t>(c)));
    const auto per_node = static_cast<std::uint64_t>(choose(17, c));
    std::map<std::uint64_t, double> seen;
    int inconsistent = 0;
    for (std::uint64_t i = 0; i < 60 * 3 * per_node; ++i) {
      const Token t = draw_one(sampler, rng, 51, 3, 1, 1, scratch);
      inconsistent += !t.consistent;
      for (std::uint64_t n = 0; n < 3; ++n) {
        if (t.masks[n] == 0) continue;
        inconsistent += __builtin_popcountll(t.masks[n]) != c;
        ++seen[n * per_node + subset_rank(t.masks[n])];
      }
    }
    CHECK(inconsistent == 0);
    check_uniform(seen, 3 * per_node);
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
    NodePatternScratch scratch;
    Rng rng(stream_seed(9, static_cast<std::uint64_t>(nodes)));
    const double tokens = 200000;
    auto pattern_key = [](std::vector<int> counts) {
      std::sort(counts.begin(), counts.end(), std::greater<>());
      std::uint64_t key = 0;
      for (int c : counts) key = key * 10 + static_cast<std::uint64_t>(c);
      return key;
    };
    std::map<std::uint64_t, double> expected_patterns;
    std::map<std::uint64_t, std::uint64_t> cell_of;  // pattern -> its cell (itself, or 0: pooled)
    for (const NodePattern& q : patterns) {
      const double mean = q.probability * tokens;
      cell_of[pattern_key(q.counts)] = mean < 5 ? 0 : pattern_key(q.counts);
      expected_patterns[cell_of[pattern_key(q.counts)]] += mean;
    }
    std::map<std::uint64_t, double> seen_patterns, pairs;
    std::vector<std::map<std::uint64_t, double>> subsets(4), holding(5);
    int inconsistent = 0;
    for (double i = 0; i < tokens; ++i) {
      const Token t = draw_one(sampler, rng, experts, nodes, 4, 4, scratch);
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
      check_uniform(holding[static_cast<std::size_t>(c)], static_cast<std::uint64_t>(nodes));
    }
    for (int c = 1; c <= 3; ++c) {
      INFO(c << " experts in a node");
      check_uniform(subsets[static_cast<std::size_t>(c)], static_cast<std::uint64_t>(choose(32, c)));
    }
    check_uniform(pairs, static_cast<std::uint64_t>(choose(32, 2)));
  }
}
