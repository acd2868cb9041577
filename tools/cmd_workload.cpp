// `epsim workload show FILE|PRESET [--set k=v]... [--ep N] [--seed N] [--json]`:
// samples the routing, builds the task graph of one training step and
// prints the per-layer routing table (or the graph as JSON).
// `epsim workload presets` lists the bundled presets.
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/workload_job.hpp"
#include "tools/command.hpp"
#include "tools/run_request.hpp"
#include "workloads/task_graph_json.hpp"
#include "workloads/workload_report.hpp"

namespace epsim::tools {

namespace {

struct WorkloadState {
  app::WorkloadRequest request;
  bool json = false;
  CLI::App* show = nullptr;
  CLI::App* presets = nullptr;
};

int run(const WorkloadState& s) {
  if (s.presets->parsed()) {
    for (const std::string& name : app::workload_presets()) std::cout << name << "\n";
    return 0;
  }
  app::WorkloadRequest request = s.request;
  request.summary = !s.json;
  const app::WorkloadOutcome out = app::show_workload(request);
  if (s.json) {
    workloads::write_task_graph_json(std::cout, out.graph);
  } else {
    workloads::write_workload_report(std::cout, out.workload, *out.summary, out.graph);
  }
  return 0;
}

}  // namespace

Command add_workload_command(CLI::App& epsim) {
  auto state = std::make_shared<WorkloadState>();
  CLI::App* workload = epsim.add_subcommand("workload", "MoE workloads: sampled routing and the task graph of a step");
  workload->require_subcommand(1);
  CLI::App* show = workload->add_subcommand(
      "show", "per-layer routing (load balance, hottest expert, distinct ranks vs closed forms); --json: task graph");
  show->add_option("workload", state->request.workload, "workload TOML file or preset name (see `epsim workload presets`)")
      ->required();
  show->add_option("--set", state->request.overrides, "override one key, e.g. --set routing.kind=zipf (repeatable)");
  add_ep_seed_options(*show, state->request.ep, state->request.seed);
  show->add_flag("--json", state->json, "print the task graph as JSON");
  state->show = show;
  state->presets = workload->add_subcommand("presets", "list the bundled workload presets");
  return Command{workload, [state] { return run(*state); }};
}

}  // namespace epsim::tools
