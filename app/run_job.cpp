// Running one scenario: request -> checked workload and platform -> the
// step's replays -> report.
#include "app/run_job.hpp"

#include <utility>

#include <fmt/format.h>

#include "app/step_replay.hpp"
#include "core/error.hpp"
#include "core/memory_limit.hpp"
#include "sim/platform/platform_loader.hpp"
#include "sim/run_memory.hpp"
#include "workloads/memory_fit.hpp"
#include "workloads/serving_ledger.hpp"
#include "workloads/serving_memory.hpp"
#include "workloads/model_flops.hpp"
#include "workloads/routing_stream.hpp"
#include "workloads/task_graph_builder.hpp"
#include "workloads/workload_loader.hpp"

namespace epsim::app {

namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// The user's --set split between workload and platform; an XML takes none.
SplitOverrides split_overrides(const RunRequest& r) {
  SplitOverrides out = split_set_options(r.overrides);
  if (sim::is_platform_xml(r.platform) && !out.platform.empty())
    throw option_error("--set " + out.platform.front(), "a SimGrid XML platform takes no overrides");
  return out;
}

// The request's edits, then its own options (their errors read as the --set each equals).
workloads::WorkloadEdits job_edits(const RunRequest& r) {
  workloads::WorkloadEdits e = r.edits;
  if (r.ep) e.ep = workloads::Edit<int>{*r.ep, ""};
  if (r.seed) e.seed = workloads::Edit<std::int64_t>{*r.seed, ""};
  if (r.allow_oversubscribed_memory) e.allow_oversubscribed = workloads::Edit<bool>{true, ""};
  return e;
}

workloads::WorkloadSpec load_split_workload(const RunRequest& r, const SplitOverrides& overrides) {
  return workloads::load_workload(r.workload, overrides.workload, job_edits(r));
}

sim::ReplayOptions replay_options(const RunRequest& r) {
  sim::ReplayOptions o;
  o.schedule = r.schedule;
  o.algorithm = r.algorithm;
  o.fidelity = r.fidelity;
  o.all_reduce = r.all_reduce;
  o.record_link_spans = r.record_link_spans;
  return o;
}

// The replay refuses per-flow fidelity at scale; say it by the flag.
void check_fidelity(const sim::ReplayOptions& o, const workloads::WorkloadSpec& w) {
  if (o.fidelity == sim::Fidelity::kPerFlow) {
    const std::string why = sim::per_flow_refusal(w.parallel.world());
    if (!why.empty()) throw option_error("--fidelity", why);
  }
}

// What a rank of `w` holds in HBM as epsim's step runs it.
sim::MemoryRequest memory_request(const workloads::WorkloadSpec& w, double capacity_bytes = 0) {
  if (w.serving) {
    const std::int64_t largest = workloads::largest_serving_batch(w, capacity_bytes);
    return {workloads::serving_memory_per_rank(w), w.memory.allow_oversubscribed, w.source, "serving.batch",
            w.serving->batch_given_at,
            largest > 0 ? fmt::format("the largest batch that fits is {} sequences per rank", largest)
                        : "not even the weights and one sequence per micro-batch fit: use more ranks (ep, dp) or tp"};
  }
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
  StepPlan plan;
};

// What the run holds at its largest: the replayed spec with the most
// micro-batches a replay of the plan covers.
workloads::WorkloadSpec largest_replay(const StepPlan& plan) {
  return plan.steady ? with_micro_batches(plan.replayed, plan.steady->first + plan.steady->delta) : plan.replayed;
}

// The micro-batches of routing held beside a replay's own: the first
// steady-state replay's draws, kept for the next (run_job).
int kept_micro_batches(const StepPlan& plan) { return plan.steady ? plan.steady->first : 0; }

// `workload`: the request's, loaded; `platform`: the platform's verdict
// when the caller has it, else checked here.
CheckedJob checked_job(const RunRequest& r, workloads::WorkloadSpec workload, const SplitOverrides& overrides,
                       const sim::ReplayOptions& options, const sim::PlatformShape* platform = nullptr) {
  CheckedJob job{std::move(workload), {}, {}};
  const workloads::WorkloadSpec& w = job.workload;
  check_fidelity(options, w);
  job.plan = plan_step(w, r.exact);
  // check_platform runs an XML's checks in a child process.
  job.platform = platform ? *platform : sim::check_platform(sim::PlatformRequest{r.platform, overrides.platform, r.stack});
  sim::check_ranks_fit(job.platform, w.parallel.world(), w.parallel.ranks_per_node);
  const workloads::WorkloadSpec largest = largest_replay(job.plan);
  workloads::check_traffic_memory(largest);
  sim::check_run_memory(job.platform, largest, kept_micro_batches(job.plan));
  if (job.platform.cluster)
    sim::enforce_memory_fit(memory_request(w, job.platform.cluster->npu.hbm_capacity_bytes),
                            job.platform.cluster->npu.hbm_capacity_bytes);
  return job;
}

// What the report says it is about: platform, workload, layout, batch and
// the model FLOPs its throughput is counted in.
sim::Scenario describe(const RunRequest& r, const workloads::WorkloadSpec& w) {
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
  s.model_flops_per_token = w.serving ? flops.forward_per_token() : flops.per_token();
  if (w.serving) {
    s.serving_phase = to_string(w.serving->phase);
    s.serving_batch = w.serving->batch;
    s.serving_context = w.serving->cached_tokens();
    s.serving_tokens_per_sequence = w.serving->served_tokens();
    s.serving_steps_to_first_token = w.serving->prefill_steps();
    const workloads::ServingLedger ledger = workloads::serving_ledger(w);
    s.serving_weight_bytes = ledger.weight_bytes;
    s.serving_cache_bytes = ledger.cache_bytes;
    s.serving_flops = ledger.flops;
    s.serving_handoff_bytes = ledger.handoff_bytes;
  }
  s.active_params = flops.active_params;
  s.mfu_dtype = w.precision.gemm;
  s.routing = workloads::routing_placement(w);
  return s;
}

// What a prefill rank's KV cache leaves its unit over for the decode pool:
// its supernode port (the pools share the supernode), else its NIC (a
// node's one NIC split over its ranks).
double handoff_Bps_per_rank(const topology::ClusterSpec& c, int ranks_per_node) {
  if (c.supernode) return c.supernode->effective_port_bandwidth_Bps();
  if (!c.scaleout) return 0;
  const double nic = c.scaleout->effective_nic_bandwidth_Bps();
  return c.scaleout->nic_per_npu ? nic : nic / ranks_per_node;
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
             starts_with(o, "routing.") || starts_with(o, "memory.") || starts_with(o, "serving."))
      out.workload.push_back(o);
    else
      out.platform.push_back(o);
  }
  return out;
}

