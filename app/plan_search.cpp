// The plan's search: checks, bounds, simulations in children, pruning, ranking.
#include "app/plan_search.hpp"

#include <algorithm>
#include <limits>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/child_job.hpp"
#include "app/plan_bound.hpp"
#include "app/plan_comm_bound.hpp"
#include "core/error.hpp"
#include "sim/platform/platform_loader.hpp"
#include "sim/report/report.hpp"
#include "workloads/memory_fit.hpp"
#include "workloads/workload_loader.hpp"

namespace epsim::app {

namespace {

// The platform as every layout sees it, checked once.
struct PlanPlatform {
  sim::PlatformShape shape;
  int npus = 0;
  PlanRates rates;  // for the workload's GEMM dtype
  PlanLinks links;
};

PlanPlatform check_plan_platform(const PlanRequest& r, const workloads::PrecisionSpec& precision) {
  const SplitOverrides split = split_set_options(r.base.overrides);
  PlanPlatform out;
  out.shape = sim::check_platform(sim::PlatformRequest{r.base.platform, split.platform, r.base.stack});
  if (!out.shape.cluster)
    throw option_error("--platform", r.base.platform + ": a SimGrid XML platform names no HBM to fit layouts in; "
                                                       "give a cluster TOML or preset");
  out.rates = plan_rates(*out.shape.cluster, precision);
  out.links = plan_links(*out.shape.cluster);
  const int all = out.shape.nodes * out.shape.npus_per_node;
  out.npus = r.npus.value_or(all);
  if (out.npus > all || out.npus % out.shape.npus_per_node != 0)
    throw option_error("--npus", fmt::format("expected a multiple of the {} NPUs of a node of {}, at most its {} "
                                             "NPUs, got {}",
                                             out.shape.npus_per_node, r.base.platform, all, out.npus));
  return out;
}

// The layout `w` itself runs, at `global_batch` sequences per step.
PlanLayout layout_of(const workloads::WorkloadSpec& w, std::int64_t global_batch) {
  const workloads::ParallelSpec& p = w.parallel;
  PlanLayout l;
  l.tp = p.tp;
  l.pp = p.pp;
  l.vpp = p.schedule == workloads::PipelineSchedule::kInterleaved ? p.vpp : 1;
  l.ep = p.ep;
  l.etp = p.etp;
  l.dp = p.dp;
  l.micro_batch = p.micro_batch;
  l.global_batch = global_batch;
  l.schedule = p.schedule;
  l.recompute = w.memory.recompute;
  l.modules = w.memory.modules;
  l.zero_stage = w.memory.zero_stage;
  return l;
}

// The base request made `layout` on this platform: the user's --set, then
// the layout's edits.
RunRequest layout_request(const PlanRequest& r, const PlanPlatform& platform, const PlanLayout& l) {
  RunRequest request = r.base;
  request.edits = l.edits();
  request.edits.ranks_per_node = workloads::Edit<int>{platform.shape.npus_per_node, ""};
  // A plan's layouts must fit: a workload that simulates oversubscribed steps is held to its HBM here.
  request.edits.allow_oversubscribed = workloads::Edit<bool>{false, ""};
  request.allow_oversubscribed_memory = false;
  return request;
}

// The loader's and the run's verdict on one layout; its bound and memory
// when it loads. The workload is read once, as `run` reads it
// (load_job_workload), and checked on as `run` checks it.
PlanCandidate check_candidate(const PlanRequest& r, const PlanPlatform& platform, const PlanLayout& l) {
  PlanCandidate c;
  c.layout = l;
  const RunRequest request = layout_request(r, platform, l);
  try {
    const workloads::WorkloadSpec w = load_job_workload(request);
    c.compute_bound_s = plan_step_bound_s(w, platform.rates);
    c.comm_bound_s = plan_comm_bound_s(w, platform.links, plan_fill_drain_s(w, platform.rates));
    c.bound_s = std::max(c.compute_bound_s, c.comm_bound_s);
    c.memory_bytes = workloads::memory_per_rank(w.model, workloads::current_memory_inputs(w)).total_bytes();
    check_job(request, platform.shape, w);
    c.status = PlanStatus::kSimulated;  // until the search decides otherwise
  } catch (const InputError& e) {
    c.key = e.key();
    c.status = e.key() == "memory"                                                 ? PlanStatus::kMemory
               : e.problem().find("EPSIM_MEMORY_LIMIT_GIB") != std::string::npos ? PlanStatus::kTooLarge
                                                                                  : PlanStatus::kInvalid;
  }
  return c;
}

nlohmann::json step_json(const sim::Report& report) {
  nlohmann::json phases = nlohmann::json::array();
  // Over every rank, not only those that run the kind (a report's compute
  // rows are means over their ranks): layouts with different pipeline
  // splits compare like for like.
  for (const sim::ReportRow& row : report.phases)
    phases.push_back({row.name, row.ranks_running > 0 && report.ranks > 0
                                    ? row.sim_s * row.ranks_running / report.ranks
                                    : row.sim_s});
  return {{"step_s", report.step.sim_s},
          {"replay_bound_s", report.step.bound_s},
          {"tokens_per_s_per_npu", report.has_throughput ? report.throughput.tokens_per_s_per_npu : 0.0},
          {"mfu", report.has_throughput ? report.throughput.mfu : 0.0},
          {"exposed_comm_s", report.exposed_comm_mean_s},
          {"bubble_s", report.idle_pipeline_mean_s},
          {"phases", phases}};
}

PlanStep step_from_json(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text);
  PlanStep s;
  s.step_s = j["step_s"].get<double>();
  s.replay_bound_s = j["replay_bound_s"].get<double>();
  s.tokens_per_s_per_npu = j["tokens_per_s_per_npu"].get<double>();
  s.mfu = j["mfu"].get<double>();
  s.exposed_comm_s = j["exposed_comm_s"].get<double>();
  s.bubble_s = j["bubble_s"].get<double>();
  for (const nlohmann::json& p : j["phases"]) s.phases.emplace_back(p[0].get<std::string>(), p[1].get<double>());
  return s;
}

std::string error_text(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  }
}

