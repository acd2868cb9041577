// `epsim plan --platform P [--platform Q ...] --workload W [--set k=v]... [--npus N]
//   [--global-batch B] [--micro-batch-sizes 1,2,4] [--top K] [--max-candidates N] [-j J]
//   [--json] [--emit-sweep FILE] [--results FILE|none]`: which layout, for this model, on this cluster
// (docs/plan.md). The search is app/plan_search.hpp's.
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "app/plan_report.hpp"
#include "app/plan_search.hpp"
#include "tools/plan_results.hpp"
#include "tools/plan_sweep_file.hpp"
#include "core/error.hpp"
#include "core/input_file.hpp"
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
  std::string results;  // "" = the default file; "none" = no results file
};

// What a layout's step depends on besides its layout: the options that
// shape the layouts and their steps (not --top, -j, --json, -q, the
// outputs, nor --max-candidates: a larger one reuses the smaller one's steps).
std::vector<std::string> digest_arguments(const PlanState& s) {
  std::vector<std::string> args = {"--workload", s.workload, "--stack", s.stack};
  for (const std::string& p : s.platforms) args.insert(args.end(), {"--platform", p});
  for (const std::string& o : s.overrides) args.insert(args.end(), {"--set", o});
  args.insert(args.end(), {"--npus", s.npus ? std::to_string(*s.npus) : "", "--global-batch",
                           s.global_batch ? std::to_string(*s.global_batch) : ""});
  for (const std::string& m : s.micro_batch_sizes) args.insert(args.end(), {"--micro-batch-sizes", m});
  return args;
}

// The results file, locked, or none (--results none). The inputs are read
// once here, as the search reads them first, to digest their contents.
std::optional<PlanResultsFile> open_results(const PlanState& s, const std::vector<app::PlanRequest>& requests,
                                            const std::vector<NamedInput>& inputs) {
  if (s.results == "none") return std::nullopt;
  InputFileLog log;
  for (const app::PlanRequest& r : requests) app::check_plan_inputs(r);
  const std::string digest = plan_digest(digest_arguments(s), log.files());
  const std::string path = s.results.empty() ? default_plan_results(digest) : s.results;
  check_output_path("--results", path);
  refuse_input_as_output("--results", path, inputs);
  return std::optional<PlanResultsFile>(std::in_place, path, digest);
}

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
  std::vector<NamedInput> inputs = {{"--workload", s.workload}};
  for (const std::string& platform : s.platforms) inputs.push_back({"--platform", platform});
  if (!s.stack.empty()) inputs.push_back({"--stack", s.stack});
  std::optional<OutputFile> sweep;  // opened before the search, so a bad path costs nothing
  if (!s.emit_sweep.empty()) {
    refuse_input_as_output("--emit-sweep", s.emit_sweep, inputs);
    sweep.emplace("--emit-sweep", s.emit_sweep);
  }
  std::vector<app::PlanRequest> requests;
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
    requests.push_back(request);
  }
  std::optional<PlanResultsFile> store = open_results(s, requests, inputs);
  if (store && !s.quiet)
    std::cerr << fmt::format("epsim plan: results in {} ({} finished earlier)\n", store->path(), store->records());
  std::vector<app::PlanResult> results;
  for (app::PlanRequest& request : requests) {
    if (store) {
      request.earlier = [&store](const std::string& key) { return store->earlier(key); };
      request.finished = [&store](const std::string& key, const std::string& step) { store->finished(key, step); };
    }
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
  cmd->add_option("--results", state->results,
                  "append each simulated layout to this JSON-lines file and reuse the ones an earlier plan of the "
                  "same inputs finished (default: $XDG_CACHE_HOME/epsim/plan/DIGEST.jsonl; none: no file)")
      ->check(file_name());
  return Command{cmd, [state] { return run(*state); }};
}

}  // namespace epsim::tools