RunOutcome run_job(const RunRequest& r, const RunProgress& progress) {
  const SplitOverrides overrides = split_overrides(r);
  sim::ReplayOptions options = replay_options(r);
  sim::EngineOptions engine;
  engine.simgrid_logs = r.simgrid_log;
  engine.extra_config = r.simgrid_config;

  if (progress) progress({"checking the inputs", 0, 0});
  CheckedJob job = checked_job(r, load_split_workload(r, overrides), overrides, options);
  const workloads::WorkloadSpec& w = job.workload;
  options.compute_fallback = w.precision.gemm_fallback;
  options.decode = w.decoding();
  // The platform's own name and NPU model are filled in by simulate_on().
  sim::Scenario scenario = describe(r, w);
  if (job.platform.cluster && w.serving && w.serving->prefill()) {
    scenario.serving_handoff_Bps = handoff_Bps_per_rank(*job.platform.cluster, w.parallel.ranks_per_node);
    scenario.serving_handoff_over = job.platform.cluster->supernode ? "supernode port" : "NIC";
  }
  const sim::MemoryRequest memory =
      memory_request(w, job.platform.cluster ? job.platform.cluster->npu.hbm_capacity_bytes : 0);
  const StepPlan& plan = job.plan;
  // A steady state not reached falls back to every micro-batch: the memory that needs, checked then.
  const sim::RunMemory fallback_memory =
      sim::estimate_run_memory(job.platform, plan.replayed, kept_micro_batches(plan));

  if (progress) progress({"loading the platform", 0, 0});
  sim::OpenPlatform open = sim::open_platform(std::move(job.platform), engine);
  bool resolved = false;
  sim::SharedLinks shared;
  std::string phase;
  StepHooks hooks;
  hooks.started = [&](int index, int count, int micro_batches) {
    phase = count == 1 ? fmt::format("replay of {} micro-batches", micro_batches)
                       : fmt::format("replay {} of {}: {} micro-batches", index, count, micro_batches);
  };
  hooks.falling_back = [&](const std::string& why) {
    if (fallback_memory.total_bytes() > memory_limit_GiB() * kBytesPerGiB)
      throw InputError(w.parallel.ranks_given_at, "parallel.micro_batches",
                       fmt::format("{}, but every micro-batch needs an estimated {:.1f} GiB, {}; replay with "
                                   "--exact full and a higher limit, or fewer micro-batches",
                                   why, fallback_memory.total_bytes() / kBytesPerGiB, memory_limit_clause()));
  };
  if (progress) options.on_progress = [&](double sim_s, double done) { progress({phase, sim_s, done}); };
  // One replay of `spec` on the open platform, its routing drawn while it
  // runs. The first of a steady state's replays keeps its layers; the
  // next (and a fallback to every micro-batch) takes them instead of drawing.
  workloads::KeptRouting kept;
  const ReplaySpec replay = [&](const workloads::WorkloadSpec& spec, const sim::Scenario& about) {
    Replayed run;
    const bool first_of_two = plan.steady && spec.parallel.micro_batches == plan.steady->first;
    workloads::RoutingStream routing(spec, 0, &kept, first_of_two ? &kept : nullptr);
    run.graph = workloads::build_task_graph(spec, routing.placeholder());
    if (!resolved) options = sim::resolve_for(open.loaded, run.graph, options, &shared);
    resolved = true;
    const sim::RoutingFeed feed = [&](int job) { workloads::fill_routing(run.graph, spec, job, routing.take(job)); };
    run.simulation = sim::simulate_on(open, run.graph, options, about, memory, &feed);
    sim::Reduction& reduction = run.simulation.report.reduction;
    reduction.shared_links = shared.scaled;
    for (int l : shared.unscaled) {
      const sim::LinkFacts& link = open.loaded.facts.links[static_cast<std::size_t>(l)];
      const double bytes = spec.parallel.folded_replicas * run.simulation.timeline.link_bytes[static_cast<std::size_t>(l)];
      reduction.unscaled_links.push_back(
          {link.name, bytes, link.bandwidth_Bps, bytes / (link.bandwidth_Bps * run.simulation.timeline.step_s)});
    }
    return run;
  };
  Replayed step = replay_step(w, plan, scenario, replay, open.loaded.facts, hooks);
  RunOutcome out{std::move(step.graph), std::move(step.simulation)};
  out.simulation.platform = std::move(open.loaded.facts);
  return out;
}

workloads::WorkloadSpec load_job_workload(const RunRequest& r) { return load_split_workload(r, split_overrides(r)); }

double check_job(const RunRequest& r) {
  const SplitOverrides overrides = split_overrides(r);
  const CheckedJob job = checked_job(r, load_split_workload(r, overrides), overrides, replay_options(r));
  return sim::estimate_run_memory(job.platform, largest_replay(job.plan), kept_micro_batches(job.plan)).total_bytes();
}

double check_job(const RunRequest& r, const sim::PlatformShape& platform) {
  const SplitOverrides overrides = split_overrides(r);
  const CheckedJob job = checked_job(r, load_split_workload(r, overrides), overrides, replay_options(r), &platform);
  return sim::estimate_run_memory(job.platform, largest_replay(job.plan), kept_micro_batches(job.plan)).total_bytes();
}

double check_job(const RunRequest& r, const sim::PlatformShape& platform, const workloads::WorkloadSpec& workload) {
  const CheckedJob job = checked_job(r, workload, split_overrides(r), replay_options(r), &platform);
  return sim::estimate_run_memory(job.platform, largest_replay(job.plan), kept_micro_batches(job.plan)).total_bytes();
}

}  // namespace epsim::app
