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
  std::vector<ComputeRowResult> rows;
  double band = 0.15;
  int predictions() const;         // rows not marked calibration
  int outside_band() const;        // of those, |error| > band
};

// Each row's operators priced alone on the platform's NPU by its stack
// (sim::calibrated_time_s: the sum over the operators, never below the
// host's issue time), against the measured time.
ComputeValidation validate_compute(const ComputeFile& file);

std::string format_compute_validation(const ComputeValidation& v);

}  // namespace epsim::app
