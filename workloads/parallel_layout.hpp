// The 5-D layout of a training job (tensor, data, pipeline, expert and
// expert-tensor parallelism) and its rank groups, numbered as Megatron-Core
// and MindSpeed number them, plus the assignment of layers to pipeline
// stages. Plain arithmetic: no TOML, no platform (docs/layout.md).
//
// Numbering (Megatron-Core's RankGenerator, order "tp-cp-ep-dp-pp", cp = 1):
//   dense layers:  rank = tp_i + tp x (dp_i + dp x pp_i)
//   expert layers: rank = etp_i + etp x (ep_i + ep x (edp_i + edp x pp_i)),
//                  edp = world / (etp x ep x pp)
// Both decompositions share the pipeline groups, so expert parallelism is
// carved out of the data- x tensor-parallel ranks of one pipeline stage,
// and TP (innermost) stays inside a node when it divides the node's ranks.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace epsim::workloads {

enum class GroupKind {
  kTensor,        // TP: shards attention and dense GEMMs
  kData,          // DP of the dense parameters
  kPipeline,      // PP: one rank per stage
  kExpert,        // EP: splits the routed experts
  kExpertTensor,  // ETP: shards each expert's GEMMs
  kExpertData,    // EDP: DP of the expert parameters
};
const char* to_string(GroupKind kind);

struct ParallelLayout {
  int tp = 1;
  int pp = 1;
  int dp = 1;
  int ep = 1;
  int etp = 1;

  int world() const { return tp * dp * pp; }
  int stage_ranks() const { return tp * dp; }  // ranks of one pipeline stage
  // Expert data parallelism: what is left of a stage after ETP x EP.
  int edp() const { return stage_ranks() / (etp * ep); }

  int dense_rank(int tp_i, int dp_i, int pp_i) const { return tp_i + tp * (dp_i + dp * pp_i); }
  int expert_rank(int etp_i, int ep_i, int edp_i, int pp_i) const {
    return etp_i + etp * (ep_i + ep * (edp_i + edp() * pp_i));
  }

  // A rank's index in every dimension.
  struct Coords {
    int tp = 0, dp = 0, pp = 0;    // dense decomposition
    int etp = 0, ep = 0, edp = 0;  // expert decomposition (same pp)
  };
  Coords coords(int rank) const;

  // Every group of `kind`, each in ascending rank order, groups ordered by
  // their smallest rank. Together they partition [0, world()).
  std::vector<std::vector<int>> groups(GroupKind kind) const;
};

// What is wrong with a layout: the key at fault ("tp", "ep", ...) and why.
struct LayoutProblem {
  std::string key;
  std::string message;
};

// Sizes must be >= 1; ETP x EP must divide a stage's TP x DP ranks; a TP
// group must sit inside a node (tp divides ranks_per_node) unless
// `tp_across_nodes`; so must an ETP group.
std::optional<LayoutProblem> check_layout(const ParallelLayout& layout, int ranks_per_node, bool tp_across_nodes);

// Two of check_layout's rules alone, for a caller that takes them in its
// own order (app/plan_candidates.cpp): ETP x EP divides the stage (key
// "ep"); a TP group inside a node (key "tp").
std::optional<LayoutProblem> check_ep_divides_stage(const ParallelLayout& layout);
std::optional<LayoutProblem> check_tp_within_node(int tp, int ranks_per_node, bool tp_across_nodes);

// Layers per model chunk: pp x vpp chunks, chunk c on pipeline stage c % pp
// (Megatron's interleaved order). `first` and `last` (0: even) fix the
// layers of the first and last chunk, the rest are split as evenly as
// possible with the remainder on the earliest chunks.
struct StageSplit {
  std::vector<int> chunk_layers;  // size pp x vpp
  std::vector<int> chunk_first;   // first model layer of each chunk
  int stage_of_chunk(int chunk, int pp) const { return chunk % pp; }
};
std::optional<LayoutProblem> check_stage_split(int layers, int pp, int vpp, int first, int last);
StageSplit split_layers(int layers, int pp, int vpp, int first = 0, int last = 0);

}  // namespace epsim::workloads
