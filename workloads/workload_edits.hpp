// Typed edits of a workload, made on a user's behalf before it is checked: a
// plan's layouts, run's --ep and --seed, the collective's one EP group,
// serve's layouts.
// app/ fills a WorkloadEdits; the loader (workload_loader.hpp) sets each
// edit in the document after the user's --set and checks it with the same
// reader as the file's own keys: one checker for files, --set and edits.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <toml++/toml.h>

#include "core/error.hpp"
#include "core/toml_reader.hpp"
#include "workloads/workload_spec.hpp"

namespace epsim::workloads {

// One edited value and the command-line option it stands for. An error the
// loader finds at the edit names that option, "--npus: parallel.ep: ...";
// with no option it reads as the `--set section.key=value` the edit equals
// would ("--set parallel.ep=3: error: parallel.ep: ..."), as run's --ep has
// always been reported.
template <class T>
struct Edit {
  T value{};
  std::string option;
};

struct WorkloadEdits {
  // [model]
  std::optional<Edit<std::int64_t>> hidden;
  std::optional<Edit<std::int64_t>> experts;
  std::optional<Edit<std::int64_t>> top_k;
  // The MoE layers kept after the model's dense ones: model.layers becomes
  // dense_layers (as the file and --set give it, 0 when not an integer) + this.
  std::optional<Edit<int>> moe_layers;
  // [parallel]
  std::optional<Edit<int>> tp, pp, vpp, ep, etp, dp, ranks_per_node;
  std::optional<Edit<std::int64_t>> micro_batch, micro_batches, global_batch, sequence_length;
  std::optional<Edit<PipelineSchedule>> schedule;
  // [memory]
  std::optional<Edit<Recompute>> recompute;
  std::optional<Edit<int>> zero_stage;
  std::optional<Edit<bool>> allow_oversubscribed;
  // [routing]
  std::optional<Edit<RoutingKind>> routing_kind;
  std::optional<Edit<std::int64_t>> seed;
  std::optional<Edit<int>> redundant_experts;
};

// Where the edits went in a document: each value's source for the reader
// (toml++ records one only for what it parses), and the option of each
// edit that names one, by that source's name.
struct AppliedEdits {
  NodeSources sources;
  std::map<std::string, std::string> option_of;
};

// Sets every edit in `root` (a workload document after the user's --set),
// creating its table when the document has none. Values are typed nodes,
// never text; an edit whose table is not a table is left for the reader
// to refuse.
AppliedEdits apply_edits(toml::table& root, const WorkloadEdits& edits);

// `error` as the option of the edit it was found at names it; unchanged
// when it is at no edit with an option.
InputError at_option(const InputError& error, const AppliedEdits& applied);

}  // namespace epsim::workloads
