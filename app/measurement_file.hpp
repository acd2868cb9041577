// A measurement table as data (docs/validation.md, "Measurement files"):
// the platform it ran on, the benchmark's shape, how the source counts
// bytes, and its rows of measured dispatch/combine GB/s or microseconds,
// some of which calibrate a platform parameter. Strict TOML: unknown keys
// and shapes the model does not cover are InputErrors at file:line:col.
// Parsed here, in app/, as every input file is above sim/ (which never
// parses TOML); the kind of a file (measurement_kind) chooses its reader.
#pragma once

#include <string>
#include <vector>

#include "core/error.hpp"
#include "sim/validation/deepep_validation.hpp"
#include "topology/cluster_spec.hpp"

namespace epsim::app {

using sim::CountedAs;
using sim::DeepEpKernel;
using sim::DeepEpValidationOptions;

inline constexpr int kMeasurementSchemaVersion = 1;

// The kinds of measurement file, by their top-level `kind`; a kernel table
// (this file's MeasurementFile) has none. A new kind is one more name here
// and one more branch where `epsim validate` dispatches.
inline const std::vector<std::string> kMeasurementKinds = {"end_to_end", "compute"};

// The `kind` of the file at `path`: "" for a kernel table (no kind key) or
// for anything that is not TOML (its reader then tells why), else one of
// kMeasurementKinds. Another value is an InputError at the key naming the
// accepted ones.
std::string measurement_kind(const std::string& path);

// One measured kernel of a row; 0 where the source gives no figure.
struct MeasuredKernel {
  double GBps = 0;  // in the source's byte count, 1 GB = 1e9 B; inside the physical range of a bandwidth
  double us = 0;    // kernel time, inside the physical range of a time (and > 0)
  SourceLocation at;  // the figure a calibration reads (GBps when given, else us)
  std::string key;    // its key path, e.g. "row[0].dispatch_GBps"
  bool given() const { return GBps > 0 || us > 0; }
};

struct MeasuredRow {
  int ep = 0;
  int experts = 0;    // the row's own expert count; 0: the shape's
  int sms = 0;        // the cores (SMs) the row's kernels ran on; 0: the shape's
  SourceLocation at;  // the row's [[row]] table
  MeasuredKernel dispatch, combine;
  std::vector<std::string> calibrate;  // parameters this row's dispatch calibrates
};

struct MeasurementFile {
  std::string path;
  DeepEpKernel kernel = DeepEpKernel::kNormal;
  std::string source;                     // where the numbers come from
  std::string platform;                   // preset name or a path (resolved against the file's folder)
  std::vector<std::string> platform_set;  // "key=value" overrides, as --set
  int tokens_per_rank = 0;
  int hidden = 0;
  int experts = 0;
  int top_k = 0;
  int node_limit = 0;  // nodes a token may reach; 0: no limit
  int sms = 0;         // SMs (cores) the kernels ran on; a row's own `sms` scales the copy rates by its ratio to this
  workloads::Dtype dispatch = workloads::Dtype::kFp8;  // wire types
  workloads::Dtype combine = workloads::Dtype::kBf16;
  bool metadata = false;  // the counted bytes include the top-k indices and weights
  CountedAs dispatch_counted = CountedAs::kWire;  // [shape] dispatch_counted: "wire", "fp8" or "bf16"
  // Normal kernels on a flat platform (is_flat_platform of the file's
  // platform with its overrides): the efficiency its rows may calibrate; empty otherwise.
  std::string flat_parameter;
  // Low-latency kernels: the efficiency of the fabric they cross (low_latency_parameter()).
  std::string low_latency_parameter;
  bool per_selection = false;  // the platform's normal kernel sends one message per selection (flat only)
  std::vector<MeasuredRow> rows;
};

// The parameters a row may calibrate (topology/cluster_spec.hpp): normal
// kernels node.link_efficiency and scaleout.nic_efficiency, or on a flat
// platform its efficiency `flat` (flat_parameter()), and the normal
// [kernels] keys (launch, per-peer costs, copy rates); low-latency kernels
// their fabric's efficiency `low_latency` (low_latency_parameter()) and
// the low-latency [kernels] keys (launch, per-peer cost).
std::vector<std::string> calibratable_parameters(DeepEpKernel kernel, const char* flat = nullptr,
                                                 const char* low_latency = topology::kLowLatencyEfficiencyKey);

// Reads and checks a measurement file. Throws InputError at the offending
// key: unknown keys, a kernel or byte count the model does not cover
// ("not modelled yet"), a row without a measured value, a figure outside
// its physical range, a row that is not a DeepEP benchmark shape on the
// file's platform (deepep_shape_problem), a bad or repeated EP, an unknown
// parameter, or a second row calibrating one parameter. The platform
// named by `platform` is checked as every command checks one; a file
// that cannot be read is reported at that key.
MeasurementFile load_measurement_file(const std::string& path);

// The validation the file asks for: its platform and overrides, shape,
// rows (all run, in file order) and calibration rows. Throws InputError
// when a parameter has no calibration row (validate calibrates both).
DeepEpValidationOptions validation_options(const MeasurementFile& file);

// The shipped file `epsim validate` reads when given none: DeepEP V1
// normal kernels on H800.
std::string default_measurement_file();

}  // namespace epsim::app
