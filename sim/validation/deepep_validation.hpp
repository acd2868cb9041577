// Validation against published dispatch/combine tables (DeepEP's H800
// normal and low-latency kernels, DeepEP-Ascend's on the Ascend 950 and A3
// supernodes): the rows simulated on a cluster preset at hardware line
// rates, each calibrated parameter (a link efficiency, a [kernels]
// mechanism) on one named cell, every other cell a prediction. The kernels
// are the replay's alltoallv (deepep_kernels.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "sim/validation/deepep_bytes.hpp"
#include "sim/validation/deepep_kernels.hpp"
#include "topology/cluster_spec.hpp"

namespace epsim::sim {

// Line rates are the platform's node.link_bandwidth and
// scaleout.nic_bandwidth; the calibration sets the platform's
// node.link_efficiency and scaleout.nic_efficiency (topology/cluster_spec.hpp).

// One row of DeepEP's README table (commit 3b1045d, now docs/legacy.md),
// bandwidths in DeepEP's own byte count per second (1 GB = 1e9 B), all
// measured at kDeepEpTokensPerRank tokens per rank.
struct DeepEpMeasurement {
  int ep = 0;
  double dispatch_Bps = 0;  // 0: not measured (then the time may be)
  double combine_Bps = 0;
  double dispatch_s = 0;    // kernel times, 0: not measured
  double combine_s = 0;
  int experts = 0;          // experts in this row's benchmark; 0: the options'
  int sms = 0;              // cores (SMs) this row's kernels ran on; 0: the options'
  // Where the dispatch figure was written (a measurement file's
  // row[i].dispatch_GBps or _us): a calibration it cannot give is reported
  // there. Empty for rows without a file.
  SourceLocation dispatch_at;
  std::string dispatch_key;
};
const std::vector<DeepEpMeasurement>& deepep_h800_measurements();
constexpr int kDeepEpTokensPerRank = 4096;
constexpr int kDeepEpGpusPerNode = 8;

// The row for `ep` among `rows`, or nullptr; "EP8, 16, 32 and 64" for messages.
const DeepEpMeasurement* find_measurement(const std::vector<DeepEpMeasurement>& rows, int ep);
std::string measured_eps(const std::vector<DeepEpMeasurement>& rows);

struct DeepEpValidationOptions {
  std::string source = "DeepEP";          // who measured the rows (for messages)
  std::vector<DeepEpMeasurement> measurements = deepep_h800_measurements();
  int measured_tokens_per_rank = kDeepEpTokensPerRank;  // the rows' benchmark setting
  DeepEpKernel kernel = DeepEpKernel::kNormal;
  std::string platform = "h800";          // preset or TOML file; normal: needs 8 GPUs per node and 8 nodes
  std::vector<std::string> overrides;     // extra --set assignments on the platform
  int nvlink_calibration_ep = 8;          // row whose dispatch cell calibrates NVLink efficiency
  int rdma_calibration_ep = 32;           // row whose dispatch cell calibrates RDMA efficiency
  // Low-latency: the row whose dispatch cell calibrates scaleout.low_latency_efficiency
  // (normal rows calibrate the two above, low-latency rows only this one).
  int low_latency_calibration_ep = 0;
  // Normal kernels on a flat platform (is_flat_platform): the row whose
  // dispatch cell calibrates flat_parameter(); 0: the platform is not flat.
  int flat_calibration_ep = 0;
  std::vector<int> eps = {8, 16, 32, 64}; // rows to report (calibration rows are always run)
  int tokens_per_rank = kDeepEpTokensPerRank;  // DeepEP's benchmark settings from here on
  int hidden = 7168;
  int experts = 256;
  int top_k = 8;
  int group_limit = 4;  // nodes a token may reach; 0: no limit
  workloads::Dtype dispatch_wire = workloads::Dtype::kFp8;  // fp8, int8 or bf16 (deepep_token_bytes)
  workloads::Dtype combine_wire = workloads::Dtype::kBf16;
  bool counted_metadata = false;  // the source counts the top-k indices and weights (with_counted_metadata)
  CountedAs dispatch_counted = CountedAs::kWire;  // how the source counts a dispatched token
  // Cores (SMs) the table's kernels ran on; a row with its own count runs
  // its kernels' copy rates (kernels.*_copy_rate: cores x per-core rate)
  // scaled by row / table. 0: not given.
  int sms = 0;
  // [kernels] parameters calibrated on a row (topology::kKernelLaunchKey
  // and the other kernels.* keys): parameter and row EP, in calibration
  // order; combine_* keys on the row's combine cell, the others on its
  // dispatch cell. Solved jointly with the efficiencies above.
  std::vector<std::pair<std::string, int>> kernel_calibrations;
  std::uint64_t seed = 1;
  int pipeline_chunks = AlltoallvOptions{}.pipeline_chunks;  // chunks of each kernel stage (the replay's default)
};

struct DeepEpCell {
  double measured_Bps = 0;  // 0: not measured
  double measured_s = 0;    // 0: not measured
  double simulated_Bps = 0;
  double simulated_s = 0;
  bool measured() const { return measured_Bps > 0 || measured_s > 0; }
  // Relative, signed: simulated / measured - 1 on bandwidth when measured, else on time.
  double error() const { return measured_Bps > 0 ? simulated_Bps / measured_Bps - 1.0 : simulated_s / measured_s - 1.0; }
  // measured / simulated bandwidth (or simulated / measured time): the factor an efficiency moves by.
  double calibration_ratio() const { return measured_Bps > 0 ? measured_Bps / simulated_Bps : simulated_s / measured_s; }
};

struct DeepEpRow {
  int ep = 0;
  bool internode = false;
  DeepEpCountedBytes counted;  // per rank
  DeepEpMovedTokens moved;     // per rank, dispatch
  DeepEpTimes times;
  DeepEpCell dispatch, combine;
  bool calibration = false;  // its dispatch cell calibrated an efficiency
};

struct DeepEpValidation {
  DeepEpValidationOptions options;
  DeepEpTokenBytes token_bytes;
  double intra_node_latency_s = 0;  // route latency GPU to GPU in a node, paid once per stage
  double network_latency_s = 0;     // route latency GPU to the same local index in the next node
  double nvlink_line_rate_Bps = 0;  // the platform's node.link_bandwidth, per direction
  double nic_line_rate_Bps = 0;     // the platform's scaleout.nic_bandwidth, per direction
  double nvlink_efficiency = 0;  // node.link_efficiency, calibrated
  double rdma_efficiency = 0;    // scaleout.nic_efficiency: calibrated (normal), the platform's (low-latency)
  double low_latency_efficiency = 0;  // scaleout.low_latency_efficiency, calibrated (low-latency only)
  // Flat normal kernels: the one parameter, its line rate and calibrated value.
  bool flat = false;
  std::string flat_parameter;
  double flat_line_rate_Bps = 0;
  double flat_efficiency = 0;
  // Low-latency: the efficiency its rows may calibrate (the platform's
  // fabric: scaleout, supernode or node .low_latency_efficiency) and its line rate.
  std::string low_latency_parameter;
  double low_latency_line_rate_Bps = 0;
  bool per_selection = false;  // the platform's normal kernel sends one message per (token, expert)
  // The [kernels] values calibrated (SI: s or B/s), in options order.
  struct KernelValue {
    std::string parameter;
    double value = 0;
    int ep = 0;
    bool combine = false;  // calibrated on the row's combine cell
  };
  std::vector<KernelValue> kernels;
  std::vector<DeepEpRow> rows;   // in options.eps order
};

// Whether a [kernels] parameter is a copy rate (B/s) rather than a cost (s).
bool is_copy_rate(const std::string& parameter);

// The efficiency a low-latency table calibrates on `spec`: the fabric its
// messages cross between ranks (scaleout.low_latency_efficiency with a
// scale-out network, supernode.low_latency_efficiency on a supernode,
// node.low_latency_efficiency in one node).
const char* low_latency_parameter(const topology::ClusterSpec& spec);

// A platform where every NPU reaches every other in one hop through one
// switch: a supernode (CloudMatrix's, Atlas 950's UB), or nodes without a
// [scaleout] (one node). There the normal kernel is the flat one-hop
// exchange (no node relay: a relay would only add a hop), its tokens
// counted per destination rank at every EP, and its one parameter is
// flat_parameter(): supernode.port_efficiency, else node.link_efficiency.
bool is_flat_platform(const topology::ClusterSpec& spec);
const char* flat_parameter(const topology::ClusterSpec& spec);

// DeepEP's benchmark routing for row `ep` (`gpus_per_node` per node): one MoE layer
// of options.tokens_per_rank tokens per rank, uniform expert weights (its
// i.i.d. scores), group-limited to at most options.group_limit nodes per
// token, by the routing sampler's node-limited mode (the same routing
// `epsim run` samples; workloads/routing_sampler.cpp says why it is
// DeepEP's group-limited top-k).
workloads::TrafficMatrix deepep_benchmark_traffic(const DeepEpValidationOptions& options, int ep,
                                                  int gpus_per_node = kDeepEpGpusPerNode);

// Why row `ep` with `experts`, `top_k` and at most `group_limit` nodes per
// token (0: no limit) is not a DeepEP benchmark shape on nodes of
// `gpus_per_node`, with the key to blame ("ep", "experts", "top_k" or
// "node_limit"); nullopt when it is one. The measurement file checks its
// rows with it at their keys; deepep_benchmark_traffic refuses the same.
struct DeepEpShapeProblem {
  std::string key;
  std::string problem;
};
std::optional<DeepEpShapeProblem> deepep_shape_problem(int ep, int experts, int top_k, int group_limit,
                                                       int gpus_per_node);

// Builds the platform in this process's one SimGrid engine, calibrates the
// two efficiencies (NVLink first, on a row that only uses NVLink) and runs
// the rows; on a flat platform (flat_calibration_ep or kernel calibrations
// set) the one-hop kernel calibrates flat_parameter() and/or [kernels]
// parameters; low-latency rows calibrate low_latency_parameter() and/or
// the low-latency [kernels] parameters, on any platform (the shipped H800 file gives
// every GPU its own node: DeepEP V1's low-latency kernel uses RDMA only).
// With [kernels] parameters the calibrations are solved jointly, each on
// its own cell. Call once per process. Throws InputError for an unknown row, a
// calibration row of the wrong kind, tokens per rank other than DeepEP's,
// a platform too small for the rows or without 8 GPUs per node, bad
// overrides, and a calibration that does not converge or calibrates an
// efficiency outside its physical range (core/physical_ranges.hpp; at the
// row's dispatch key when it came from a file).
DeepEpValidation run_deepep_validation(const DeepEpValidationOptions& options);

// The platform TOML validated (file or preset, with the options'
// overrides) with node.link_efficiency and scaleout.nic_efficiency set to
// the calibrated values (flat: flat_parameter(); low-latency:
// low_latency_parameter(); and any calibrated kernels.* key, in s or B/s),
// and a header comment naming the cells they came from; `epsim run --platform` reads it.
std::string calibrated_platform_toml(const DeepEpValidation& v);

// The same as JSON: `platform`, the line rates and calibrated
// efficiencies (a kernels.* key: `value` in `unit`, `row_ep`, `kernel`),
// and `rows`, one object per row and kernel: `ep`, `kernel`
// ("dispatch"|"combine"), `measured_GBps`, `simulated_GBps`,
// `simulated_us`, `error` (simulated / measured - 1) and `calibration`.
std::string format_deepep_validation_json(const DeepEpValidation& v);

// The table: per row and kernel, measured and simulated GB/s (DeepEP's
// count), error, kernel time, bytes counted and moved; then what was
// calibrated on what.
std::string format_deepep_validation(const DeepEpValidation& v);

}  // namespace epsim::sim
