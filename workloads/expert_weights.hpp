// How likely each routed expert is to be picked in one MoE layer: the
// routing spec (uniform, zipf, hot, trace; expert order; per-layer jitter)
// turned into one weight per expert. The sampler draws each token's k
// distinct experts from these weights.
#pragma once

#include <string>
#include <vector>

#include "workloads/workload_spec.hpp"

namespace epsim::workloads {

// Pick weights of the experts of MoE layer `moe_layer` (0 = first MoE
// layer), normalised to sum 1. Deterministic in (routing.seed, moe_layer).
std::vector<double> expert_weights(const WorkloadSpec& w, int moe_layer);

// Why tokens cannot always find k distinct experts under these weights and
// the node limit, or "" when they can. Checked by the loader for every layer.
std::string routing_infeasibility(const WorkloadSpec& w, const std::vector<double>& weights);

// True when the node limit restricts routing (a limit below the node count).
bool node_limit_binds(const WorkloadSpec& w);

}  // namespace epsim::workloads