// Simulates `own` (the workload's own layout, if it passed the checks),
// then the first request.max_candidates of `order` (indices into
// `candidates`, best bound first), skipping any whose bound is already
// slower than the best step heard back.
void simulate_in_order(const PlanRequest& r, const PlanPlatform& platform, std::vector<PlanCandidate>& candidates,
                       const std::vector<std::size_t>& order, std::optional<std::size_t> own) {
  std::size_t next = 0;
  double best_s = std::numeric_limits<double>::infinity();
  int started = 0, finished = 0;
  const std::size_t eligible = std::min(order.size(), static_cast<std::size_t>(std::max(0, r.max_candidates)));
  // A step an earlier plan found is taken as it stands (one that does not parse is simulated again).
  const auto take_earlier = [&](PlanCandidate& c) {
    if (!r.earlier) return false;
    const std::optional<std::string> text = r.earlier(plan_record_key(r.base.platform, c.layout));
    if (!text) return false;
    try {
      c.step = step_from_json(*text);
    } catch (const std::exception&) {
      return false;
    }
    c.reused = true;
    best_s = std::min(best_s, c.step->step_s);
    if (r.progress)
      r.progress(fmt::format("{}: {} found by an earlier plan: {:.4f} s", r.base.platform, c.layout.name(),
                             c.step->step_s));
    return true;
  };
  const auto next_job = [&]() -> std::optional<ChildJob> {
    for (;;) {
      std::size_t index = 0;
      if (own) {  // the workload's own layout first, whatever its bound
        index = *own;
        own.reset();
      } else {
        if (next >= eligible || candidates[order[next]].bound_s > best_s) return std::nullopt;  // sorted: none after can win
        index = order[next++];
      }
      if (take_earlier(candidates[index])) continue;
      ++started;
      const RunRequest request = layout_request(r, platform, candidates[index].layout);
      return ChildJob{std::to_string(index), [request] { return step_json(run_job(request).simulation.report).dump(); }};
    }
  };
  const auto done = [&](const ChildJob& job, ChildVerdict verdict) {
    PlanCandidate& c = candidates[std::stoul(job.what)];
    ++finished;
    if (verdict.error) {
      c.status = PlanStatus::kFailed;
      c.key = error_text(verdict.error);
    } else {
      c.step = step_from_json(verdict.output);
      best_s = std::min(best_s, c.step->step_s);
      if (r.finished) r.finished(plan_record_key(r.base.platform, c.layout), verdict.output);
    }
    if (r.progress)
      r.progress(fmt::format("{}: simulated {} ({} of {} started): {}", r.base.platform, c.layout.name(), finished,
                             started, c.step ? fmt::format("{:.4f} s", c.step->step_s) : "failed"));
  };
  run_child_jobs(r.parallel, next_job, done);
}

