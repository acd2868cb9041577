// Running one scenario: options -> workload and platform -> simulation.
#include "tools/run_request.hpp"

#include <algorithm>
#include <utility>

#include "core/error.hpp"
#include "sim/platform/platform_loader.hpp"
#include "sim/platform/sim_engine.hpp"
#include "sim/run_memory.hpp"
#include "workloads/model_flops.hpp"
#include "workloads/task_graph_builder.hpp"
#include "tools/option_checks.hpp"
#include "workloads/memory_fit.hpp"
#include "workloads/workload_loader.hpp"

namespace epsim::tools {

namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

SplitOverrides split_overrides(const RunRequest& r) {
  SplitOverrides out = split_set_options(r.overrides);
  if (r.ep) out.workload.push_back("parallel.ep=" + std::to_string(*r.ep));
  if (r.seed) out.workload.push_back("routing.seed=" + std::to_string(*r.seed));
  if (r.allow_oversubscribed_memory) out.workload.push_back("memory.allow_oversubscribed=true");
  if (sim::is_platform_xml(r.platform) && !out.platform.empty())
    throw option_error("--set " + out.platform.front(), "a SimGrid XML platform takes no overrides");
  return out;
}

sim::ReplayOptions replay_options(const RunRequest& r) {
  sim::ReplayOptions o;
  if (r.schedule == "serial")
    o.schedule = sim::Schedule::kSerial;
  else if (r.schedule != "overlap")
    throw option_error("--schedule", "expected serial or overlap, got \"" + r.schedule + "\"");
  if (r.algorithm == "direct")
    o.algorithm = sim::AlltoallAlgorithm::kDirect;
  else if (r.algorithm == "hierarchical")
    o.algorithm = sim::AlltoallAlgorithm::kHierarchical;
  else if (r.algorithm == "low-latency")
    o.algorithm = sim::AlltoallAlgorithm::kLowLatency;
  else if (!r.algorithm.empty())
    throw option_error("--algorithm", "expected direct, hierarchical or low-latency, got \"" + r.algorithm + "\"");
  if (const auto f = parse_fidelity(r.fidelity)) o.fidelity = *f;
  if (r.all_reduce == "ring")
    o.all_reduce = sim::AllReduceAlgorithm::kRing;
  else if (r.all_reduce != "hierarchical")
    throw option_error("--all-reduce", "expected ring or hierarchical, got \"" + r.all_reduce + "\"");
  o.record_link_spans = r.record_link_spans;
  return o;
}

}  // namespace

SplitOverrides split_set_options(const std::vector<std::string>& overrides) {
  SplitOverrides out;
  for (const std::string& o : overrides) {
    if (starts_with(o, "workload."))
      out.workload.push_back(o.substr(9));
    else if (starts_with(o, "platform."))
      out.platform.push_back(o.substr(9));
    else if (starts_with(o, "model.") || starts_with(o, "parallel.") || starts_with(o, "precision.") ||
             starts_with(o, "routing.") || starts_with(o, "memory."))
      out.workload.push_back(o);
    else
      out.platform.push_back(o);
  }
  return out;
}

std::optional<sim::Fidelity> parse_fidelity(const std::string& fidelity) {
  if (fidelity == "per-flow") return sim::Fidelity::kPerFlow;
  if (fidelity == "aggregated") return sim::Fidelity::kAggregated;
  if (!fidelity.empty())
    throw option_error("--fidelity", "expected per-flow or aggregated, got \"" + fidelity + "\"");
  return std::nullopt;
}

void add_ep_seed_options(CLI::App& cmd, std::optional<int>& ep, std::optional<long long>& seed) {
  cmd.add_option_function<int>("--ep", [&ep](const int& v) { ep = v; },
                               "expert-parallel ranks (same as --set parallel.ep=N)")
      ->check(integer_in(1, 1 << 16));  // parallel.ep's range (workload_loader.cpp)
  cmd.add_option_function<long long>("--seed", [&seed](const long long& v) { seed = v; },
                                     "routing seed (same as --set routing.seed=N)")
      ->check(integer_at_least(0));  // routing.seed's range
}

void add_run_options(CLI::App& cmd, RunRequest& r) {
  cmd.add_option("--platform", r.platform, "cluster TOML, preset name (see `epsim platform list`) or SimGrid XML")
      ->required();
  cmd.add_option("--workload", r.workload, "workload TOML file or preset name (see `epsim workload presets`)")
      ->required();
  cmd.add_option("--set", r.overrides,
                 "override one key (repeatable): model./parallel./precision./routing./memory. keys go to the workload, "
                 "others to the platform; prefix workload. or platform. to choose");
  add_ep_seed_options(cmd, r.ep, r.seed);
  cmd.add_option("--schedule", r.schedule, "serial (no overlap) or overlap (two micro-batches)")
      ->check(one_of({"serial", "overlap"}))
      ->capture_default_str();
  cmd.add_option("--algorithm", r.algorithm,
                 "dispatch/combine: direct, hierarchical (DeepEP-style relay, pipelined) or low-latency (one message "
                 "per token and expert); default hierarchical "
                 "where the scale-out path is slower than the scale-up fabric")
      ->check(one_of({"direct", "hierarchical", "low-latency"}));
  cmd.add_option("--fidelity", r.fidelity,
                 "dispatch/combine timing: per-flow (one activity per rank pair, up to 16 ranks) or aggregated "
                 "(default above 8 ranks)")
      ->check(one_of({"per-flow", "aggregated"}));
  cmd.add_option("--all-reduce", r.all_reduce,
                 "group collectives (gradient sync, TP): ring or hierarchical (mesh in the node on a full-mesh fabric)")
      ->check(one_of({"ring", "hierarchical"}))
      ->capture_default_str();
  cmd.add_flag("--allow-oversubscribed-memory", r.allow_oversubscribed_memory,
               "simulate the step even when a rank's memory exceeds its HBM (same as --set "
               "memory.allow_oversubscribed=true)");
  cmd.add_flag("--simgrid-log", r.simgrid_log, "keep SimGrid's own log output");
  cmd.add_option("--cfg", r.simgrid_config,
                 "extra SimGrid setting name:value (repeatable; the allowed ones are listed in docs/simulator.md)")
      ->check(CLI::Validator([](std::string& s) { return sim::engine_setting_refusal(s); }, "NAME:VALUE"));
}

