// The reductions of a step, its replays and the carried report.
#include "app/step_replay.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>
#include <utility>

#include <fmt/format.h>

#include "sim/report/steady_state.hpp"
#include "workloads/replica_fold.hpp"

namespace epsim::app {

workloads::WorkloadSpec with_micro_batches(workloads::WorkloadSpec w, int micro_batches) {
  w.parallel.micro_batches = micro_batches;
  w.parallel.global_batch = w.parallel.micro_batch * w.parallel.dp * micro_batches;
  return w;
}

StepPlan plan_step(const workloads::WorkloadSpec& w, Exactness exact) {
  StepPlan plan;
  plan.reduction.full_ranks = w.parallel.world();
  plan.reduction.applicable =
      workloads::fold_refusal(w.parallel).empty() ||
      workloads::steady_state(w.parallel.schedule, w.parallel.pp, w.parallel.vpp, w.parallel.micro_batches,
                              w.parallel.moe_a2a_overlap);
  if (exact == Exactness::kFull) {
    plan.replayed = w;
    plan.reduction.off = "--exact full";
    return plan;
  }
  const std::string fold_off = workloads::fold_refusal(w.parallel);
  plan.replayed = fold_off.empty() ? workloads::fold_replicas(w) : w;
  plan.reduction.replicas = plan.replayed.parallel.folded_replicas;
  plan.steady = workloads::steady_state(w.parallel.schedule, w.parallel.pp, w.parallel.vpp, w.parallel.micro_batches,
                              w.parallel.moe_a2a_overlap);
  if (!plan.reduction.reduced() && !plan.steady) plan.reduction.off = fold_off;
  return plan;
}

namespace {

// `scenario` for a replay of `spec`'s micro-batches (its global batch over every EP group).
sim::Scenario scenario_of(sim::Scenario scenario, const workloads::WorkloadSpec& spec) {
  scenario.micro_batches = spec.parallel.micro_batches;
  scenario.global_batch = spec.parallel.micro_batch * spec.parallel.full_dp() * spec.parallel.micro_batches;
  return scenario;
}

}  // namespace

Replayed replay_step(const workloads::WorkloadSpec& w, const StepPlan& plan, const sim::Scenario& scenario,
                     const ReplaySpec& replay, const sim::PlatformFacts& platform, const StepHooks& hooks) {
  const auto started = [&](int index, int count, int micro_batches) {
    if (hooks.started) hooks.started(index, count, micro_batches);
  };
  sim::Reduction reduction = plan.reduction;
  const auto finish = [&](Replayed out) {
    reduction.shared_links = out.simulation.report.reduction.shared_links;
    reduction.unscaled_links = out.simulation.report.reduction.unscaled_links;
    out.simulation.report.reduction = reduction;
    return out;
  };
  if (!plan.steady) {
    started(1, 1, w.parallel.micro_batches);
    return finish(replay(plan.replayed, scenario));
  }
  const workloads::SteadyState st = *plan.steady;
  const workloads::WorkloadSpec wa = with_micro_batches(plan.replayed, st.first);
  const workloads::WorkloadSpec wb = with_micro_batches(plan.replayed, st.first + st.delta);
  started(1, 2, st.first);
  // Only a's report and tail starts are kept: its graph and timeline go before b's are made.
  sim::Report report_a;
  sim::ReportSums sums_a;
  std::vector<double> tails_a;
  {
    Replayed a = replay(wa, scenario_of(scenario, wa));
    report_a = std::move(a.simulation.report);
    sums_a = std::move(a.simulation.sums);
    tails_a = sim::last_forward_starts_s(a.simulation.timeline, a.graph);
  }
  started(2, 2, st.first + st.delta);
  Replayed b = replay(wb, scenario_of(scenario, wb));
  reduction.micro_batches_a = st.first;
  reduction.micro_batches_b = st.first + st.delta;
  reduction.step_a_s = report_a.step.sim_s;
  reduction.step_b_s = b.simulation.report.step.sim_s;
  const std::vector<double> tails_b = sim::last_forward_starts_s(b.simulation.timeline, b.graph);
  reduction.shift_min_s = std::numeric_limits<double>::infinity();
  reduction.shift_max_s = -reduction.shift_min_s;
  for (std::size_t s = 0; s < tails_b.size() && s < tails_a.size(); ++s) {
    const double shift_s = (tails_b[s] - tails_a[s]) / st.delta;
    reduction.shift_min_s = std::min(reduction.shift_min_s, shift_s);
    reduction.shift_max_s = std::max(reduction.shift_max_s, shift_s);
  }
  reduction.tolerance = kSteadyTolerance;
  const double increment_s = (reduction.step_b_s - reduction.step_a_s) / st.delta;
  const double off_by = increment_s > 0 ? std::max(std::abs(reduction.shift_min_s / increment_s - 1),
                                                   std::abs(reduction.shift_max_s / increment_s - 1))
                                        : 1.0;
  if (!(off_by <= kSteadyTolerance)) {
    reduction.off = fmt::format(
        "from {} to {} micro-batches the step grows {:.4g} ms per micro-batch but a stage's tail moves {:.4g} to "
        "{:.4g} ms, {:.1f} % apart (above {:.0f} %): not steady yet, every micro-batch replayed",
        reduction.micro_batches_a, reduction.micro_batches_b, increment_s * 1e3, reduction.shift_min_s * 1e3,
        reduction.shift_max_s * 1e3, 100 * off_by, 100 * kSteadyTolerance);
    reduction.micro_batches_a = reduction.micro_batches_b = 0;
    if (hooks.falling_back) hooks.falling_back(reduction.off);
    started(3, 3, w.parallel.micro_batches);
    return finish(replay(plan.replayed, scenario));
  }
  const double k = static_cast<double>(w.parallel.micro_batches - reduction.micro_batches_b) / st.delta;
  sim::Carried carried = sim::extrapolate_report(report_a, sums_a, b.simulation.report, b.simulation.sums, k, platform);
  sim::Report& report = carried.report;
  report.scenario = scenario;
  report.activities = report_a.activities + b.simulation.report.activities;
  report.throughput = {};
  report.scenario.platform_name = b.simulation.report.scenario.platform_name;
  report.scenario.npu_model = b.simulation.report.scenario.npu_model;
  report.scenario.stack = b.simulation.report.scenario.stack;
  sim::add_throughput(report, platform, b.simulation.placement, b.simulation.options.compute_fallback);
  b.simulation.report = std::move(report);
  b.simulation.sums = std::move(carried.sums);
  return finish(std::move(b));
}

}  // namespace epsim::app
