// Compute measurement files (`kind = "compute"`): measured times of single
// operators (GEMMs by shape and dtype, the attention core, memory-bound
// kernels) on one NPU, predicted row by row by a platform's software stack
// (docs/validation.md, "Compute tables"). A row marked `calibration` set
// one of the stack's parameters; every other row is a prediction.
#pragma once

#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/file_assignments.hpp"
#include "workloads/operators.hpp"

namespace epsim::app {

struct ComputeRow {
  std::string name;
  std::string what;  // the shape as printed: "gemm bf16 4096x7168x2048"
  workloads::Operators ops;
  double measured_s = 0;
  bool calibration = false;
  SourceLocation at;
};

struct ComputeFile {
  std::string path;
  std::string source;
  std::string platform;                       // preset name or path (resolved against the file)
  std::vector<FileAssignment> platform_set;   // its NPU's figures and the stack (stack.name)
  std::vector<ComputeRow> rows;
};

// Reads a compute file: unknown keys, an unknown `op`, a missing shape key
// or a time outside its physical range are InputErrors at file:line:col.
ComputeFile load_compute_file(const std::string& path);

struct ComputeRowResult {
  std::string name, what;
  double measured_s = 0, predicted_s = 0;
  double error = 0;  // predicted / measured - 1 (time)
  bool calibration = false;
};

struct ComputeValidation {
  std::string path, source, platform, stack, npu;
  // The stack the file's rows marked `calibration` calibrated; when another
  // one prices them (--stack), every row is a prediction of it.
  std::string calibrated_stack;
  std::vector<ComputeRowResult> rows;
  double band = 0.15;
  int predictions() const;         // rows not marked calibration
  int outside_band() const;        // of those, |error| > band
  bool passed() const { return outside_band() == 0; }
};

// Each row's operators priced alone on the platform's NPU by its stack
// (sim::calibrated_time_s: the sum over the operators, never below the
// host's issue time), against the measured time. `overrides` (`--set`)
// apply after the file's [platform_set]; `stack` (`--stack`) names another
// software stack than the one the file picks: the same table priced by it.
ComputeValidation validate_compute(const ComputeFile& file, const std::vector<std::string>& overrides = {},
                                   const std::string& stack = "");

std::string format_compute_validation(const ComputeValidation& v);
// The verdict line `--check` adds: every predicted row within the band, or how many are not.
std::string format_compute_check(const ComputeValidation& v);
// The same as JSON: the file, its NPU and stack, the band, and per row its
// measured and predicted seconds, error and whether it is a calibration row.
std::string format_compute_validation_json(const ComputeValidation& v);

}  // namespace epsim::app
