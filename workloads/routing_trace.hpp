// Measured routing loads: a CSV of (layer, expert, tokens) rows, one per
// expert of a layer, giving how many tokens picked that expert.
#pragma once

#include <string>

#include "core/error.hpp"
#include "workloads/workload_spec.hpp"

namespace epsim::workloads {

// Reads `path` for `model`: `layer` is the model's layer index (MoE layers
// only, 0-based, counting the leading dense layers), `expert` is in
// [0, experts), `tokens` is a count >= 0. An optional first line
// "layer,expert,tokens" is a header. A (layer, expert) missing from the file
// has load 0; every MoE layer needs at least one positive load.
// Throws InputError at "file:row:column" naming `key` for a malformed row,
// a layer that is not a MoE layer, an expert out of range, a negative or
// repeated count; at `key_where` when the file cannot be read whole
// (missing, a folder, not a regular file, too large: core/input_file.hpp).
RoutingTrace read_routing_trace(const std::string& path, const ModelSpec& model,
                                const std::string& key, const SourceLocation& key_where);

}  // namespace epsim::workloads