// Each candidate's final status, the same whatever order the children
// finished in: a bound slower than the best step cannot win, whether or
// not it ran; below it every eligible candidate ran.
void settle(std::vector<PlanCandidate>& candidates, const std::vector<std::size_t>& order, int max_candidates) {
  double best_s = std::numeric_limits<double>::infinity();
  for (const PlanCandidate& c : candidates)
    if (c.step) best_s = std::min(best_s, c.step->step_s);
  for (std::size_t rank = 0; rank < order.size(); ++rank) {
    PlanCandidate& c = candidates[order[rank]];
    if (c.status == PlanStatus::kFailed) continue;
    if (c.bound_s > best_s) {
      c.status = PlanStatus::kBound;
      c.step.reset();
    } else if (static_cast<int>(rank) >= max_candidates) {
      c.status = PlanStatus::kNotSimulated;
    }
  }
}

std::string prune_reason(const PlanCandidate& c) {
  switch (c.status) {
    case PlanStatus::kInvalid: return "invalid: " + c.key;
    case PlanStatus::kMemory: return "memory: does not fit HBM";
    case PlanStatus::kTooLarge: return "too large to simulate here (EPSIM_MEMORY_LIMIT_GIB)";
    case PlanStatus::kBound:
      return c.bound_by_comm() ? "bound: slower than the best simulated step (communication)"
                               : "bound: slower than the best simulated step (compute)";
    case PlanStatus::kNotSimulated: return "not simulated: beyond --max-candidates";
    case PlanStatus::kFailed: return "failed to simulate";
    case PlanStatus::kSimulated: break;
  }
  return "";
}

bool ranked_before(const PlanCandidate& a, const PlanCandidate& b) {
  const auto key = [](const PlanCandidate& c) {
    return std::make_tuple(c.status != PlanStatus::kSimulated, c.step ? c.step->step_s : 0.0,
                           static_cast<int>(c.status), c.bound_s);
  };
  if (key(a) != key(b)) return key(a) < key(b);
  return a.layout < b.layout;
}

}  // namespace

const char* to_string(PlanStatus status) {
  switch (status) {
    case PlanStatus::kSimulated: return "simulated";
    case PlanStatus::kInvalid: return "invalid";
    case PlanStatus::kMemory: return "memory";
    case PlanStatus::kTooLarge: return "too_large";
    case PlanStatus::kBound: return "bound";
    case PlanStatus::kNotSimulated: return "not_simulated";
    case PlanStatus::kFailed: return "failed";
  }
  return "?";
}

int PlanResult::simulated() const {
  return static_cast<int>(std::count_if(candidates.begin(), candidates.end(),
                                        [](const PlanCandidate& c) { return c.status == PlanStatus::kSimulated; }));
}

int PlanResult::reused() const {
  return static_cast<int>(std::count_if(candidates.begin(), candidates.end(), [](const PlanCandidate& c) {
    return c.status == PlanStatus::kSimulated && c.reused;
  }));
}

std::string plan_record_key(const std::string& platform, const PlanLayout& layout) {
  return platform + " " + layout.name();
}

namespace {
// The workload a plan starts from: a training step's (a serving step's
// layout and batch are `epsim serve`'s question, docs/serving.md).
workloads::WorkloadSpec plan_workload(const PlanRequest& r) {
  workloads::WorkloadSpec w = workloads::load_workload(r.base.workload, split_set_options(r.base.overrides).workload);
  if (w.serving)
    throw option_error("--workload", "a serving workload ([serving]): plan searches training layouts; its batch "
                                     "within a latency is `epsim serve --tpot` or `--ttft` (docs/serving.md)");
  return w;
}
}  // namespace

