// Rank groups by enumeration of the two decompositions, and layer splits.
#include "workloads/parallel_layout.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace epsim::workloads {

const char* to_string(GroupKind kind) {
  switch (kind) {
    case GroupKind::kTensor: return "tp";
    case GroupKind::kData: return "dp";
    case GroupKind::kPipeline: return "pp";
    case GroupKind::kExpert: return "ep";
    case GroupKind::kExpertTensor: return "etp";
    case GroupKind::kExpertData: return "edp";
  }
  return "?";
}

ParallelLayout::Coords ParallelLayout::coords(int rank) const {
  Coords c;
  c.tp = rank % tp;
  c.dp = rank / tp % dp;
  c.pp = rank / stage_ranks();
  c.etp = rank % etp;
  c.ep = rank / etp % ep;
  c.edp = rank / (etp * ep) % edp();
  return c;
}

std::vector<std::vector<int>> ParallelLayout::groups(GroupKind kind) const {
  std::vector<std::vector<int>> out;
  // Each group: the ranks whose coordinates differ only in `kind`'s dimension.
  auto collect = [&](int outer_a, int outer_b, int inner, auto rank_of) {
    for (int b = 0; b < outer_b; ++b)
      for (int a = 0; a < outer_a; ++a) {
        std::vector<int> g;
        for (int i = 0; i < inner; ++i) g.push_back(rank_of(a, b, i));
        std::sort(g.begin(), g.end());
        out.push_back(std::move(g));
      }
  };
  switch (kind) {
    case GroupKind::kTensor:
      collect(dp, pp, tp, [&](int d, int p, int t) { return dense_rank(t, d, p); });
      break;
    case GroupKind::kData:
      collect(tp, pp, dp, [&](int t, int p, int d) { return dense_rank(t, d, p); });
      break;
    case GroupKind::kPipeline:
      collect(tp, dp, pp, [&](int t, int d, int p) { return dense_rank(t, d, p); });
      break;
    case GroupKind::kExpertTensor:
      collect(ep * edp(), pp, etp, [&](int e, int p, int t) { return expert_rank(t, e % ep, e / ep, p); });
      break;
    case GroupKind::kExpert:
      collect(etp * edp(), pp, ep, [&](int a, int p, int e) { return expert_rank(a % etp, e, a / etp, p); });
      break;
    case GroupKind::kExpertData:
      collect(etp * ep, pp, edp(), [&](int a, int p, int d) { return expert_rank(a % etp, a / etp, d, p); });
      break;
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<LayoutProblem> check_layout(const ParallelLayout& l, int ranks_per_node, bool tp_across_nodes) {
  for (auto [key, value] : {std::pair<const char*, int>{"tp", l.tp}, {"pp", l.pp}, {"dp", l.dp}, {"ep", l.ep},
                            {"etp", l.etp}})
    if (value < 1) return LayoutProblem{key, fmt::format("expected an integer >= 1, got {}", value)};
  if (auto problem = check_ep_divides_stage(l)) return problem;
  if (auto problem = check_tp_within_node(l.tp, ranks_per_node, tp_across_nodes)) return problem;
  if (!tp_across_nodes && ranks_per_node % l.etp != 0)
    return LayoutProblem{"etp", fmt::format("an expert-tensor-parallel group of {} would span nodes of {} ranks "
                                            "(etp must divide ranks_per_node unless tp_across_nodes = true)",
                                            l.etp, ranks_per_node)};
  return std::nullopt;
}

std::optional<LayoutProblem> check_ep_divides_stage(const ParallelLayout& l) {
  if (l.stage_ranks() % (l.etp * l.ep) == 0) return std::nullopt;
  return LayoutProblem{"ep", fmt::format("etp x ep = {} x {} must divide the tp x dp = {} x {} ranks of a pipeline "
                                         "stage",
                                         l.etp, l.ep, l.tp, l.dp)};
}

std::optional<LayoutProblem> check_tp_within_node(int tp, int ranks_per_node, bool tp_across_nodes) {
  if (tp_across_nodes || ranks_per_node % tp == 0) return std::nullopt;
  return LayoutProblem{"tp", fmt::format("a tensor-parallel group of {} would span nodes of {} ranks (tp must divide "
                                         "ranks_per_node unless tp_across_nodes = true)",
                                         tp, ranks_per_node)};
}

std::optional<LayoutProblem> check_stage_split(int layers, int pp, int vpp, int first, int last) {
  if (pp < 1) return LayoutProblem{"pp", fmt::format("expected an integer >= 1, got {}", pp)};
  if (vpp < 1) return LayoutProblem{"vpp", fmt::format("expected an integer >= 1, got {}", vpp)};
  const int chunks = pp * vpp;
  if (first < 0 || last < 0)
    return LayoutProblem{first < 0 ? "first_stage_layers" : "last_stage_layers", "expected an integer >= 0"};
  if (chunks == 1 && (first > 0 || last > 0))
    return LayoutProblem{first > 0 ? "first_stage_layers" : "last_stage_layers",
                         "needs more than one pipeline chunk (pp x vpp > 1)"};
  const int fixed = (first > 0 ? 1 : 0) + (last > 0 ? 1 : 0);
  const int rest_layers = layers - first - last;
  const int rest_chunks = chunks - fixed;
  if (rest_layers < rest_chunks || (rest_chunks == 0 && rest_layers != 0))
    return LayoutProblem{"pp", fmt::format("{} layers cannot fill {} pipeline chunks (pp {} x vpp {}) with at least "
                                           "one layer each after {} on the first and {} on the last",
                                           layers, chunks, pp, vpp, first, last)};
  return std::nullopt;
}

StageSplit split_layers(int layers, int pp, int vpp, int first, int last) {
  const int chunks = pp * vpp;
  StageSplit s;
  s.chunk_layers.assign(chunks, 0);
  int lo = 0, hi = chunks;
  if (first > 0) s.chunk_layers[lo++] = first;
  if (last > 0) s.chunk_layers[--hi] = last;
  const int rest = layers - first - last;
  const int n = hi - lo;
  for (int c = lo; c < hi; ++c) s.chunk_layers[c] = rest / n + (c - lo < rest % n ? 1 : 0);
  int layer = 0;
  for (int c = 0; c < chunks; ++c) {
    s.chunk_first.push_back(layer);
    layer += s.chunk_layers[c];
  }
  return s;
}

}  // namespace epsim::workloads
