// simulate(): platform, placement, bounds, replay, report in order.
#include "sim/simulate.hpp"

namespace epsim::sim {

Simulation simulate(const PlatformRequest& platform, const workloads::TaskGraph& graph,
                    const ReplayOptions& options, const EngineOptions& engine_options) {
  OpenPlatform open = open_platform(platform, engine_options);
  check_ranks_fit(open.shape, graph.ranks, graph.ranks_per_node);
  LoadedPlatform& loaded = open.loaded;
  Simulation out;
  out.placement = place_ranks(graph.ranks, graph.ranks_per_node, loaded.facts);
  out.options = resolve(options, loaded.facts, out.placement);
  out.bounds = step_bounds(loaded.facts, out.placement, graph, out.options);
  out.timeline = replay(*open.engine, loaded, out.placement, graph, out.options);
  out.report = build_report(out.timeline, out.bounds, loaded.facts, graph, out.options);
  out.platform = std::move(loaded.facts);
  return out;
}

Simulation simulate(const std::string& platform, const workloads::TaskGraph& graph, const ReplayOptions& options,
                    const EngineOptions& engine_options) {
  return simulate(PlatformRequest{platform, {}}, graph, options, engine_options);
}

}  // namespace epsim::sim
