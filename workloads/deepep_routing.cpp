// DeepEP's benchmark routing, token by token, into a traffic matrix.
#include "workloads/deepep_routing.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "workloads/rng.hpp"

namespace epsim::workloads {

namespace {

void check(bool ok, const char* key, const std::string& problem) {
  if (!ok) throw InputError(SourceLocation{"deepep routing"}, key, problem);
}

void check_spec(const DeepEpRoutingSpec& s) {
  check(s.ranks >= 1, "ranks", "expected >= 1, got " + std::to_string(s.ranks));
  check(s.ranks_per_node >= 1 && s.ranks % s.ranks_per_node == 0, "ranks_per_node",
        "expected a divisor of ranks (" + std::to_string(s.ranks) + "), got " + std::to_string(s.ranks_per_node));
  check(s.experts >= 1 && s.experts % s.ranks == 0, "experts",
        "expected a multiple of ranks (" + std::to_string(s.ranks) + "), got " + std::to_string(s.experts));
  check(s.group_limit >= 1, "group_limit", "expected >= 1, got " + std::to_string(s.group_limit));
  const int nodes = s.ranks / s.ranks_per_node;
  const int reachable = std::min(nodes, s.group_limit) * (s.experts / nodes);
  check(s.top_k >= 1 && s.top_k <= reachable, "top_k",
        "expected 1.." + std::to_string(reachable) + " (experts of the reachable nodes), got " +
            std::to_string(s.top_k));
  check(s.tokens_per_rank >= 0, "tokens_per_rank", "expected >= 0, got " + std::to_string(s.tokens_per_rank));
}

}  // namespace

TrafficMatrix sample_deepep_traffic(const DeepEpRoutingSpec& s) {
  check_spec(s);
  const int nodes = s.ranks / s.ranks_per_node;
  const int per_node = s.experts / nodes;
  const int per_rank = s.experts / s.ranks;
  const int groups = std::min(nodes, s.group_limit);
  TrafficMatrix out;
  out.ranks = s.ranks;
  out.ranks_per_node = s.ranks_per_node;
  out.tokens.assign(static_cast<std::size_t>(s.ranks) * s.ranks, 0);
  out.node_tokens.assign(static_cast<std::size_t>(s.ranks) * nodes, 0);

  std::vector<std::uint64_t> score(static_cast<std::size_t>(s.experts));
  std::vector<std::pair<std::uint64_t, int>> group_best(static_cast<std::size_t>(nodes));
  std::vector<std::pair<std::uint64_t, int>> candidates;
  std::vector<int> rank_stamp(static_cast<std::size_t>(s.ranks), -1);
  std::vector<int> node_stamp(static_cast<std::size_t>(nodes), -1);
  for (int src = 0; src < s.ranks; ++src) {
    // One stream per source rank: a rank's tokens do not depend on EP order of drawing.
    Rng rng(stream_seed(s.seed, static_cast<std::uint64_t>(src)));
    std::fill(rank_stamp.begin(), rank_stamp.end(), -1);
    std::fill(node_stamp.begin(), node_stamp.end(), -1);
    for (int token = 0; token < s.tokens_per_rank; ++token) {
      for (std::uint64_t& x : score) x = rng.next();
      // Groups are nodes: keep the `groups` nodes whose best expert scores highest.
      for (int n = 0; n < nodes; ++n) {
        const auto first = score.begin() + static_cast<std::ptrdiff_t>(n) * per_node;
        group_best[static_cast<std::size_t>(n)] = {*std::max_element(first, first + per_node), n};
      }
      std::partial_sort(group_best.begin(), group_best.begin() + groups, group_best.end(),
                        [](const auto& a, const auto& b) { return a.first > b.first; });
      candidates.clear();
      for (int g = 0; g < groups; ++g) {
        const int n = group_best[static_cast<std::size_t>(g)].second;
        for (int e = n * per_node; e < (n + 1) * per_node; ++e)
          candidates.emplace_back(score[static_cast<std::size_t>(e)], e);
      }
      std::partial_sort(candidates.begin(), candidates.begin() + s.top_k, candidates.end(),
                        [](const auto& a, const auto& b) { return a.first > b.first; });
      for (int k = 0; k < s.top_k; ++k) {
        const int dst = candidates[static_cast<std::size_t>(k)].second / per_rank;
        const int node = dst / s.ranks_per_node;
        // Stamps count each token once per destination rank and node.
        if (rank_stamp[static_cast<std::size_t>(dst)] != token) {
          rank_stamp[static_cast<std::size_t>(dst)] = token;
          ++out.tokens[static_cast<std::size_t>(src) * s.ranks + dst];
        }
        if (node_stamp[static_cast<std::size_t>(node)] != token) {
          node_stamp[static_cast<std::size_t>(node)] = token;
          ++out.node_tokens[static_cast<std::size_t>(src) * nodes + node];
        }
      }
    }
  }
  return out;
}

}  // namespace epsim::workloads
