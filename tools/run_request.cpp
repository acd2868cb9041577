// The run options on the command line, and their typed request.
#include "tools/run_request.hpp"

#include "core/error.hpp"
#include "sim/platform/sim_engine.hpp"
#include "tools/option_checks.hpp"

namespace epsim::tools {

void add_ep_seed_options(CLI::App& cmd, std::optional<int>& ep, std::optional<long long>& seed) {
  cmd.add_option_function<int>("--ep", [&ep](const int& v) { ep = v; },
                               "expert-parallel ranks (same as --set parallel.ep=N)")
      ->check(integer_in(1, 1 << 16));  // parallel.ep's range (workload_loader.cpp)
  cmd.add_option_function<long long>("--seed", [&seed](const long long& v) { seed = v; },
                                     "routing seed (same as --set routing.seed=N)")
      ->check(integer_at_least(0));  // routing.seed's range
}

void add_run_options(CLI::App& cmd, RunOptions& r) {
  cmd.add_option("--platform", r.platform, "cluster TOML, preset name (see `epsim platform list`) or SimGrid XML")
      ->required();
  cmd.add_option("--workload", r.workload, "workload TOML file or preset name (see `epsim workload presets`)")
      ->required();
  cmd.add_option("--set", r.overrides,
                 "override one key (repeatable): model./parallel./precision./routing./memory. keys go to the workload, "
                 "others to the platform; prefix workload. or platform. to choose");
  cmd.add_option("--stack", r.stack,
                 "software stack (kernel libraries, framework costs) in place of the platform's own: a preset in "
                 "stacks/ or a stack TOML (docs/stacks.md)")
      ->check(file_name());
  add_ep_seed_options(cmd, r.ep, r.seed);
  cmd.add_option("--schedule", r.schedule, "serial (no overlap) or overlap (two micro-batches)")
      ->check(one_of(app::name_list(app::kScheduleNames)))
      ->capture_default_str();
  cmd.add_option("--algorithm", r.algorithm,
                 "dispatch/combine: direct, hierarchical (DeepEP-style relay, pipelined) or low-latency (one message "
                 "per token and expert); default hierarchical "
                 "where the scale-out path is slower than the scale-up fabric")
      ->check(one_of(app::name_list(app::kAlltoallNames)));
  cmd.add_option("--fidelity", r.fidelity,
                 "dispatch/combine timing: per-flow (one activity per rank pair, up to 16 ranks) or aggregated "
                 "(default above 8 ranks)")
      ->check(one_of(app::name_list(app::kFidelityNames)));
  cmd.add_option("--all-reduce", r.all_reduce,
                 "group collectives (gradient sync, TP): ring or hierarchical (mesh in the node on a full-mesh fabric)")
      ->check(one_of(app::name_list(app::kAllReduceNames)))
      ->capture_default_str();
  cmd.add_flag("--allow-oversubscribed-memory", r.allow_oversubscribed_memory,
               "simulate the step even when a rank's memory exceeds its HBM (same as --set "
               "memory.allow_oversubscribed=true)");
  cmd.add_option("--exact", r.exact,
                 "auto: replay one of a stage's identical EP groups and carry the pipeline's steady state in closed "
                 "form where that is exact; full: replay every rank and micro-batch")
      ->check(one_of(app::name_list(app::kExactnessNames)))
      ->capture_default_str();
  cmd.add_flag("--simgrid-log", r.simgrid_log, "keep SimGrid's own log output");
  cmd.add_option("--cfg", r.simgrid_config,
                 "extra SimGrid setting name:value (repeatable; the allowed ones are listed in docs/simulator.md)")
      ->check(CLI::Validator([](std::string& s) { return sim::engine_setting_refusal(s); }, "NAME:VALUE"));
}

app::RunRequest to_request(const RunOptions& o) {
  app::RunRequest r;
  r.platform = o.platform;
  r.workload = o.workload;
  r.overrides = o.overrides;
  r.stack = o.stack;
  r.ep = o.ep;
  r.seed = o.seed;
  r.schedule = app::parse_named(app::kScheduleNames, o.schedule, "--schedule");
  r.algorithm = app::parse_named_or_default(app::kAlltoallNames, o.algorithm, "--algorithm");
  r.fidelity = app::parse_named_or_default(app::kFidelityNames, o.fidelity, "--fidelity");
  r.all_reduce = app::parse_named(app::kAllReduceNames, o.all_reduce, "--all-reduce");
  r.exact = app::parse_named(app::kExactnessNames, o.exact, "--exact");
  r.allow_oversubscribed_memory = o.allow_oversubscribed_memory;
  r.simgrid_log = o.simgrid_log;
  r.simgrid_config = o.simgrid_config;
  return r;
}

app::RunRequest parse_run_request(const std::vector<std::string>& args) {
  RunOptions request;
  CLI::App app{"run"};
  add_run_options(app, request);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 consumes from the back
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    throw InputError({}, "", e.what());
  }
  return to_request(request);
}

}  // namespace epsim::tools
