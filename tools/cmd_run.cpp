// `epsim run --platform P --workload W [--set k=v]... [--ep N] [--seed N]
//   [--schedule serial|overlap] [--granularity per-flow|aggregated|hierarchical]
//   [--all-reduce ring|hierarchical] [--json] [--trace FILE]`:
// replays one training step on SimGrid and prints the report with bounds.
// --set keys go to the workload when they start with model., parallel.,
// precision. or routing. (or workload.), to the platform otherwise (or platform.).
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "sim/flat_platform.hpp"
#include "sim/simulate.hpp"
#include "sim/trace.hpp"
#include "tools/command.hpp"
#include "topology/cluster_spec.hpp"
#include "workloads/task_graph_builder.hpp"
#include "workloads/workload_loader.hpp"

namespace epsim::tools {

namespace {

struct RunState {
  std::string platform;
  std::string workload;
  std::vector<std::string> overrides;
  int ep = 0;
  long long seed = -1;
  std::string schedule = "overlap";
  std::string granularity;
  std::string all_reduce = "hierarchical";
  bool json = false;
  std::string trace;
  bool simgrid_log = false;
  std::vector<std::string> simgrid_config;
};

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// Splits --set assignments between the workload and the platform.
void split_overrides(const std::vector<std::string>& all, std::vector<std::string>& workload,
                     std::vector<std::string>& platform) {
  for (const std::string& o : all) {
    if (starts_with(o, "workload."))
      workload.push_back(o.substr(9));
    else if (starts_with(o, "platform."))
      platform.push_back(o.substr(9));
    else if (starts_with(o, "model.") || starts_with(o, "parallel.") || starts_with(o, "precision.") ||
             starts_with(o, "routing."))
      workload.push_back(o);
    else
      platform.push_back(o);
  }
}

sim::ReplayOptions replay_options(const RunState& s) {
  sim::ReplayOptions o;
  if (s.schedule == "serial")
    o.schedule = sim::Schedule::kSerial;
  else if (s.schedule != "overlap")
    throw option_error("--schedule", "expected serial or overlap, got \"" + s.schedule + "\"");
  if (s.granularity == "per-flow")
    o.granularity = sim::Granularity::kPerFlow;
  else if (s.granularity == "aggregated")
    o.granularity = sim::Granularity::kAggregated;
  else if (s.granularity == "hierarchical")
    o.granularity = sim::Granularity::kHierarchical;
  else if (!s.granularity.empty())
    throw option_error("--granularity",
                       "expected per-flow, aggregated or hierarchical, got \"" + s.granularity + "\"");
  if (s.all_reduce == "ring")
    o.all_reduce = sim::AllReduceAlgorithm::kRing;
  else if (s.all_reduce != "hierarchical")
    throw option_error("--all-reduce", "expected ring or hierarchical, got \"" + s.all_reduce + "\"");
  o.record_link_spans = !s.trace.empty();
  return o;
}

int run(const RunState& s) {
  std::vector<std::string> workload_overrides, platform_overrides;
  split_overrides(s.overrides, workload_overrides, platform_overrides);
  if (s.ep > 0) workload_overrides.push_back("parallel.ep=" + std::to_string(s.ep));
  if (s.seed >= 0) workload_overrides.push_back("routing.seed=" + std::to_string(s.seed));
  const sim::ReplayOptions options = replay_options(s);
  sim::EngineOptions engine;
  engine.simgrid_logs = s.simgrid_log;
  engine.extra_config = s.simgrid_config;

  const workloads::WorkloadSpec w = workloads::load_workload(s.workload, workload_overrides);
  const workloads::TaskGraph graph = workloads::build_task_graph(w);

  const bool xml = s.platform.size() > 4 && s.platform.compare(s.platform.size() - 4, 4, ".xml") == 0;
  sim::Simulation result;
  if (xml) {
    if (!platform_overrides.empty())
      throw option_error("--set " + platform_overrides.front(), "a SimGrid XML platform takes no overrides");
    result = sim::simulate(s.platform, graph, options, engine);
  } else {
    const topology::ClusterSpec cluster = topology::load_cluster_spec(s.platform, platform_overrides);
    // The flattened platform times exactly like topology's zoned one and
    // finds routes by a table read (docs/simulator.md).
    result = sim::simulate(cluster.source.empty() ? s.platform : cluster.source,
                           [&cluster] { sim::build_flat_platform(cluster); }, graph, options, engine);
  }
  std::cout << (s.json ? sim::format_json(result.report) : sim::format_table(result.report));
  if (!s.trace.empty()) {
    std::ofstream out(s.trace);
    if (!out) throw option_error("--trace", "cannot write " + s.trace);
    sim::write_trace(out, result.timeline, result.platform, result.placement, graph);
    std::cerr << "epsim: trace written to " << s.trace << " (open it in https://ui.perfetto.dev)\n";
  }
  return 0;
}

}  // namespace

Command add_run_command(CLI::App& epsim) {
  auto state = std::make_shared<RunState>();
  CLI::App* cmd = epsim.add_subcommand("run", "replay one training step on SimGrid: report with bounds, trace");
  cmd->add_option("--platform", state->platform, "cluster TOML, preset name (see `epsim platform presets`) or SimGrid XML")
      ->required();
  cmd->add_option("--workload", state->workload, "workload TOML file or preset name (see `epsim workload presets`)")
      ->required();
  cmd->add_option("--set", state->overrides,
                  "override one key (repeatable): model./parallel./precision./routing. keys go to the workload, "
                  "others to the platform; prefix workload. or platform. to choose");
  cmd->add_option("--ep", state->ep, "expert-parallel ranks (same as --set parallel.ep=N)");
  cmd->add_option("--seed", state->seed, "routing seed (same as --set routing.seed=N)");
  cmd->add_option("--schedule", state->schedule, "serial (no overlap) or overlap (two micro-batches)")
      ->capture_default_str();
  cmd->add_option("--granularity", state->granularity,
                  "dispatch/combine as per-flow, aggregated or hierarchical (default by EP: <=8, <=32, beyond)");
  cmd->add_option("--all-reduce", state->all_reduce, "gradient all-reduce: ring or hierarchical")
      ->capture_default_str();
  cmd->add_flag("--json", state->json, "print the report as JSON");
  cmd->add_option("--trace", state->trace, "write a Chrome trace (Perfetto) of the step to this file");
  cmd->add_flag("--simgrid-log", state->simgrid_log, "keep SimGrid's own log output");
  cmd->add_option("--cfg", state->simgrid_config, "extra SimGrid configuration name:value (repeatable)");
  return Command{cmd, [state] { return run(*state); }};
}

}  // namespace epsim::tools
