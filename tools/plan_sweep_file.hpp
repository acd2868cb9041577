// The sweep spec (docs/sweep.md) `epsim plan --emit-sweep` writes: a file
// format of the command line's, so its "section.key=value" lines live here.
#pragma once

#include <string>
#include <vector>

#include "app/plan_report.hpp"

namespace epsim::tools {

// A sweep over `result`'s layouts that passed every check (simulated or
// not), best bound first: one point per layout, the layout's keys as zipped
// axes. `overrides`: the plan's --set, kept as base.set.
std::string format_plan_sweep(const app::PlanResult& result, const std::vector<std::string>& overrides);

}  // namespace epsim::tools
