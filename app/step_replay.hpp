// A training step as `epsim run` replays it: the exact reductions chosen
// for its layout, the replays they need made one after the other on the
// process's one engine, and one report for the whole step (docs/simulator.md,
// "Exact reductions"):
//   - replicas: a stage's identical EP groups replayed once
//     (workloads/replica_fold.hpp), the gradient sync over the full groups;
//   - steady state: a pipeline of M micro-batches from replays of m and
//     m + delta (workloads::steady_state), carried to M in closed form once
//     the increment matches the period inside the replay, else every
//     micro-batch replayed.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "app/option_names.hpp"
#include "sim/simulate.hpp"
#include "workloads/pipeline_schedule.hpp"
#include "workloads/task_graph.hpp"
#include "workloads/workload_spec.hpp"

namespace epsim::app {

// How far the step's increment per micro-batch may be from the period
// inside the longer replay, relative, for the steady state to count as
// reached. Routing is drawn per micro-batch, so with a sampled routing
// neither is exact; measured spread in docs/simulator.md.
inline constexpr double kSteadyTolerance = 0.05;

// The reductions that apply to `w` under `exact`; what is replayed.
struct StepPlan {
  workloads::WorkloadSpec replayed;               // one EP group per stage when folded
  std::optional<workloads::SteadyState> steady;   // unset: every micro-batch replayed
  sim::Reduction reduction;                       // replicas, full_ranks and why not, filled in
};
StepPlan plan_step(const workloads::WorkloadSpec& w, Exactness exact);

// One graph and its replay.
struct Replayed {
  workloads::TaskGraph graph;
  sim::Simulation simulation;
};

// Replays `spec` (a spec of the plan: its micro-batches may be fewer than
// the step's) for a report about `scenario`. The caller's: how the graph and
// its routing are made and which platform it runs on.
using ReplaySpec = std::function<Replayed(const workloads::WorkloadSpec& spec, const sim::Scenario& scenario)>;

// What the caller hears while the step replays.
struct StepHooks {
  // Before each replay: which of how many (1-based), the micro-batches it covers.
  std::function<void(int index, int count, int micro_batches)> started;
  // Before every micro-batch is replayed because the steady state was not
  // reached (`why`); may throw (a run checks that replay's memory then).
  std::function<void(const std::string& why)> falling_back;
};

// The step of `w` as `plan` replays it. The report's scenario is
// `scenario` (the whole step's); its throughput is recomputed on `platform`
// for the carried step. The graph and timeline are the last replay's.
Replayed replay_step(const workloads::WorkloadSpec& w, const StepPlan& plan, const sim::Scenario& scenario,
                     const ReplaySpec& replay, const sim::PlatformFacts& platform, const StepHooks& hooks = {});

// `w` with `micro_batches` per DP rank.
workloads::WorkloadSpec with_micro_batches(workloads::WorkloadSpec w, int micro_batches);

}  // namespace epsim::app
