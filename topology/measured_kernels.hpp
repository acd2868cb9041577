// Kernels measured on one NPU, as a compute measurement file's [[row]]s
// hold them (`kind = "compute"`, docs/validation.md "Compute tables"): an
// operator class, its dtype and shape, the time it took. `epsim validate`
// predicts them row by row; a stack may also price its operators by them
// (`[tables] compute`, docs/stacks.md), so that a user who profiles one
// device simulates the cluster on its own numbers. Plain data: the
// operators they stand for are built by sim/ (measured_pricing.hpp).
#pragma once

#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/toml_reader.hpp"

namespace epsim::topology {

struct MeasuredKernel {
  std::string name;
  std::string op;                 // gemm, grouped_gemm, attention or a memory class (elementwise ... optimizer)
  std::string dtype = "bf16";     // bf16 or fp8
  std::string pass = "forward";   // forward or forward_backward (attention)
  double m = 0, n = 0, k = 0;     // a GEMM's shape; a router row's scores GEMM (0: none)
  double groups = 0;              // a grouped GEMM's experts
  double heads = 0, d_qk = 0, d_v = 0, seq = 0;  // attention
  double bytes = 0;               // a memory-bound kernel's traffic
  double seconds = 0;
  bool calibration = false;       // a stack parameter was calibrated on it
  SourceLocation at;              // where its name was written
};

// The operator classes a row may name, in the order of the `op` key's choices.
const std::vector<std::string>& measured_ops();

// One [[row]] table: unknown keys, an unknown `op`, a missing shape key or a
// time outside its physical range are InputErrors at file:line:col.
MeasuredKernel read_measured_kernel(TableReader row);

// The [[row]] tables of a compute file's root (at least one).
std::vector<MeasuredKernel> read_measured_kernels(TableReader& root);

// A compute file's format keys (schema 1, kind "compute"); returns its `source`.
std::string read_compute_header(TableReader& root);

// A compute file as a stack uses it: its rows and the NPU they were
// measured on ([platform_set] "npu.model", required here: a table is
// never borrowed for another chip).
struct MeasuredTable {
  std::string path;
  std::string npu_model;
  std::vector<MeasuredKernel> rows;
};
MeasuredTable load_measured_table(const std::string& path);

}  // namespace epsim::topology
