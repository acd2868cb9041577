// What `epsim plan` prints: per cluster the ranked table of simulated
// layouts with what was pruned and why, the reason the best beats the
// runner-up, the best per cluster side by side; JSON for scripts
// (tools/plot_plan.py); and a sweep spec over the survivors (docs/sweep.md).
#pragma once

#include <string>
#include <vector>

#include "app/plan_search.hpp"

namespace epsim::app {

// The tables, `top` ranked rows per cluster (at least 1).
std::string format_plan(const std::vector<PlanResult>& results, int top);

// Every candidate the loader saw, with its status, bound, memory and step.
std::string format_plan_json(const std::vector<PlanResult>& results);

// Why the best layout beats the runner-up: the differing keys and the
// phases (and exposed communication, bubble) whose mean time per rank
// differs most. "" with fewer than two simulated layouts.
std::string explain_best(const PlanResult& result);

// `result`'s layouts that passed every check (simulated or not), and how
// many: the points of the sweep `plan --emit-sweep` writes (tools/plan_sweep_file.hpp).
std::vector<const PlanCandidate*> plan_sweep_layouts(const PlanResult& result);
std::size_t plan_sweep_points(const PlanResult& result);

}  // namespace epsim::app
