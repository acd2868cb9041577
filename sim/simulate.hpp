// The simulator's front door: open a platform, place ranks, replay a task
// graph, bound it and report. One call per process (one SimGrid engine).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "sim/platform/placement.hpp"
#include "sim/platform/platform_facts.hpp"
#include "sim/platform/platform_loader.hpp"
#include "sim/platform/sim_engine.hpp"
#include "sim/replay/replay.hpp"
#include "sim/replay/replica_links.hpp"
#include "sim/replay/step_bounds.hpp"
#include "sim/replay/timeline.hpp"
#include "sim/report/report.hpp"
#include "workloads/memory_fit.hpp"
#include "workloads/task_graph.hpp"

namespace epsim::sim {

// What one rank of the workload holds in HBM (workloads/memory_fit.hpp),
// checked against the NPUs the ranks run on.
struct MemoryRequest {
  workloads::MemoryBreakdown breakdown;
  bool allow_oversubscribed = false;  // the workload's memory.allow_oversubscribed
  std::string workload_source;        // where the refusal points
  // The key a refusal names, where it was given, and what to do instead;
  // empty: key memory at the workload, oversubscription as the remedy.
  std::string key = {};
  SourceLocation at = {};
  std::string remedy = {};
};

// The fit of `request` on NPUs of `capacity_bytes` (0: unknown, not
// checked). Throws InputError at the workload, key memory, naming the
// largest term, when it does not fit and oversubscription is not allowed.
workloads::MemoryFit enforce_memory_fit(const MemoryRequest& request, double capacity_bytes);

struct Simulation {
  PlatformFacts platform;
  Placement placement;
  ReplayOptions options;  // resolved
  Timeline timeline;
  StepBounds bounds;
  Report report;
  ReportSums sums;  // the per-rank sums the report was reduced from (a steady state carries them)
};

// Opens the platform (open_platform), checks that the graph's ranks fit it
// (check_ranks_fit), that its NPUs have every compute dtype (or the
// fallback options.compute_fallback: check_compute_dtypes) and, given
// `memory`, that a rank fits their HBM (enforce_memory_fit), then places,
// bounds, replays and reports. Throws InputError for bad input (the
// platform's verdict is check_platform's); std::runtime_error for a SimGrid
// failure mid-run. `scenario` heads the report; its platform fields are
// filled from the platform (cluster name, NPU model) when it is a cluster.
Simulation simulate(const PlatformRequest& platform, const workloads::TaskGraph& graph,
                    const ReplayOptions& options = {}, const EngineOptions& engine_options = {},
                    const Scenario& scenario = {}, const std::optional<MemoryRequest>& memory = std::nullopt);

// For a graph built before its routing was drawn (from
// workloads::RoutingStream::placeholder()): fills routing job `job`'s
// amounts into that graph (workloads::fill_routing), waiting for the draw.
// simulate() calls it once per job, just before the replay first reads a
// task of that job, and copies the filled tasks into what it replays, so
// the draw of later layers overlaps the replay of earlier ones.
using RoutingFeed = std::function<void(int job)>;

// The same for a platform check_platform has already given its verdict on;
// with `routing`, the graph's routed tasks are filled in as the replay
// reaches them (RoutingFeed).
Simulation simulate(PlatformShape checked, const workloads::TaskGraph& graph, const ReplayOptions& options = {},
                    const EngineOptions& engine_options = {}, const Scenario& scenario = {},
                    const std::optional<MemoryRequest>& memory = std::nullopt,
                    const RoutingFeed* routing = nullptr);

// Options resolved for `graph` on `loaded` (resolve()), and the links a
// folded graph's EP groups share scaled to the kept group's share
// (share_replica_links, whose verdict goes to `shared_links`): once per
// opened platform, before its replays.
ReplayOptions resolve_for(LoadedPlatform& loaded, const workloads::TaskGraph& graph, const ReplayOptions& options,
                          SharedLinks* shared_links = nullptr);

// One graph replayed on a platform opened already (`open`: the process's
// one engine) with options from resolve_for; several graphs may be replayed
// one after the other, each timed from its start. Checks, places, replays
// and reports as simulate() does; Simulation::platform is left empty (the
// facts stay in `open`).
Simulation simulate_on(OpenPlatform& open, const workloads::TaskGraph& graph, const ReplayOptions& options,
                       const Scenario& scenario = {}, const std::optional<MemoryRequest>& memory = std::nullopt,
                       const RoutingFeed* routing = nullptr);

// The same for a platform named without overrides (a preset, TOML or XML path).
Simulation simulate(const std::string& platform, const workloads::TaskGraph& graph,
                    const ReplayOptions& options = {}, const EngineOptions& engine_options = {},
                    const Scenario& scenario = {});

}  // namespace epsim::sim
