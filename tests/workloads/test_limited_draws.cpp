// LimitedDraws against the exact law of group-limited top-k: the
// probability of every expert set, computed by running the sequential
// draw (by weight without replacement, only in the met nodes once
// node_limit are met) over every taken set, for the rejection phase, the
// exact steps alone, and the mix; for nodes of up to 64 experts and for
// nodes of 8 (fixed alias draws over node masks, table-driven exact steps,
// DeepSeek-V3's top-8 of 4 nodes unrolled).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <catch2/catch.hpp>

#include "workloads/limited_draws.hpp"

using namespace epsim::workloads;

namespace {

using Sets = std::map<std::vector<int>, double>;

// The law by dynamic programming over taken sets: the next expert's law
// depends only on the set taken so far (which also gives the met nodes), so
// each set's probability after j draws is summed over every order once.
Sets exact_sets(const std::vector<double>& w, int per_node, int limit, int k) {
  Sets level{{std::vector<int>{}, 1.0}};
  for (int j = 0; j < k; ++j) {
    Sets next;
    for (const auto& [taken, p] : level) {
      std::set<int> met;
      for (int e : taken) met.insert(e / per_node);
      auto active = [&](int e) {
        const bool open = static_cast<int>(met.size()) < limit || met.count(e / per_node) > 0;
        return open && std::find(taken.begin(), taken.end(), e) == taken.end();
      };
      double total = 0;
      for (int e = 0; e < static_cast<int>(w.size()); ++e)
        if (active(e)) total += w[static_cast<std::size_t>(e)];
      for (int e = 0; e < static_cast<int>(w.size()); ++e) {
        if (!active(e) || w[static_cast<std::size_t>(e)] <= 0) continue;
        std::vector<int> grown = taken;
        grown.insert(std::upper_bound(grown.begin(), grown.end(), e), e);
        next[grown] += p * w[static_cast<std::size_t>(e)] / total;
      }
    }
    level = std::move(next);
  }
  return level;
}

// Draws `tokens` tokens and checks every set's count against the exact
// probability within 5 sigma (and sets of probability 0 never drawn).
void check_against_exact(const std::vector<double>& w, int per_node, int limit, int k, int rejection) {
  const Sets exact = exact_sets(w, per_node, limit, k);
  double total = 0;
  for (const auto& [set, p] : exact) total += p;
  REQUIRE(total == Approx(1.0).epsilon(1e-12));
  const LimitedDraws draws(w, per_node, limit, k, rejection);
  Rng rng(12345);
  const int tokens = 200000;
  std::map<std::vector<int>, int> counts;
  std::vector<int> chosen(static_cast<std::size_t>(k));
  for (int t = 0; t < tokens; ++t) {
    draws.draw(rng, chosen.data());
    std::vector<int> sorted = chosen;
    std::sort(sorted.begin(), sorted.end());
    ++counts[sorted];
  }
  for (const auto& [set, count] : counts) {
    INFO("set starting " << set[0] << " drawn " << count << " times");
    CHECK(exact.count(set) == 1);  // distinct experts, within the limit, positive weights
  }
  for (const auto& [set, p] : exact) {
    const double mean = tokens * p, sigma = std::sqrt(tokens * p * (1 - p));
    const auto it = counts.find(set);
    const double got = it == counts.end() ? 0 : it->second;
    INFO("rejection " << rejection << ", set {" << set[0] << ", " << set[1] << ", ...}: drawn " << got << ", expected "
                    << mean);
    CHECK(std::abs(got - mean) <= 5 * sigma + 1);
  }
}

}  // namespace

TEST_CASE("limited draws have the exact set probabilities of group-limited top-k", "[routing][limited]") {
  // Zipf-like weights, 4 nodes of 3, limit 2, top-3: the first node holds
  // the heaviest experts, so repeats and light leftovers are common.
  std::vector<double> zipf;
  for (int e = 0; e < 12; ++e) zipf.push_back(1.0 / (e + 1));
  // 6 nodes of 2 with zero weights (node 0 has one drawable expert), limit 3, top-4.
  const std::vector<double> mixed{5, 0, 1, 2, 0.5, 3, 1, 1, 4, 0.25, 2, 0};
  for (int repeats : {0, 1, LimitedDraws::kRepeats}) {
    check_against_exact(zipf, 3, 2, 3, repeats);
    check_against_exact(mixed, 2, 3, 4, repeats);
  }
}

