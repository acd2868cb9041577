// simulate(): engine, discovery, placement, replay, bounds, report in order.
#include "sim/simulate.hpp"

#include "sim/platform/npu_platform.hpp"

namespace epsim::sim {

namespace {

Simulation run(SimEngine& engine, const workloads::TaskGraph& graph, const ReplayOptions& options) {
  LoadedPlatform loaded = discover_platform(engine.engine(), engine.source());
  Simulation out;
  out.placement = place_ranks(graph.ranks, graph.ranks_per_node, loaded.facts);
  out.options = resolve(options, graph.ranks);
  out.bounds = step_bounds(loaded.facts, out.placement, graph, out.options);
  out.timeline = replay(engine, loaded, out.placement, graph, out.options);
  out.report = build_report(out.timeline, out.bounds, loaded.facts, graph, out.options);
  out.platform = std::move(loaded.facts);
  return out;
}

}  // namespace

Simulation simulate(const std::string& platform_path, const workloads::TaskGraph& graph,
                    const ReplayOptions& options, const EngineOptions& engine_options) {
  SimEngine engine(platform_path, engine_options);
  return run(engine, graph, options);
}

Simulation simulate(const std::string& source, const PlatformBuilder& build, const workloads::TaskGraph& graph,
                    const ReplayOptions& options, const EngineOptions& engine_options) {
  SimEngine engine(source, build, engine_options);
  return run(engine, graph, options);
}

}  // namespace epsim::sim
