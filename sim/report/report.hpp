// The replay's report: every simulated figure beside its analytic lower
// bound, the ratio sim / bound and where the gap comes from. Built from a
// Timeline and StepBounds; printed as a table or JSON, byte-identical for
// identical inputs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/platform/platform_facts.hpp"
#include "sim/replay/replay.hpp"
#include "sim/replay/step_bounds.hpp"
#include "sim/replay/timeline.hpp"
#include "workloads/task_graph.hpp"

namespace epsim::sim {

struct ReportRow {
  std::string name;
  double sim_s = 0;
  double bound_s = 0;
  std::string cause;  // why sim exceeds bound; "on the bound" when it does not
  double ratio() const { return bound_s > 0 ? sim_s / bound_s : 1.0; }
};

struct LinkRow {
  std::string link;
  double bytes = 0;
  double bandwidth_Bps = 0;
  double utilisation = 0;  // bytes / (bandwidth x step time)
};

struct Report {
  std::string schedule;
  std::string algorithm;  // dispatch/combine: direct or hierarchical
  std::string fidelity;   // per-flow or aggregated
  std::string all_reduce;
  int ranks = 0;
  int tasks = 0;
  std::int64_t activities = 0;

  ReportRow step;
  double critical_path_bound_s = 0;
  double rank_streams_bound_s = 0;
  // Per TaskKind present in the graph: compute kinds as the mean over ranks
  // of busy time; collectives as the sum of their spans (transfers only).
  std::vector<ReportRow> phases;

  double exposed_comm_mean_s = 0;  // communication running while the rank's compute stream is idle
  double exposed_comm_max_s = 0;
  double comm_mean_s = 0;          // communication busy time per rank (union of its streams)
  double overlap_fraction = 0;     // share of communication time hidden behind compute (mean over ranks)
  double peer_wait_mean_s = 0;     // time ranks sat in a collective waiting for peers

  int straggler_rank = 0;          // largest compute busy time (lowest rank on ties)
  double straggler_compute_s = 0;
  double mean_compute_s = 0;
  double straggler_ratio = 1;      // max / mean compute busy time

  std::vector<LinkRow> busiest_links;  // by utilisation, descending; ties by name
};

Report build_report(const Timeline& timeline, const StepBounds& bounds, const PlatformFacts& platform,
                    const workloads::TaskGraph& graph, const ReplayOptions& resolved, int top_links = 8);

// Human table; every number carries its unit.
std::string format_table(const Report& report);
// Machine form: SI units, keys ending in _s, _bytes, _Bps.
std::string format_json(const Report& report);

}  // namespace epsim::sim
