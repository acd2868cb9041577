// Validation against DeepEP's published H800 bandwidths: the four rows of
// its normal-kernel table simulated on a cluster preset set to hardware line
// rates, with one efficiency per link type calibrated on one row each.
#pragma once

#include <string>
#include <vector>

#include "sim/validation/deepep_kernels.hpp"
#include "sim/validation/deepep_plan.hpp"

namespace epsim::sim {

// One row of DeepEP's README table (commit 3b1045d, now docs/legacy.md),
// bandwidths in DeepEP's own byte count per second (1 GB = 1e9 B).
struct DeepEpMeasurement {
  int ep = 0;
  double dispatch_Bps = 0;
  double combine_Bps = 0;
};
const std::vector<DeepEpMeasurement>& deepep_h800_measurements();

struct DeepEpValidationOptions {
  std::string platform = "h800";          // preset or TOML file; needs 8 GPUs per node and 8 nodes
  std::vector<std::string> overrides;     // extra --set assignments on the platform
  double nvlink_line_rate_Bps = 200e9;    // H800 NVLink, 400 GB/s bidirectional, per direction
  double nic_line_rate_Bps = 50e9;        // ConnectX-7, 400 Gb/s, per direction
  int nvlink_calibration_ep = 8;          // row whose dispatch cell calibrates NVLink efficiency
  int rdma_calibration_ep = 32;           // row whose dispatch cell calibrates RDMA efficiency
  std::vector<int> eps = {8, 16, 32, 64}; // rows to report (calibration rows are always run)
  int tokens_per_rank = 4096;             // DeepEP's benchmark settings from here on
  int hidden = 7168;
  int experts = 256;
  int top_k = 8;
  int group_limit = 4;
  std::uint64_t seed = 1;
  DeepEpPipeline pipeline;                // chunks; its latencies are replaced by the platform's route latencies
};

struct DeepEpCell {
  double measured_Bps = 0;
  double simulated_Bps = 0;
  double error() const { return simulated_Bps / measured_Bps - 1.0; }  // relative, signed
};

struct DeepEpRow {
  int ep = 0;
  bool internode = false;
  DeepEpBytes bytes;  // per rank
  DeepEpTimes times;
  DeepEpCell dispatch, combine;
  bool calibration = false;  // its dispatch cell calibrated an efficiency
};

struct DeepEpValidation {
  DeepEpValidationOptions options;
  double nvlink_efficiency = 0;  // share of the NVLink line rate, calibrated
  double rdma_efficiency = 0;    // share of the NIC line rate, calibrated
  std::vector<DeepEpRow> rows;   // in options.eps order
};

// Builds the platform in this process's one SimGrid engine, calibrates the
// two efficiencies (NVLink first, on a row that only uses NVLink) and runs
// the rows. Call once per process. Throws InputError for an unknown row, a
// platform too small for EP64 or without 8 GPUs per node, bad overrides.
DeepEpValidation run_deepep_validation(const DeepEpValidationOptions& options);

// The table: per row and kernel, measured and simulated GB/s (DeepEP's
// count), error, kernel time, bytes counted and moved; then what was
// calibrated on what.
std::string format_deepep_validation(const DeepEpValidation& v);

}  // namespace epsim::sim
