// simulate(): platform, placement, dtype check, bounds, replay, report in order.
#include "sim/simulate.hpp"

namespace epsim::sim {

Simulation simulate(const PlatformRequest& platform, const workloads::TaskGraph& graph,
                    const ReplayOptions& options, const EngineOptions& engine_options, const Scenario& scenario) {
  OpenPlatform open = open_platform(platform, engine_options);
  check_ranks_fit(open.shape, graph.ranks, graph.ranks_per_node);
  LoadedPlatform& loaded = open.loaded;
  Simulation out;
  out.placement = place_ranks(graph.ranks, graph.ranks_per_node, loaded.facts);
  out.options = resolve(options, loaded.facts, out.placement);
  std::vector<DtypeFallback> fallbacks =
      check_compute_dtypes(loaded.facts, out.placement, graph, out.options.compute_fallback, open.shape.source);
  out.bounds = step_bounds(loaded.facts, out.placement, graph, out.options);
  out.timeline = replay(*open.engine, loaded, out.placement, graph, out.options);
  out.report = build_report(out.timeline, out.bounds, loaded.facts, out.placement, graph, out.options);
  out.report.scenario = scenario;
  if (out.report.scenario.platform.empty()) out.report.scenario.platform = platform.platform;
  if (open.shape.cluster) {
    out.report.scenario.platform_name = open.shape.cluster->name;
    out.report.scenario.npu_model = open.shape.cluster->npu.model;
  }
  out.report.fallbacks = std::move(fallbacks);
  out.platform = std::move(loaded.facts);
  return out;
}

Simulation simulate(const std::string& platform, const workloads::TaskGraph& graph, const ReplayOptions& options,
                    const EngineOptions& engine_options, const Scenario& scenario) {
  return simulate(PlatformRequest{platform, {}}, graph, options, engine_options, scenario);
}

}  // namespace epsim::sim
