// simulate(): engine, discovery, placement, replay, bounds, report in order.
#include "sim/simulate.hpp"

#include "sim/npu_platform.hpp"

namespace epsim::sim {

Simulation simulate(const std::string& platform_path, const workloads::TaskGraph& graph,
                    const ReplayOptions& options, const EngineOptions& engine_options) {
  SimEngine engine(platform_path, engine_options);
  LoadedPlatform loaded = discover_platform(engine.engine(), platform_path);
  Simulation out;
  out.placement = place_ranks(graph.ranks, graph.ranks_per_node, loaded.facts);
  out.options = resolve(options, graph.ranks);
  out.bounds = step_bounds(loaded.facts, out.placement, graph, out.options);
  out.timeline = replay(engine, loaded, out.placement, graph, out.options);
  out.report = build_report(out.timeline, out.bounds, loaded.facts, graph, out.options);
  out.platform = std::move(loaded.facts);
  return out;
}

}  // namespace epsim::sim
