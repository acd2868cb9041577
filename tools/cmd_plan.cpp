// `epsim plan --platform P [--platform Q ...] --workload W [--set k=v]... [--npus N]
//   [--global-batch B] [--micro-batch-sizes 1,2,4] [--top K] [--max-candidates N] [-j J]
//   [--json] [--emit-sweep FILE]`: which layout, for this model, on this cluster
// (docs/plan.md). The search is app/plan_search.hpp's.
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "app/plan_report.hpp"
#include "app/plan_search.hpp"
#include "tools/plan_sweep_file.hpp"
#include "core/error.hpp"
#include "tools/command.hpp"
#include "tools/option_checks.hpp"
#include "tools/output_file.hpp"

namespace epsim::tools {

namespace {

struct PlanState {
  std::vector<std::string> platforms;
  std::string workload;
  std::vector<std::string> overrides;
  std::string stack;
  std::optional<int> npus;
  std::optional<long long> global_batch;
  std::vector<std::string> micro_batch_sizes;
  int top = 10;
  int max_candidates = 32;
  int jobs = 1;
  bool json = false;
  bool quiet = false;
  std::string emit_sweep;
};

int run(const PlanState& s) {
  if (!s.emit_sweep.empty() && s.platforms.size() > 1)
    throw option_error("--emit-sweep", "writes the layouts of one platform; give one --platform");
  std::vector<std::int64_t> micro_batch;
  for (const std::string& item : list_items(s.micro_batch_sizes)) {
    const std::int64_t size = std::stoll(item);
    if (std::find(micro_batch.begin(), micro_batch.end(), size) != micro_batch.end())
      throw option_error("--micro-batch-sizes", fmt::format("{} is given twice (each size is tried once)", size));
    micro_batch.push_back(size);
  }
  std::optional<OutputFile> sweep;  // opened before the search, so a bad path costs nothing
  if (!s.emit_sweep.empty()) {
    std::vector<NamedInput> inputs = {{"--workload", s.workload}};
    for (const std::string& platform : s.platforms) inputs.push_back({"--platform", platform});
    refuse_input_as_output("--emit-sweep", s.emit_sweep, inputs);
    sweep.emplace("--emit-sweep", s.emit_sweep);
  }
  std::vector<app::PlanResult> results;
  for (const std::string& platform : s.platforms) {
    app::PlanRequest request;
    request.base.platform = platform;
    request.base.workload = s.workload;
    request.base.overrides = s.overrides;
    request.base.stack = s.stack;
    request.npus = s.npus;
    if (s.global_batch) request.global_batch = *s.global_batch;
    if (!micro_batch.empty()) request.micro_batch = micro_batch;
    request.parallel = s.jobs;
    request.max_candidates = s.max_candidates;
    if (!s.quiet) request.progress = [](const std::string& line) { std::cerr << "epsim plan: " << line << "\n"; };
    results.push_back(app::plan_layouts(request));
  }
  // A spec with no point is one `sweep` refuses: say so instead of writing it (the report says why).
  if (sweep && app::plan_sweep_points(results.front()) == 0)
    throw option_error("--emit-sweep", "no layout of " + results.front().workload + " on " + results.front().platform +
                                           " passes every check, so no sweep spec is written; run without "
                                           "--emit-sweep to see why");
  std::cout << (s.json ? app::format_plan_json(results) : app::format_plan(results, s.top));
  if (sweep) {
    // A sweep spec has no --stack: the stack is the platform key it replaces.
    std::vector<std::string> overrides = s.overrides;
    if (!s.stack.empty()) overrides.push_back("stack.name=" + s.stack);
    sweep->stream() << format_plan_sweep(results.front(), overrides);
    sweep->close();
    if (!s.quiet) std::cerr << "epsim plan: sweep spec written to " << s.emit_sweep << "\n";
  }
  return 0;
}

}  // namespace

Command add_plan_command(CLI::App& epsim) {
  auto state = std::make_shared<PlanState>();
  CLI::App* cmd = epsim.add_subcommand(
      "plan", "which layout for this model on this cluster: enumerate, check, prune and simulate layouts, ranked");
  cmd->add_option("--platform", state->platforms,
                  "cluster TOML or preset name; repeat it to compare clusters (the best layout of each side by side)")
      ->required();
  cmd->add_option("--workload", state->workload, "workload TOML file or preset name: the model, precision and routing")
      ->required();
  cmd->add_option("--set", state->overrides,
                  "override one key of every layout (repeatable), as run's --set: node.count=4, routing.seed=2");
  cmd->add_option("--stack", state->stack,
                  "software stack for every platform in place of its own: a preset in stacks/ or a stack TOML "
                  "(docs/stacks.md)")
      ->check(file_name());
  cmd->add_option_function<int>("--npus", [s = state.get()](const int& v) { s->npus = v; },
                                "NPUs the layouts fill (default: every NPU of the platform)")
      ->check(integer_in(1, 1 << 17));
  cmd->add_option_function<long long>("--global-batch", [s = state.get()](const long long& v) { s->global_batch = v; },
                                      "sequences per step (default: the workload's)")
      ->check(integer_in(1, 1LL << 30));
  cmd->add_option("--micro-batch-sizes", state->micro_batch_sizes,
                  "sequences per micro-batch to try, a comma-separated list (default 1,2,4)")
      ->check(list_of(integer_in(1, 1 << 20)));
  cmd->add_option("--top", state->top, "ranked rows printed per platform")->check(integer_in(1, 1 << 20))->capture_default_str();
  cmd->add_option("--max-candidates", state->max_candidates,
                  "simulate at most the first this many layouts by bound; the rest are listed as not simulated")
      ->check(integer_in(1, 1 << 20))
      ->capture_default_str();
  cmd->add_option("-j,--jobs", state->jobs, "layouts simulated at once, each in a child process")
      ->check(integer_in(1, 1024))
      ->capture_default_str();
  cmd->add_flag("--json", state->json, "print every checked layout as JSON (tools/plot_plan.py reads it)");
  cmd->add_flag("-q,--quiet", state->quiet, "no progress lines on stderr");
  cmd->add_option("--emit-sweep", state->emit_sweep,
                  "write a sweep spec (docs/sweep.md) over the layouts that pass every check, to run with `epsim sweep`")
      ->check(file_name());
  return Command{cmd, [state] { return run(*state); }};
}

}  // namespace epsim::tools