void check_plan_inputs(const PlanRequest& r) { check_plan_platform(r, plan_workload(r).precision); }

PlanResult plan_layouts(const PlanRequest& r) {
  const workloads::WorkloadSpec base = plan_workload(r);
  const PlanPlatform platform = check_plan_platform(r, base.precision);

  PlanResult out;
  out.platform = r.base.platform;
  out.workload = r.base.workload;
  out.npus = platform.npus;
  out.npus_per_node = platform.shape.npus_per_node;
  out.hbm_bytes = platform.shape.cluster->npu.hbm_capacity_bytes;
  out.peak_flops = platform.rates.peak_flops;
  out.node_out_Bps = platform.links.node_out_Bps;
  out.rank_in_Bps = platform.links.rank_in_Bps;
  out.global_batch = r.global_batch.value_or(base.parallel.global_batch);
  out.sequence_length = base.parallel.sequence_length;

  PlanSpace space;
  space.npus = platform.npus;
  space.npus_per_node = platform.shape.npus_per_node;
  space.global_batch = out.global_batch;
  space.layers = base.model.pipeline_layers();  // as the loader splits them
  space.experts = base.model.experts;
  space.micro_batch = r.micro_batch;
  const Enumeration enumeration = enumerate_layouts(space);
  out.considered = enumeration.considered;
  for (const auto& [key, count] : enumeration.skipped) out.pruned["cheap check: " + key] += count;
  if (r.progress)
    r.progress(fmt::format("{}: {} layouts considered, {} pass the cheap checks; checking them as `epsim run` would",
                           r.base.platform, enumeration.considered, enumeration.layouts.size()));

  std::vector<PlanCandidate> candidates;
  for (const PlanLayout& l : enumeration.layouts) candidates.push_back(check_candidate(r, platform, l));
  const PlanLayout own_layout = layout_of(base, out.global_batch);
  out.own_name = own_layout.name();
  std::optional<std::size_t> own;
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (candidates[i].layout.name() == out.own_name) own = i;
  if (!own && base.parallel.world() != out.npus)
    out.own_missing = fmt::format("not among the layouts: it runs on {} ranks, the plan fills {} NPUs (--npus)",
                                  base.parallel.world(), out.npus);
  else if (!own)
    out.own_missing = "not among the layouts: a cheap check or the dimensions' values leave it out";
  else if (candidates[*own].status != PlanStatus::kSimulated)
    out.own_missing = "refused: " + prune_reason(candidates[*own]);
  if (own) candidates[*own].own = true;
  if (!out.own_missing.empty()) own.reset();
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (candidates[i].status == PlanStatus::kSimulated && i != own) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (candidates[a].bound_s != candidates[b].bound_s) return candidates[a].bound_s < candidates[b].bound_s;
    return candidates[a].layout < candidates[b].layout;
  });
  if (r.progress)
    r.progress(fmt::format("{}: {} valid layouts fit; simulating {}the best bounds first ({} at once)",
                           r.base.platform, order.size() + (own ? 1 : 0), own ? "the workload's own layout, then " : "",
                           std::max(1, r.parallel)));
  // Every eligible candidate is marked not run until its child reports.
  for (std::size_t i : order) candidates[i].status = PlanStatus::kNotSimulated;
  simulate_in_order(r, platform, candidates, order, own);
  for (std::size_t i : order)
    if (candidates[i].step) candidates[i].status = PlanStatus::kSimulated;
  for (std::size_t rank = 0; rank < order.size(); ++rank) {
    PlanCandidate& c = candidates[order[rank]];
    // Within --max-candidates and not run: its bound was slower than a step already heard.
    if (c.status == PlanStatus::kNotSimulated && static_cast<int>(rank) < r.max_candidates) c.status = PlanStatus::kBound;
  }
  settle(candidates, order, r.max_candidates);

  for (const PlanCandidate& c : candidates)
    if (c.status != PlanStatus::kSimulated) ++out.pruned[prune_reason(c)];
  std::sort(candidates.begin(), candidates.end(), ranked_before);
  out.candidates = std::move(candidates);
  return out;
}

}  // namespace epsim::app
