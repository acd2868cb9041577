// `epsim run --platform P --workload W [--set k=v]... [--ep N] [--seed N]
//   [--schedule serial|overlap] [--algorithm direct|hierarchical|low-latency] [--fidelity per-flow|aggregated]
//   [--all-reduce ring|hierarchical] [--json] [--trace FILE]`:
// replays one training step on SimGrid and prints the report with bounds.
// The options and the simulation itself are in run_request.hpp (sweeps share them).
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "sim/report/report.hpp"
#include "sim/report/trace.hpp"
#include "tools/command.hpp"
#include "tools/option_checks.hpp"
#include "tools/output_file.hpp"
#include "tools/progress.hpp"
#include "tools/run_request.hpp"

namespace epsim::tools {

namespace {

struct RunState {
  RunOptions options;
  bool json = false;
  std::string trace;
  bool quiet = false;
  bool progress = false;
  int trace_links = sim::TraceOptions{}.counter_links;
};

int run(const RunState& s) {
  app::RunRequest request = to_request(s.options);
  request.record_link_spans = !s.trace.empty();
  std::optional<OutputFile> trace;  // opened before the simulation, so a bad path costs nothing
  if (!s.trace.empty()) {
    refuse_input_as_output("--trace", s.trace,
                           {{"--platform", s.options.platform}, {"--workload", s.options.workload}});
    trace.emplace("--trace", s.trace);
  }
  app::RunOutcome outcome;
  {
    ProgressLine progress(!s.quiet && (s.progress || stderr_is_terminal()));
    outcome = app::run_job(request, progress.callback());
  }
  const sim::Simulation& result = outcome.simulation;
  std::cout << (s.json ? sim::format_json(result.report) : sim::format_table(result.report));
  if (trace) {
    sim::TraceOptions options;
    options.counter_links = s.trace_links;
    options.counter_hbms = (s.trace_links + 3) / 4;
    options.critical_path = result.report.gap.path_intervals;
    sim::write_trace(trace->stream(), result.timeline, result.platform, result.placement, outcome.graph, options);
    trace->close();
    std::cerr << "epsim: trace written to " << s.trace << " (open it in https://ui.perfetto.dev)\n";
  }
  return 0;
}

}  // namespace

Command add_run_command(CLI::App& epsim) {
  auto state = std::make_shared<RunState>();
  CLI::App* cmd = epsim.add_subcommand("run", "replay one training step on SimGrid: report with bounds, trace");
  add_run_options(*cmd, state->options);
  cmd->add_flag("--json", state->json, "print the report as JSON");
  cmd->add_flag("-q,--quiet", state->quiet, "no progress line on stderr");
  cmd->add_flag("--progress", state->progress,
                "a progress line on stderr for runs longer than 2 s even when stderr is not a terminal");
  cmd->add_option("--trace", state->trace, "write a Chrome trace (Perfetto) of the step to this file")
      ->check(file_name());
  cmd->add_option("--trace-links", state->trace_links,
                  "utilisation counters in the trace for this many most utilised network links (and a quarter as "
                  "many HBMs)")
      ->check(integer_in(0, 1 << 20))
      ->capture_default_str();
  return Command{cmd, [state] { return run(*state); }};
}

}  // namespace epsim::tools
