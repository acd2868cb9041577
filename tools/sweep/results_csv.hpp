// A sweep's results as one CSV table: a row per point in spec order (the
// latest record of each), columns for the axes, the status, every number of
// the run report flattened to a dotted name, and the wall time last.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/sweep/sweep_spec.hpp"

namespace epsim::sweep {

// Flattens a report: {"step": {"sim_s": 1}} -> "step.sim_s"; arrays of
// objects with a "name" use it: "phases.dispatch.sim_s"; other arrays use
// the index ("busiest_links.0.link"), so columns line up across points. Only numbers, strings and booleans become cells.
std::vector<std::pair<std::string, std::string>> flatten(const nlohmann::json& value);

std::string results_csv(const SweepSpec& spec, const std::vector<nlohmann::json>& records);

}  // namespace epsim::sweep
