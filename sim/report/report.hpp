// The replay's report: what was run (scenario), every simulated figure
// beside the replay's lower bound ("the bound": the larger of the critical
// path and the busiest rank's stream sum, sim/replay/step_bounds.hpp), the
// ratio sim / bound and the gap sim - bound split into parts that sum to it.
// Built from a Timeline and StepBounds; printed as a table or JSON,
// byte-identical for identical inputs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/platform/placement.hpp"
#include "sim/platform/platform_facts.hpp"
#include "sim/replay/compute_precision.hpp"
#include "sim/replay/replay.hpp"
#include "sim/replay/step_bounds.hpp"
#include "sim/replay/timeline.hpp"
#include "sim/report/critical_path.hpp"
#include "sim/report/scenario.hpp"
#include "workloads/memory_fit.hpp"
#include "workloads/task_graph.hpp"

namespace epsim::sim {

// One task kind (or the step). Compute kinds: busy time per rank, mean and
// max over ranks, beside the same statistics of the per-rank bounds.
// Collectives: per rank, the sum of the spans of the row's collectives it
// takes part in; without pipeline stages every rank alike, so max = mean
// and max_rank = -1.
inline constexpr const char* kCollectiveBytesRule =
    "what a participant sends to other ranks: all-to-all and p2p once per (token, destination rank), its own\n"
    "tokens excluded; all-reduce 2(n-1)/n x S, reduce-scatter and all-gather (n-1)/n x S, nccl-tests' bus bytes";

// What `rank` sends to other ranks in collective `t`, by
// kCollectiveBytesRule, and to how many peers: the report's rows sum it
// over the participants, the trace prints it on every slice.
struct RankSent {
  double bytes = 0;
  int peers = 0;
};
RankSent bytes_sent_by(const workloads::TaskGraph& graph, const workloads::Task& t, int rank);

struct ReportRow {
  std::string name;
  double sim_s = 0;        // mean over ranks (step: the step time)
  double sim_max_s = 0;    // max over ranks
  int max_rank = -1;       // the rank of sim_max_s (lowest on ties); -1: every rank alike
  double bound_s = 0;      // mean over ranks of the bound
  double bound_max_s = 0;  // max over ranks of the bound
  std::string cause;       // why sim exceeds bound; "on the bound" when it does not
  // Collectives: what a participant sends to other ranks over the row's
  // tasks, by the rule of kCollectiveBytesRule, and that over sim_s.
  bool collective = false;
  int ranks_running = 0;   // compute: ranks that run the kind (the means are over them)
  double bytes_per_rank = 0;
  double achieved_Bps = 0;
  double ratio() const { return bound_s > 0 ? sim_s / bound_s : 1.0; }
};

struct LinkRow {
  std::string link;
  double bytes = 0;
  double bandwidth_Bps = 0;
  double utilisation = 0;  // bytes / (bandwidth x step time)
};

// How the replay was reduced (docs/simulator.md, "Exact reductions").
struct Reduction {
  // Replicas: each stage's first EP group replayed for all `replicas` of
  // them (workloads/replica_fold.hpp), its shared links at its share.
  int replicas = 1;
  int full_ranks = 0;    // the job's ranks (phantoms included)
  int shared_links = 0;  // links several EP groups use, scaled to one group's share
  // Links several EP groups use that the gradient sync crosses too, left
  // whole (sim/replay/replica_links.hpp), with `replicas` x their bytes in
  // the replay over bandwidth x step as `utilisation`: an upper bound on the
  // whole job's. Exact while none saturates.
  std::vector<LinkRow> unscaled_links;
  // Steady state: the step carried from replays of micro_batches_a and
  // micro_batches_b (0: every micro-batch replayed).
  int micro_batches_a = 0;
  int micro_batches_b = 0;
  double step_a_s = 0;
  double step_b_s = 0;
  // Per micro-batch, how much later each stage's tail (its last forward)
  // starts in the second replay than in the first: the least and the most
  // over the stages. In the steady state every stage moves by the increment.
  double shift_min_s = 0;
  double shift_max_s = 0;
  double tolerance = 0;    // how far a stage's shift may be from the increment, relative
  std::string off;         // why no reduction applies, or what turned it off ("" when reduced)
  bool applicable = false;  // a reduction would apply to the layout (whether or not it ran)
  bool reduced() const { return replicas > 1 || micro_batches_b > 0; }
};

// Training throughput of the simulated step (when the scenario has a batch).
struct Throughput {
  double tokens_per_step = 0;            // global_batch x sequence_length
  double tokens_per_s = 0;               // tokens_per_step / step time
  double tokens_per_s_per_npu = 0;       // ... / ranks
  double model_flops_per_s_per_npu = 0;  // model FLOPs per token x tokens_per_s_per_npu
  double peak_flops_per_s_per_npu = 0;   // mean over the ranks' NPUs of the MFU dtype's peak (or its fallback's)
  double hbm_Bps_per_npu = 0;            // mean over the ranks' NPUs of their HBM bandwidth
  // A serving step's ledger (Scenario's serving_* bytes and FLOPs) at those rates.
  double serving_memory_s = 0;
  double serving_compute_s = 0;
  workloads::Dtype peak_dtype = workloads::Dtype::kBf16;  // the dtype whose peak that is
  double mfu = 0;                        // model_flops_per_s_per_npu / peak_flops_per_s_per_npu
};

struct Report {
  Scenario scenario;
  Reduction reduction;
  bool has_throughput = false;
  Throughput throughput;
  int nodes_used = 0;       // nodes the ranks occupy
  int platform_nodes = 0;   // nodes of the platform
  std::string schedule;
  std::string algorithm;  // dispatch/combine: direct, hierarchical or low-latency
  std::string dispatch_kernel;  // the stack's dispatch/combine kernels (topology::kDispatchKernelNames)
  std::string fidelity;   // per-flow or aggregated
  std::string all_reduce;
  int ranks = 0;
  int tasks = 0;
  std::int64_t activities = 0;
  std::vector<DtypeFallback> fallbacks;  // compute dtypes run at another dtype's peak
  // What one rank holds in HBM and whether it fits (absent when not checked).
  std::optional<workloads::MemoryBreakdown> memory;
  workloads::MemoryFit memory_fit;