RunRequest parse_run_request(const std::vector<std::string>& args) {
  RunRequest request;
  CLI::App app{"run"};
  add_run_options(app, request);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 consumes from the back
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    throw InputError({}, "", e.what());
  }
  return request;
}

// The replay refuses per-flow fidelity at scale; say it by the flag.
void check_fidelity(const sim::ReplayOptions& o, const workloads::WorkloadSpec& w) {
  if (o.fidelity == sim::Fidelity::kPerFlow) {
    const std::string why = sim::per_flow_refusal(w.parallel.world());
    if (!why.empty()) throw option_error("--fidelity", why);
  }
}

// What a rank of `w` holds in HBM as epsim's step runs it.
sim::MemoryRequest memory_request(const workloads::WorkloadSpec& w) {
  return {workloads::memory_per_rank(w.model, workloads::current_memory_inputs(w)), w.memory.allow_oversubscribed,
          w.source};
}

// The workload and the platform's verdict, checked as far as possible before
// anything is sampled or built: the ranks fit the platform, the run's memory
// estimate the limit, a rank's HBM its NPU (a cluster names its HBM here; an
// XML's is checked when the run opens it).
struct CheckedJob {
  workloads::WorkloadSpec workload;
  sim::PlatformShape platform;
};

CheckedJob check_job(const RunRequest& r, const SplitOverrides& overrides, const sim::ReplayOptions& options) {
  CheckedJob job{workloads::load_workload(r.workload, overrides.workload), {}};
  const workloads::WorkloadSpec& w = job.workload;
  check_fidelity(options, w);
  // check_platform runs an XML's checks in a child process.
  job.platform = sim::check_platform(sim::PlatformRequest{r.platform, overrides.platform});
  sim::check_ranks_fit(job.platform, w.parallel.world(), w.parallel.ranks_per_node);
  sim::check_run_memory(job.platform, w);
  if (job.platform.cluster)
    sim::enforce_memory_fit(memory_request(w), job.platform.cluster->npu.hbm_capacity_bytes);
  return job;
}

// What the report says it is about: platform, workload, layout, batch and
// the model FLOPs its throughput is counted in.
static sim::Scenario describe(const RunRequest& r, const workloads::WorkloadSpec& w) {
  const workloads::ParallelSpec& p = w.parallel;
  sim::Scenario s{r.platform, "", "", r.workload, w.model.name, p.ep, p.dp,
                  p.ranks_per_node, static_cast<long long>(w.routing.seed), r.overrides};
  s.tp = p.tp;
  s.pp = p.pp;
  s.vpp = p.schedule == workloads::PipelineSchedule::kInterleaved ? p.vpp : 1;
  s.etp = p.etp;
  s.edp = p.edp();
  s.pipeline_schedule = to_string(p.schedule);
  s.micro_batches = p.micro_batches;
  s.micro_batch = p.micro_batch;
  s.sequence_length = p.sequence_length;
  s.global_batch = p.global_batch;
  const workloads::ModelFlops flops = workloads::model_flops(w);
  s.model_flops_per_token = flops.per_token();
  s.active_params = flops.active_params;
  s.mfu_dtype = w.precision.gemm;
  s.routing = workloads::routing_placement(w);
  return s;
}

RunOutcome run_request(const RunRequest& r) {
  const SplitOverrides overrides = split_overrides(r);
  sim::ReplayOptions options = replay_options(r);
  sim::EngineOptions engine;
  engine.simgrid_logs = r.simgrid_log;
  engine.extra_config = r.simgrid_config;

  RunOutcome out;
  CheckedJob job = check_job(r, overrides, options);
  const workloads::WorkloadSpec& w = job.workload;
  options.compute_fallback = w.precision.gemm_fallback;
  // The platform's own name and NPU model are filled in by simulate().
  const sim::Scenario scenario = describe(r, w);
  // The routing is drawn while the platform loads and the replay runs.
  workloads::RoutingStream routing(w);
  out.graph = workloads::build_task_graph(w, routing.placeholder());
  const sim::RoutingFeed feed = [&](int job) { workloads::fill_routing(out.graph, w, job, routing.take(job)); };
  out.simulation =
      sim::simulate(std::move(job.platform), out.graph, options, engine, scenario, memory_request(w), &feed);
  return out;
}

double check_run_request(const RunRequest& r) {
  const CheckedJob job = check_job(r, split_overrides(r), replay_options(r));
  return sim::estimate_run_memory(job.platform, job.workload).total_bytes();
}

}  // namespace epsim::tools