TEST_CASE("limited draws with a limit beyond k never bind and draw by weight over all experts", "[routing][limited]") {
  // Limit 5 >= k = 3 over 6 nodes: the law is sequential sampling without
  // replacement over all 12 experts (exact_sets with limit k says the same).
  std::vector<double> w;
  for (int e = 0; e < 12; ++e) w.push_back(1.0 + (e % 5));
  check_against_exact(w, 2, 5, 3, 0);
  check_against_exact(w, 2, 5, 3, LimitedDraws::kRepeats);
}

TEST_CASE("limited draws in nodes of 8 (bit masks) have the exact set probabilities", "[routing][limited]") {
  // 5 nodes of 8, limit 4, top-6 (4 slots, as DeepSeek-V3 at EP256): node 0
  // holds 8 heavy experts (zipf-like), the others 1-2 of positive weight, so
  // tokens meet 4 nodes and then draw in them, and zero weights are skipped.
  std::vector<double> w(40, 0.0);
  for (int e = 0; e < 8; ++e) w[static_cast<std::size_t>(e)] = 1.0 / (e + 1);
  w[8] = 0.3;
  w[13] = 0.1;
  w[17] = 0.2;
  w[26] = 0.15;
  w[31] = 0.05;
  w[35] = 0.25;
  // 3 nodes of 8, limit 2, top-3 (2 slots).
  std::vector<double> small(24, 0.0);
  for (int e = 0; e < 8; ++e) small[static_cast<std::size_t>(e)] = 1.0 / (e + 1);
  small[9] = 0.4;
  small[12] = 0.2;
  small[20] = 0.3;
  small[23] = 0.1;
  for (int rejection : {0, 2, LimitedDraws::kDraws, 24}) {
    check_against_exact(w, 8, 4, 6, rejection);
    check_against_exact(small, 8, 2, 3, rejection);
  }
  // Top-8 (DeepSeek-V3's k: the unrolled draws, 8 of them with no test of
  // room, then the steps): node 0 holds 4 heavy experts, nodes 1-4 two
  // each, so tokens often meet 4 nodes and then draw within them.
  std::vector<double> top8(40, 0.0);
  for (int e = 0; e < 4; ++e) top8[static_cast<std::size_t>(e)] = 1.0 / (e + 1);
  for (int n = 1; n < 5; ++n) {
    top8[static_cast<std::size_t>(8 * n + n)] = 0.1 * n;
    top8[static_cast<std::size_t>(8 * n + 7)] = 0.05;
  }
  for (int rejection : {0, LimitedDraws::kDraws}) check_against_exact(top8, 8, 4, 8, rejection);
}

TEST_CASE("limited draws count a source's tokens by node lanes as token by token", "[routing][limited]") {
  // 32 nodes of 8 zipf-1 experts, top-8, limit 4 (DeepSeek-V3 at EP256),
  // 1,000 tokens (past the 255-token lane flush), with 1, 2 and 8 experts
  // per rank: draw_source's counts equal those of the same tokens drawn
  // one by one (the same random stream) and counted expert by expert.
  std::vector<double> w;
  for (int e = 0; e < 256; ++e) w.push_back(1.0 / (e + 1));
  const LimitedDraws draws(w, 8, 4, 8);
  REQUIRE(draws.by_masks());
  const int tokens = 1000;
  for (int per_rank : {1, 2, 8}) {
    const auto ranks = static_cast<std::size_t>(256 / per_rank);
    std::vector<std::int32_t> rank_row(ranks, 0), node_row(32, 0), experts(256, 0);
    Rng rng(7);
    const int most = draws.draw_source(rng, tokens, per_rank, rank_row.data(), node_row.data(), experts.data());

    std::vector<std::int32_t> want_ranks(ranks, 0), want_nodes(32, 0), want_experts(256, 0);
    Rng again(7);
    int want_most = 0, picks = 0;
    std::vector<int> chosen(8);
    for (int t = 0; t < tokens; ++t) {
      draws.draw(again, chosen.data());
      std::set<int> token_ranks, token_nodes;
      for (int e : chosen) {
        ++want_experts[static_cast<std::size_t>(e)];
        token_ranks.insert(e / per_rank);
        token_nodes.insert(e / 8);
      }
      for (int r : token_ranks) ++want_ranks[static_cast<std::size_t>(r)];
      for (int n : token_nodes) ++want_nodes[static_cast<std::size_t>(n)];
      want_most = std::max(want_most, static_cast<int>(token_nodes.size()));
      picks += static_cast<int>(chosen.size());
    }
    INFO("experts per rank " << per_rank);
    CHECK(rank_row == want_ranks);
    CHECK(node_row == want_nodes);
    CHECK(experts == want_experts);
    CHECK(most == 4);
    CHECK(most == want_most);
    CHECK(picks == 8 * tokens);
    CHECK(again.next() == rng.next());  // the same words drawn
  }
}