  ReportRow step;
  double critical_path_bound_s = 0;
  double rank_streams_bound_s = 0;
  GapParts gap;  // sim - bound along the replay's critical path
  std::vector<ReportRow> phases;  // per TaskKind present in the graph

  double exposed_comm_mean_s = 0;  // communication running while the rank's compute stream is idle
  double exposed_comm_max_s = 0;
  double comm_mean_s = 0;          // communication busy time per rank (union of its streams)
  double overlap_fraction = 0;     // share of communication time hidden behind compute (mean over ranks)
  double peer_wait_mean_s = 0;     // time ranks sat in a collective waiting for peers
  // Time in the step when a rank runs neither compute nor communication:
  // with pipeline stages, the bubble (and waits for the other stages).
  double idle_mean_s = 0;
  double idle_max_s = 0;
  int idle_max_rank = 0;
  // Of the idle time, mean per rank: waiting at dispatch/combine for a
  // slower peer of the EP group (load skew: hot experts), and waiting for
  // the neighbouring pipeline stage or, with stages, before the rank's
  // first and after its last task (fill and drain: the bubble). The rest
  // is other dependencies.
  double idle_skew_mean_s = 0;
  double idle_pipeline_mean_s = 0;

  int straggler_rank = 0;          // largest compute busy time over the step (lowest rank on ties)
  double straggler_compute_s = 0;
  double mean_compute_s = 0;
  double straggler_ratio = 1;      // max / mean compute busy time
  // The layer whose slowest rank is furthest above the layer's mean compute
  // busy time (sees hot experts that move from layer to layer, which the
  // step totals average out); -1 when no layer has compute.
  int layer_straggler_layer = -1;
  int layer_straggler_rank = 0;
  double layer_straggler_compute_s = 0;
  double layer_mean_compute_s = 0;

  std::vector<LinkRow> busiest_links;  // by utilisation, descending; ties by name
  // The graph's (token, expert) picks and those its routing's capacity dropped.
  std::int64_t routed_picks = 0;
  std::int64_t dropped_picks = 0;
};

inline constexpr int kBusiestLinks = 8;  // links a report lists by default

// The per-rank (and per-link) sums behind a report's means and maxima.
// A steady-state report is carried from these rank by rank
// (steady_state.hpp): carrying a maximum as a maximum would mix two ranks
// (a max below the mean, a straggler faster than its layer's mean).
struct ReportSums {
  std::vector<std::vector<double>> row_sim_s;    // per row of Report::phases (same order), per rank
  std::vector<std::vector<double>> row_bound_s;  // the same rows' bounds
  std::vector<double> compute_s;                 // per rank: compute busy time
  std::vector<double> exposed_s;                 // per rank: communication while its compute stream is idle
  std::vector<double> idle_s;                    // per rank: neither compute nor communication
  int layers = 0;
  std::vector<double> layer_rank_s;  // [layer * ranks + rank]: compute busy time
  std::vector<double> link_bytes;    // per link of the platform
  int top_links = kBusiestLinks;     // how many busiest links the report lists
};

// `sums_out`, when given, receives the sums the report was reduced from.
Report build_report(const Timeline& timeline, const StepBounds& bounds, const PlatformFacts& platform,
                    const Placement& placement, const workloads::TaskGraph& graph, const ReplayOptions& resolved,
                    int top_links = kBusiestLinks, ReportSums* sums_out = nullptr);

// A row's mean, max, rank of the max and cause from its per-rank sums:
// compute rows over the ranks that run the kind, collective rows over
// every rank (row.collective says which); bytes and rate are left as they are.
void reduce_row(ReportRow& row, const std::vector<double>& sim_s, const std::vector<double>& bound_s);

// The report's figures over ranks and links from `sums`: the largest
// exposed communication, the idlest rank, the straggler and the layer
// straggler, the busiest links over a step of `step_s`.
void reduce_ranks(Report& report, const ReportSums& sums, const PlatformFacts& platform, double step_s);

// Throughput of `report`'s step for its scenario's batch and model FLOPs,
// against the peaks of the placed NPUs (compute_fallback as the replay ran
// them). Sets has_throughput when the scenario has a batch.
void add_throughput(Report& report, const PlatformFacts& platform, const Placement& placement,
                    const std::optional<workloads::Dtype>& compute_fallback);

// Human table; every number carries its unit.
std::string format_table(const Report& report);
// Machine form: SI units, keys ending in _s, _bytes, _Bps.
std::string format_json(const Report& report);

// Indices of the links that `keep` selects and that carried bytes (`link_bytes`, per link), by
// utilisation (bytes / bandwidth over the same step) descending, ties by
// name; at most `count`.
std::vector<int> links_by_utilisation(const std::vector<double>& link_bytes, const PlatformFacts& platform,
                                      const std::vector<bool>& keep, int count);

}  // namespace epsim::sim
