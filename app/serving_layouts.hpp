// Which expert-parallel layout serves most within a latency limit
// (docs/serving.md, `epsim serve --ep-list`): a serving curve per EP size,
// each a deployment unit of that many ranks with attention data-parallel
// over them, and the layout and batch with the most tokens/s per NPU.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "app/serving_curve.hpp"

namespace epsim::app {

struct ServingLayout {
  int ep = 0;
  int dp = 0;  // ep / tp: attention data-parallel over the unit's ranks
  int tp = 1;
  int redundant_experts = 0;
  int ranks_per_node = 0;
  ServingCurve curve;  // its refusal: no batch fits, or none meets the limit
};

struct ServingLayoutSearch {
  std::string phase;         // "prefill" or "decode"
  std::string latency_name;  // "TPOT" or "TTFT"
  std::optional<double> limit_s;
  std::optional<double> traffic;       // tokens/s each layout's pool is sized for
  std::vector<ServingLayout> layouts;  // in the order asked
  // The layout whose best batch serves most tokens/s per NPU; with a
  // traffic, the one whose pool takes the fewest whole nodes (then the most).
  std::optional<std::size_t> best;
};

// The redundant experts a unit of `ep` ranks takes: the workload's own
// where they fill whole expert slots at that size, else the fewest that do
// (ceil(experts / ep) x ep - experts: every rank's slots filled with replicas).
int redundant_experts_for(int experts, int workload_redundant, int ep);

// The search sets parallel.ep, parallel.dp and routing.redundant_experts
// per layout: the same keys in --set (or --ep) are refused at --ep-list
// rather than overwritten. Throws InputError.
void refuse_sets_a_layout_search_makes(const RunRequest& base);

// Checks every layout before any step is replayed (an EP the model's
// experts, the nodes or the platform cannot take is an error at
// --ep-list naming it), then replays each layout's curve as
// serve's one curve. Throws InputError (refuse_sets_a_layout_search_makes's
// among them).
ServingLayoutSearch serving_layout_search(const ServingCurveRequest& request, const std::vector<int>& eps);

std::string format_serving_layouts(const ServingLayoutSearch& search, const RunRequest& base);
std::string format_serving_layouts_json(const ServingLayoutSearch& search, const RunRequest& base);

}  // namespace epsim::app
