// simulate(): platform, placement, dtype check, bounds, replay, report in order.
#include "sim/simulate.hpp"

#include <algorithm>
#include <utility>

#include "core/error.hpp"
#include "sim/replay/compute_calibration.hpp"
#include "sim/replay/replica_links.hpp"

namespace epsim::sim {

workloads::MemoryFit enforce_memory_fit(const MemoryRequest& request, double capacity_bytes) {
  const workloads::MemoryFit fit = workloads::check_memory_fit(request.breakdown, capacity_bytes);
  if (!fit.fits && !request.allow_oversubscribed) {
    const std::string problem = "a rank does not fit in HBM: " + workloads::describe_memory_fit(request.breakdown, fit);
    if (!request.key.empty()) throw InputError(request.at, request.key, problem + "; " + request.remedy);
    throw InputError({request.workload_source}, "memory",
                     problem + "; set memory.allow_oversubscribed = true to simulate the step anyway");
  }
  return fit;
}

namespace {

// The smallest HBM of the NPUs the ranks use; 0 when any is unknown.
double capacity_of(const PlatformFacts& platform, const Placement& placement) {
  double capacity = -1;
  for (int npu : placement.npu_of_rank) {
    const double c = platform.npus[static_cast<std::size_t>(npu)].hbm_capacity_bytes;
    capacity = capacity < 0 ? c : std::min(capacity, c);
  }
  return std::max(capacity, 0.0);
}

}  // namespace

Simulation simulate(const PlatformRequest& platform, const workloads::TaskGraph& graph,
                    const ReplayOptions& options, const EngineOptions& engine_options, const Scenario& scenario,
                    const std::optional<MemoryRequest>& memory) {
  Scenario named = scenario;
  if (named.platform.empty()) named.platform = platform.platform;
  return simulate(check_platform(platform), graph, options, engine_options, named, memory);
}

ReplayOptions resolve_for(LoadedPlatform& loaded, const workloads::TaskGraph& graph, const ReplayOptions& options,
                          SharedLinks* shared_links) {
  const Placement placement = place_graph(graph, loaded.facts);
  const ReplayOptions resolved = resolve(options, loaded.facts, placement);
  // After resolve: the algorithms are the platform's own, whatever the kept group's share of a link.
  SharedLinks shared = share_replica_links(loaded, placement, graph, resolved);
  if (shared_links != nullptr) *shared_links = std::move(shared);
  return resolved;
}

Simulation simulate(PlatformShape checked, const workloads::TaskGraph& graph, const ReplayOptions& options,
                    const EngineOptions& engine_options, const Scenario& scenario,
                    const std::optional<MemoryRequest>& memory, const RoutingFeed* routing) {
  OpenPlatform open = open_platform(std::move(checked), engine_options);
  check_ranks_fit(open.shape, graph.ranks + graph.phantom_ranks(), graph.ranks_per_node);
  const ReplayOptions resolved = resolve_for(open.loaded, graph, options);
  Simulation out = simulate_on(open, graph, resolved, scenario, memory, routing);
  out.platform = std::move(open.loaded.facts);
  return out;
}

Simulation simulate_on(OpenPlatform& open, const workloads::TaskGraph& graph, const ReplayOptions& options,
                       const Scenario& scenario, const std::optional<MemoryRequest>& memory,
                       const RoutingFeed* routing) {
  LoadedPlatform& loaded = open.loaded;
  Simulation out;
  out.placement = place_graph(graph, loaded.facts);
  out.options = resolve(options, loaded.facts, out.placement);
  std::vector<DtypeFallback> fallbacks =
      check_compute_dtypes(loaded.facts, out.placement, graph, out.options.compute_fallback, open.shape.source);
  std::optional<workloads::MemoryFit> fit;
  if (memory) fit = enforce_memory_fit(*memory, capacity_of(loaded.facts, out.placement));
  // The cluster's software stack (an XML platform has none: the plain
  // roofline, every operator at the chip's peaks).
  const topology::StackSpec compute = open.shape.cluster ? open.shape.cluster->stack : topology::StackSpec{};
  workloads::TaskGraph calibrated =
      calibrate_compute(graph, compute, loaded.facts, out.placement, out.options.compute_fallback);
  // A routed task's amounts arrive in `graph` (through `routing`) just
  // before the replay needs them, and are calibrated then: per job, its
  // compute tasks and its traffic (all a routed collective reads of it).
  std::vector<std::vector<workloads::TaskId>> computed_by_job(routing ? graph.traffic.size() : 0);
  if (routing)
    for (const workloads::Task& t : graph.tasks)
      if (t.routing >= 0 && !t.is_collective()) computed_by_job[static_cast<std::size_t>(t.routing)].push_back(t.id);
  std::vector<char> routed(computed_by_job.size(), 0);
  const TaskGate fill_routed = [&](workloads::TaskId id) {
    const int job = calibrated.tasks[static_cast<std::size_t>(id)].routing;
    if (job < 0 || routed[static_cast<std::size_t>(job)]) return;
    routed[static_cast<std::size_t>(job)] = 1;
    (*routing)(job);
    calibrated.traffic[static_cast<std::size_t>(job)] = graph.traffic[static_cast<std::size_t>(job)];
    for (workloads::TaskId c : computed_by_job[static_cast<std::size_t>(job)]) {
      workloads::Task& t = calibrated.tasks[static_cast<std::size_t>(c)];
      t = graph.tasks[static_cast<std::size_t>(c)];
      calibrate_task(t, calibrated.ranks, compute, loaded.facts, out.placement, out.options.compute_fallback);
    }
  };
  // The replay first: it plans every collective, and the bounds reuse its plans' bounds.
  std::vector<double> plan_bounds;
  out.timeline = replay(*open.engine, loaded, out.placement, calibrated, out.options, &plan_bounds,
                        routing ? fill_routed : TaskGate{});
  if (routing)  // every task has run, so every job is in; a graph may still list one no task reads
    for (const workloads::Task& t : graph.tasks) fill_routed(t.id);
  calibrated.dropped_picks = graph.dropped_picks;  // counted as the routing arrived
  out.bounds = step_bounds(loaded.facts, out.placement, calibrated, out.options, &plan_bounds);
  out.report = build_report(out.timeline, out.bounds, loaded.facts, out.placement, calibrated, out.options, kBusiestLinks,
                            &out.sums);
  out.report.scenario = scenario;
  if (out.report.scenario.platform.empty()) out.report.scenario.platform = open.shape.source;
  if (open.shape.cluster) {
    out.report.scenario.platform_name = open.shape.cluster->name;
    out.report.scenario.npu_model = topology::npu_description(open.shape.cluster->npu);
    out.report.scenario.stack = open.shape.cluster->stack.name;
  }
  out.report.fallbacks = std::move(fallbacks);
  if (memory) {
    out.report.memory = memory->breakdown;
    out.report.memory_fit = *fit;
  }
  add_throughput(out.report, loaded.facts, out.placement, out.options.compute_fallback);
  return out;
}

Simulation simulate(const std::string& platform, const workloads::TaskGraph& graph, const ReplayOptions& options,
                    const EngineOptions& engine_options, const Scenario& scenario) {
  return simulate(PlatformRequest{platform, {}}, graph, options, engine_options, scenario);
}

}  // namespace epsim::sim
