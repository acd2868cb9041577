// A published end-to-end training throughput as a measurement file
// (docs/validation.md, "End to end"): the layout, the platform, the
// measured tokens/s per NPU and the band a prediction must fall in, and
// variants of the layout the source implies are slower. `epsim validate`
// runs each as `epsim run` does (run_job, in a child process each) and
// compares.
#pragma once

#include "core/presets.hpp"
#include "core/toml_reader.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/file_assignments.hpp"

namespace epsim::app {

struct EndToEndVariant {
  std::string name;
  std::vector<FileAssignment> workload_set;  // "key=value", as run's --set, each with its place in the file
  SourceLocation at;
};

struct EndToEndFile {
  std::string path;
  std::string source;  // where the figure comes from
  std::string platform;  // a preset name, or a path resolved against the file's folder
  std::vector<FileAssignment> platform_set;
  std::string workload;  // the same
  std::vector<FileAssignment> workload_set;
  double tokens_per_s_per_npu = 0;  // measured
  // A serving workload's latency at the measurement (TPOT for decode, TTFT
  // for prefill): the prediction is the most tokens/s per NPU of a batch
  // within it (app/serving_curve.hpp), not of the workload's own batch.
  std::optional<double> latency_s;
  // |simulated / measured - 1| <= band passes; unset: a prediction, its
  // error reported and not checked (the variants still are).
  std::optional<double> band;
  std::vector<EndToEndVariant> slower;  // each must simulate slower than the layout itself
};

// Whether `path` is an end-to-end file (top-level kind = "end_to_end")
// rather than a kernel table (no kind); false for anything that is not
// TOML. Another kind is an InputError at the key naming the accepted ones.
bool is_end_to_end_file(const std::string& path);

// A measurement file's `platform` or `workload` key: a preset name, or a
// path (with a '/' or ending in .toml or .xml) resolved against the file's
// folder (`path`); a file that cannot be read is told at the key.
std::string measurement_input_file(TableReader& root, const char* key, PresetKind kind, const std::string& path);

// Reads and checks one. Unknown keys, a missing figure, an empty variant, a
// platform or workload that is no readable file (a folder, a FIFO), a
// [platform_set], [workload_set] or [[slower]] value that the layout or a
// variant refuses (each checked as `run` would, before any simulation):
// InputError at the key in the file.
EndToEndFile load_end_to_end_file(const std::string& path);

struct EndToEndRun {
  std::string name;  // "" for the layout itself
  std::int64_t serving_batch = 0;  // with a latency: the batch chosen within it
  double serving_latency_s = 0;    // and its TPOT or TTFT
  double step_s = 0;
  double tokens_per_s_per_npu = 0;
  double mfu = 0;
  std::string reduction;  // the run's reduction, as its report's JSON says it
};

struct EndToEndValidation {
  EndToEndFile file;
  EndToEndRun layout;
  std::vector<EndToEndRun> slower;
  double error() const { return layout.tokens_per_s_per_npu / file.tokens_per_s_per_npu - 1; }
  bool within_band() const;
  bool variants_slower() const;
  bool passed() const { return within_band() && variants_slower(); }
};

// Runs the layout and each variant, one child process each.
EndToEndValidation validate_end_to_end(const EndToEndFile& file);

std::string format_end_to_end(const EndToEndValidation& v);
std::string format_end_to_end_json(const EndToEndValidation& v);

}  // namespace epsim::app
