// Reading a workload: a TOML file or a preset name, with `--set` overrides,
// into a WorkloadSpec whose every field has been checked. Throws InputError
// (file:line:col and key path) for anything wrong.
#pragma once

#include <string>
#include <vector>

#include <toml++/toml.h>

#include "core/toml_reader.hpp"
#include "workloads/workload_edits.hpp"
#include "workloads/workload_spec.hpp"

namespace epsim::workloads {

// `file_or_preset` is a path to a TOML file, or the name of a preset in the
// data folder's workloads/presets/ ("deepseek-v3", "deepep-ascend",
// "tiny-moe"; see core/presets.hpp).
// `overrides` are the user's `--set` "dotted.key=value" assignments, applied
// first; `edits` (workload_edits.hpp) are set after them, and checked by the
// same reader as the file's keys (an error at an edit with an option is
// reported at that option).
WorkloadSpec load_workload(const std::string& file_or_preset, const std::vector<std::string>& overrides = {},
                           const WorkloadEdits& edits = {});

// Reads and checks an already parsed document: the one checker of every
// workload key, whether a file, --set or an edit gave it. Relative trace
// paths are resolved against `base_dir`; `sources` names the values a
// program set (apply_edits).
WorkloadSpec read_workload(const toml::table& root, const std::string& source, const std::string& base_dir,
                           const NodeSources* sources = nullptr);

// Names of the bundled presets, sorted. Throws InputError when there are none.
std::vector<std::string> workload_presets();

// Throws InputError at parallel.ep when drawing `w`'s whole routing (its
// traffic matrices, traffic_memory_bytes) would exceed the memory limit;
// commands that draw it call this first (a run checks what it replays).
void check_traffic_memory(const WorkloadSpec& w);

}  // namespace epsim::workloads
