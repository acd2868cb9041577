// DeepEP validation: calibrate on two cells, predict the rest.
#include "core/json_output.hpp"
#include "sim/validation/deepep_validation.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <simgrid/s4u/Link.hpp>

#include "core/error.hpp"
#include "core/overrides.hpp"
#include "core/toml_reader.hpp"
#include "sim/platform/platform_loader.hpp"
#include "sim/platform/sim_engine.hpp"
#include "topology/cluster_spec.hpp"
#include "topology/presets.hpp"
#include "topology/topology_graph.hpp"
#include "workloads/routing_stream.hpp"
#include "workloads/workload_spec.hpp"

namespace epsim::sim {

namespace s4u = simgrid::s4u;

const std::vector<DeepEpMeasurement>& deepep_h800_measurements() {
  static const std::vector<DeepEpMeasurement> rows = {
      {8, 153e9, 158e9},
      {16, 43e9, 43e9},
      {32, 58e9, 57e9},
      {64, 51e9, 50e9},
  };
  return rows;
}

const DeepEpMeasurement* find_measurement(const std::vector<DeepEpMeasurement>& rows, int ep) {
  for (const DeepEpMeasurement& m : rows)
    if (m.ep == ep) return &m;
  return nullptr;
}

std::string measured_eps(const std::vector<DeepEpMeasurement>& rows) {
  std::string out = "EP";
  for (std::size_t i = 0; i < rows.size(); ++i)
    out += (i == 0 ? "" : i + 1 == rows.size() ? " and " : ", ") + std::to_string(rows[i].ep);
  return out;
}

namespace {

constexpr int kGpusPerNode = kDeepEpGpusPerNode;
constexpr int kCalibrationSteps = 8;

const DeepEpMeasurement& measurement(const DeepEpValidationOptions& o, int ep, const char* what) {
  if (const DeepEpMeasurement* m = find_measurement(o.measurements, ep)) return *m;
  throw InputError({}, what, fmt::format("the measured rows are {}; got EP{}", measured_eps(o.measurements), ep));
}

// A calibration row must measure dispatch: the calibrated cell.
const DeepEpMeasurement& calibration_row(const DeepEpValidationOptions& o, int ep, const char* what) {
  const DeepEpMeasurement& m = measurement(o, ep, what);
  if (!(m.dispatch_Bps > 0 || m.dispatch_s > 0))
    throw InputError({}, "calibration row", fmt::format("EP{} has no dispatch measurement to calibrate on", ep));
  return m;
}

DeepEpTokenBytes validated_token_bytes(const DeepEpValidationOptions& o) {
  const DeepEpTokenBytes b =
      deepep_token_bytes(o.hidden, o.top_k, o.kernel, o.dispatch_wire, o.combine_wire, o.dispatch_counted);
  return o.counted_metadata ? with_counted_metadata(b, o.top_k) : b;
}

// The field of a [kernels] parameter in KernelCosts.
double* kernel_field(KernelCosts& k, const std::string& parameter) {
  if (parameter == topology::kKernelLaunchKey) return &k.launch_s;
  if (parameter == topology::kDispatchPeerCostKey) return &k.dispatch_peer_s;
  if (parameter == topology::kCombinePeerCostKey) return &k.combine_peer_s;
  if (parameter == topology::kDispatchCopyRateKey) return &k.dispatch_copy_Bps;
  if (parameter == topology::kCombineCopyRateKey) return &k.combine_copy_Bps;
  if (parameter == topology::kLowLatencyLaunchKey) return &k.low_latency_launch_s;
  if (parameter == topology::kLowLatencyPeerCostKey) return &k.low_latency_peer_s;
  throw InternalError("not a [kernels] parameter: " + parameter);
}

// The running platform with link bandwidths that follow a cluster spec: a
// changed spec is applied link by link as the topology derives it (ports,
// NICs and the switch backplanes and rails built from them), to SimGrid and
// to the facts the replay prices rounds with.
class Bench {
 public:
  Bench(const DeepEpValidationOptions& o, const topology::ClusterSpec& spec)
      : o_(o),
        spec_(spec),
        open_(open_platform(spec)),
        engine_(*open_.engine),
        platform_(open_.loaded),
        token_bytes_(validated_token_bytes(o)),
        flat_(o.kernel == DeepEpKernel::kNormal && is_flat_platform(spec)),
        per_selection_(flat_ && spec.kernels.per_selection) {
    for (std::size_t l = 0; l < platform_.facts.links.size(); ++l) link_index_[platform_.facts.links[l].name] = l;
  }

  const LoadedPlatform& platform() const { return platform_; }
  const DeepEpTokenBytes& token_bytes() const { return token_bytes_; }

  // The platform with node.link_efficiency and scaleout.nic_efficiency set
  // to these values, its links derived as the topology derives them.
  void set_efficiencies(double nvlink, double rdma) {
    topology::ClusterSpec s = spec_;
    s.node.link_efficiency = nvlink;
    s.scaleout->nic_efficiency = rdma;
    set_spec(s);
  }

  // A flat platform's one parameter (flat_parameter()) at this value.
  void set_flat_efficiency(double e) {
    topology::ClusterSpec s = spec_;
    (s.supernode ? s.supernode->port_efficiency : s.node.link_efficiency) = e;
    set_spec(s);
  }

  // The links as the topology derives them from `s`.
  void set_spec(const topology::ClusterSpec& s) {
    const topology::TopologyGraph topo(s);
    std::map<std::string, double> bandwidth_Bps;
    for (int a = 0; a < topo.npu_count(); ++a)
      for (int b = 0; b < topo.npu_count(); ++b)
        if (a != b)
          for (const topology::RouteLink& l : topo.route(a, b).links) bandwidth_Bps[l.name] = l.bandwidth_Bps;
    for (const auto& [name, Bps] : bandwidth_Bps) {
      auto it = link_index_.find(name);
      if (it == link_index_.end()) continue;  // not on a route between NPUs the replay uses
      platform_.facts.links[it->second].bandwidth_Bps = Bps;
      s4u::Link::by_name(name)->set_bandwidth(Bps);
    }
  }

  // The low-latency kernel's rate at low_latency_parameter() = e (the links
  // stay at their efficiency: the plan carries the difference).
  void set_low_latency_efficiency(double e) {
    for (NpuFacts& npu : platform_.facts.npus) {
      if (spec_.scaleout) {
        npu.low_latency_nic_share = e / spec_.scaleout->nic_efficiency;
      } else if (spec_.supernode) {
        npu.low_latency_nic_share = npu.low_latency_node_share = e / spec_.supernode->port_efficiency;
      } else {
        npu.low_latency_node_share = e / spec_.node.link_efficiency;
      }
    }
  }

  // A [kernels] parameter (topology::kKernelLaunchKey, ...) at `value` (s or B/s) on every NPU.
  void set_kernel(const std::string& parameter, double value) {
    for (NpuFacts& npu : platform_.facts.npus) *kernel_field(npu.kernels, parameter) = value;
  }
  double kernel(const std::string& parameter) { return *kernel_field(platform_.facts.npus.front().kernels, parameter); }

  DeepEpRow run(int ep) {
    const workloads::TrafficMatrix& traffic = sampled(ep);
    DeepEpRow row;
    row.ep = ep;
    row.internode = traffic.nodes() > 1;
    row.counted = deepep_counted_bytes(traffic, token_bytes_, o_.kernel, flat_, per_selection_);
    row.moved = deepep_moved_tokens(traffic, platform_.facts, o_.kernel, flat_);
    row.times = time_deepep_kernels(engine_, platform_, traffic, token_bytes_, o_.pipeline_chunks, o_.kernel, flat_);
    const DeepEpMeasurement& m = measurement(o_, ep, "EP");
    row.dispatch = {m.dispatch_Bps, m.dispatch_s, row.counted.dispatch_bytes / row.times.dispatch_s,
                    row.times.dispatch_s};
    row.combine = {m.combine_Bps, m.combine_s, row.counted.combine_bytes / row.times.combine_s, row.times.combine_s};
    return row;
  }

 private:
  // Routing is sampled once per EP and reused across calibration runs.
  const workloads::TrafficMatrix& sampled(int ep) {
    auto it = cache_.find(ep);
    if (it != cache_.end()) return it->second;
    DeepEpValidationOptions o = o_;
    if (const int experts = measurement(o_, ep, "EP").experts) o.experts = experts;
    return cache_.emplace(ep, deepep_benchmark_traffic(o, ep, spec_.node.npus)).first->second;
  }

  const DeepEpValidationOptions& o_;
  topology::ClusterSpec spec_;
  OpenPlatform open_;
  SimEngine& engine_;
  LoadedPlatform& platform_;
  DeepEpTokenBytes token_bytes_;
  bool flat_;
  bool per_selection_;
  std::map<std::string, std::size_t> link_index_;
  std::map<int, workloads::TrafficMatrix> cache_;
};

// Scales the efficiency until the row's simulated dispatch bandwidth
// matches the measurement: time is nearly bytes / (efficiency x line
// rate), so the ratio converges in a few steps. When the row's time does
// not follow that link (another link is its bottleneck), it does not
// converge, which is an error, as is an efficiency outside (0, 1].
template <typename Apply>
double calibrate(Bench& bench, int ep, const std::string& source, const char* link, double line_rate_Bps,
                 Apply apply) {
  double efficiency = 1.0;
  double ratio = 0;
  for (int i = 0; i < kCalibrationSteps; ++i) {
    apply(efficiency);
    const DeepEpRow row = bench.run(ep);
    ratio = row.dispatch.calibration_ratio();
    efficiency *= ratio;
    if (std::abs(ratio - 1.0) < 1e-6) break;
  }
  const std::string subject = fmt::format("{} calibration on the EP{} dispatch cell", link, ep);
  if (!(std::abs(ratio - 1.0) < 1e-3))
    throw InputError(SourceLocation{source}, subject,
                     fmt::format("did not converge: after {} steps measured / simulated bandwidth is still {:.4g} "
                                 "(efficiency {:.4g}); the row's time does not follow the {} bandwidth, so another "
                                 "link is its bottleneck (check the platform and its overrides)",
                                 kCalibrationSteps, ratio, efficiency, link));
  if (!(efficiency > 0 && efficiency <= 1))
    throw InputError(SourceLocation{source}, subject,
                     fmt::format("efficiency {:.4g} is outside (0, 1]: the measurement needs {:.1f} GB/s per "
                                 "direction from the platform's {:.0f} GB/s line rate",
                                 efficiency, efficiency * line_rate_Bps / 1e9, line_rate_Bps / 1e9));
  apply(efficiency);
  return efficiency;
}

bool is_copy_rate(const std::string& p) { return p == topology::kDispatchCopyRateKey || p == topology::kCombineCopyRateKey; }
bool on_combine(const std::string& p) { return p == topology::kCombinePeerCostKey || p == topology::kCombineCopyRateKey; }

// The cell a [kernels] parameter calibrates on: combine_* on the combine cell, the others on dispatch's.
DeepEpCell cell_of(const DeepEpRow& row, const std::string& p) { return on_combine(p) ? row.combine : row.dispatch; }

// The measured kernel time of a cell (its time, or the counted bytes over its bandwidth).
double measured_s(const DeepEpCell& c) { return c.simulated_s / c.calibration_ratio(); }

// One [kernels] parameter solved on its cell, the others fixed: a copy
// rate scaled by measured / simulated (the kernel's time is nearly its
// bytes over the rate), a cost by Newton steps (the time is affine in it:
// paid before the copies, or beside them when the control path binds).
void calibrate_kernel(Bench& bench, const std::string& p, int ep, const std::string& source) {
  const std::string subject =
      fmt::format("{} calibration on the EP{} {} cell", p, ep, on_combine(p) ? "combine" : "dispatch");
  auto cell = [&](double x) {
    bench.set_kernel(p, x);
    return cell_of(bench.run(ep), p);
  };
  if (is_copy_rate(p)) {
    double x = bench.kernel(p);
    if (!(x > 0)) {  // unlimited: start from the bytes counted over the measured time
      bench.set_kernel(p, 0);
      const DeepEpRow row = bench.run(ep);
      x = (on_combine(p) ? row.counted.combine_bytes : row.counted.dispatch_bytes) / measured_s(cell_of(row, p));
    }
    double ratio = 0;
    for (int i = 0; i < 3 * kCalibrationSteps; ++i) {
      ratio = cell(x).calibration_ratio();
      if (std::abs(ratio - 1.0) < 1e-7) return;
      x *= ratio;
    }
    throw InputError(SourceLocation{source}, subject,
                     fmt::format("did not converge: measured / simulated is still {:.4g} at {:.4g} GB/s; the row's "
                                 "time does not follow the kernel's copies (the links bind: the copies hide under "
                                 "the bytes)",
                                 ratio, x / 1e9));
  }
  double x = bench.kernel(p);
  const double step_s = 1e-6;
  for (int i = 0; i < 2 * kCalibrationSteps; ++i) {
    const DeepEpCell c = cell(x);
    const double miss_s = c.simulated_s - measured_s(c);
    if (std::abs(miss_s) <= 1e-7 * measured_s(c)) return;
    const double slope = (cell(x + step_s).simulated_s - c.simulated_s) / step_s;
    if (!(slope > 0.01)) {
      // A cost beside the copies is hidden until it exceeds them: raise it
      // by the time missing (as if paid once), then follow its slope.
      if (miss_s < 0) {
        x -= miss_s;
        continue;
      }
      throw InputError(SourceLocation{source}, subject,
                       fmt::format("the row's time does not follow this cost (it moves {:.3g} s per s of it) and "
                                   "is {:.4g} us too slow without it: its bytes or copies bind",
                                   slope, 1e6 * miss_s));
    }
    x -= miss_s / slope;
    if (x < 0)
      throw InputError(SourceLocation{source}, subject,
                       fmt::format("needs a negative cost ({:.4g} us): the row is faster than its bytes and copies "
                                   "allow",
                                   1e6 * x));
  }
  bench.set_kernel(p, x);
}

constexpr int kJointRounds = 12;

// Every calibration of a validation solved together: `efficiencies`
// calibrates the link efficiencies (as without [kernels] parameters, once
// when there are none), then each [kernels] parameter on its own cell, in
// the file's order, round after round until every calibrated cell matches
// (a per-peer cost calibrated at EP128 is also paid at EP8).
template <typename Efficiencies>
void calibrate_jointly(Bench& bench, const DeepEpValidationOptions& o, const std::string& source,
                       const std::vector<int>& efficiency_eps, Efficiencies efficiencies) {
  if (o.kernel_calibrations.empty()) {
    efficiencies();
    return;
  }
  double worst = 0;
  for (int round = 0; round < kJointRounds; ++round) {
    efficiencies();
    for (const auto& [p, ep] : o.kernel_calibrations) calibrate_kernel(bench, p, ep, source);
    worst = 0;
    for (const auto& [p, ep] : o.kernel_calibrations)
      worst = std::max(worst, std::abs(cell_of(bench.run(ep), p).calibration_ratio() - 1.0));
    for (int ep : efficiency_eps) worst = std::max(worst, std::abs(bench.run(ep).dispatch.calibration_ratio() - 1.0));
    if (worst < 1e-6) return;
  }
  throw InputError(SourceLocation{source}, "calibration",
                   fmt::format("the calibrated parameters did not converge together after {} rounds (a cell still "
                               "{:.2g} off): two of them calibrate rows whose times follow the same mechanism",
                               kJointRounds, worst));
}

// The calibrated [kernels] values, in the options' order.
std::vector<DeepEpValidation::KernelValue> kernel_values(Bench& bench, const DeepEpValidationOptions& o) {
  std::vector<DeepEpValidation::KernelValue> out;
  for (const auto& [p, ep] : o.kernel_calibrations) out.push_back({p, bench.kernel(p), ep, on_combine(p)});
  return out;
}

}  // namespace

bool is_flat_platform(const topology::ClusterSpec& spec) { return spec.supernode || !spec.scaleout; }

const char* low_latency_parameter(const topology::ClusterSpec& spec) {
  return spec.scaleout     ? topology::kLowLatencyEfficiencyKey
         : spec.supernode ? topology::kPortLowLatencyEfficiencyKey
                          : topology::kNodeLowLatencyEfficiencyKey;
}

const char* flat_parameter(const topology::ClusterSpec& spec) {
  return spec.supernode ? topology::kPortEfficiencyKey : topology::kLinkEfficiencyKey;
}

workloads::TrafficMatrix deepep_benchmark_traffic(const DeepEpValidationOptions& o, int ep, int gpus_per_node) {
  workloads::WorkloadSpec w;
  w.model.layers = 1;
  w.model.experts = o.experts;
  w.model.top_k = o.top_k;
  w.parallel.ep = ep;
  w.parallel.dp = ep;  // one EP group
  w.parallel.ranks_per_node = std::min(ep, gpus_per_node);
  w.parallel.tokens_per_micro_batch = o.tokens_per_rank;
  w.parallel.sequence_length = o.tokens_per_rank;
  w.routing.kind = workloads::RoutingKind::kUniform;
  w.routing.seed = o.seed;
  const int nodes = ep / w.parallel.ranks_per_node;
  const int group_limit = o.group_limit == 0 ? nodes : o.group_limit;
  w.model.node_limit = group_limit;
  const bool shaped = ep % w.parallel.ranks_per_node == 0 && o.experts % ep == 0 && group_limit >= 1 &&
                      o.top_k >= 1 && o.top_k <= std::min(nodes, group_limit) * (o.experts / nodes);
  if (!shaped)
    throw InputError({}, "DeepEP routing",
                     fmt::format("EP{} with {} experts, top-{} and at most {} nodes per token is not a DeepEP "
                                 "benchmark shape ({} GPUs per node, experts a multiple of EP, top-k reachable)",
                                 ep, o.experts, o.top_k, o.group_limit, gpus_per_node));
  return workloads::sample_routing(w).layers.front().traffic;
}

namespace {

void check_tokens_and_chunks(const DeepEpValidationOptions& o) {
  if (o.tokens_per_rank != o.measured_tokens_per_rank)
    throw InputError({}, "tokens per rank",
                     fmt::format("the rows were measured at {} tokens per rank; at {} there is no measurement "
                                 "to compare with",
                                 o.measured_tokens_per_rank, o.tokens_per_rank));
  if (o.pipeline_chunks < 1)
    throw InputError({}, "pipeline chunks", fmt::format("expected >= 1, got {}", o.pipeline_chunks));
}

void check_size(const topology::ClusterSpec& spec, int max_ep) {
  if (spec.npu_count() < max_ep)
    throw InputError(SourceLocation{spec.source}, "node.count",
                     fmt::format("EP{} needs {} nodes of {} GPUs, the platform has {}", max_ep,
                                 (max_ep + spec.node.npus - 1) / spec.node.npus, spec.node.npus, spec.node.count));
}

// The platform's verdict is check_platform's, as for every command.
topology::ClusterSpec validated_cluster(const DeepEpValidationOptions& o) {
  const PlatformShape shape = check_platform(PlatformRequest{o.platform, o.overrides});
  if (!shape.cluster)
    throw InputError(SourceLocation{shape.source}, "",
                     "DeepEP validation needs a cluster TOML or preset, not a SimGrid XML");
  return *shape.cluster;
}

// Every row of the options, in order, on the calibrated bench.
std::vector<DeepEpRow> run_rows(Bench& bench, const DeepEpValidationOptions& o, const std::vector<int>& calibration_eps) {
  std::vector<DeepEpRow> rows;
  for (int ep : o.eps) {
    rows.push_back(bench.run(ep));
    rows.back().calibration = std::find(calibration_eps.begin(), calibration_eps.end(), ep) != calibration_eps.end();
  }
  return rows;
}

// What both kernels' validations record before calibrating: the options,
// the counted bytes and the links' line rates.
DeepEpValidation validation_of(const DeepEpValidationOptions& o, const topology::ClusterSpec& spec, const Bench& bench) {
  DeepEpValidation v;
  v.options = o;
  v.token_bytes = bench.token_bytes();
  v.nvlink_line_rate_Bps = spec.node.link_bandwidth_Bps;
  v.nic_line_rate_Bps = spec.scaleout ? spec.scaleout->nic_bandwidth_Bps : 0.0;
  return v;
}

// Every row a calibration uses: the efficiencies' and the [kernels] parameters'.
std::vector<int> calibration_eps(const DeepEpValidationOptions& o, std::vector<int> efficiency_eps) {
  for (const auto& [p, ep] : o.kernel_calibrations) {
    const DeepEpMeasurement& m = measurement(o, ep, "kernel calibration row");
    const bool combine = on_combine(p);
    if (!(combine ? (m.combine_Bps > 0 || m.combine_s > 0) : (m.dispatch_Bps > 0 || m.dispatch_s > 0)))
      throw InputError({}, "calibration row",
                       fmt::format("EP{} has no {} measurement to calibrate {} on", ep, combine ? "combine" : "dispatch", p));
    efficiency_eps.push_back(ep);
  }
  return efficiency_eps;
}

int largest(const std::vector<int>& a, const std::vector<int>& b) {
  int out = 0;
  for (int x : a) out = std::max(out, x);
  for (int x : b) out = std::max(out, x);
  return out;
}

// Normal kernels on a flat platform: the one-hop exchange, flat_parameter()
// calibrated on one row's dispatch cell and/or [kernels] parameters on theirs.
DeepEpValidation run_flat_validation(const DeepEpValidationOptions& o, const topology::ClusterSpec& spec) {
  std::vector<int> efficiency_eps;
  if (o.flat_calibration_ep != 0) efficiency_eps.push_back(calibration_row(o, o.flat_calibration_ep, "flat calibration row").ep);
  const std::vector<int> cal_eps = calibration_eps(o, efficiency_eps);
  check_size(spec, largest(o.eps, cal_eps));
  Bench bench(o, spec);
  DeepEpValidation v = validation_of(o, spec, bench);
  v.flat = true;
  v.per_selection = spec.kernels.per_selection;
  v.flat_parameter = flat_parameter(spec);
  v.flat_line_rate_Bps = spec.supernode ? spec.supernode->port_bandwidth_Bps : spec.node.link_bandwidth_Bps;
  v.flat_efficiency = spec.supernode ? spec.supernode->port_efficiency : spec.node.link_efficiency;
  v.intra_node_latency_s = route_latency_s(bench.platform().facts, 0, 1);
  calibrate_jointly(bench, o, spec.source, efficiency_eps, [&] {
    if (o.flat_calibration_ep != 0)
      v.flat_efficiency = calibrate(bench, o.flat_calibration_ep, spec.source,
                                    spec.supernode ? "supernode port" : "scale-up link", v.flat_line_rate_Bps,
                                    [&](double e) { bench.set_flat_efficiency(e); });
  });
  v.kernels = kernel_values(bench, o);
  v.rows = run_rows(bench, o, efficiency_eps);
  return v;
}

// Low-latency rows: low_latency_parameter() on one row's dispatch cell
// and/or the low-latency [kernels] parameters on theirs; the links keep
// the platform's rates.
DeepEpValidation run_low_latency_validation(const DeepEpValidationOptions& o, const topology::ClusterSpec& spec) {
  std::vector<int> efficiency_eps;
  if (o.low_latency_calibration_ep != 0)
    efficiency_eps.push_back(calibration_row(o, o.low_latency_calibration_ep, "low-latency calibration row").ep);
  const std::vector<int> cal_eps = calibration_eps(o, efficiency_eps);
  check_size(spec, largest(o.eps, cal_eps));
  Bench bench(o, spec);
  DeepEpValidation v = validation_of(o, spec, bench);
  const PlatformFacts& facts = bench.platform().facts;
  v.network_latency_s = route_latency_s(facts, 0, facts.npus.size() > static_cast<std::size_t>(spec.node.npus)
                                                      ? spec.node.npus
                                                      : std::min<int>(1, static_cast<int>(facts.npus.size()) - 1));
  v.nvlink_efficiency = spec.node.link_efficiency;
  v.rdma_efficiency = spec.scaleout ? spec.scaleout->nic_efficiency : 0.0;
  v.low_latency_parameter = low_latency_parameter(spec);
  v.low_latency_line_rate_Bps = spec.scaleout     ? spec.scaleout->nic_bandwidth_Bps
                                : spec.supernode ? spec.supernode->port_bandwidth_Bps
                                                 : spec.node.link_bandwidth_Bps;
  v.low_latency_efficiency = spec.scaleout     ? spec.scaleout->low_latency_efficiency
                             : spec.supernode ? spec.supernode->low_latency_efficiency
                                              : spec.node.low_latency_efficiency;
  calibrate_jointly(bench, o, spec.source, efficiency_eps, [&] {
    if (o.low_latency_calibration_ep != 0)
      v.low_latency_efficiency =
          calibrate(bench, o.low_latency_calibration_ep, spec.source, "low-latency", v.low_latency_line_rate_Bps,
                    [&](double e) { bench.set_low_latency_efficiency(e); });
  });
  v.kernels = kernel_values(bench, o);
  v.rows = run_rows(bench, o, efficiency_eps);
  return v;
}

}  // namespace

DeepEpValidation run_deepep_validation(const DeepEpValidationOptions& o) {
  for (int ep : o.eps) measurement(o, ep, "EP");
  if (o.kernel == DeepEpKernel::kLowLatency) {
    check_tokens_and_chunks(o);
    return run_low_latency_validation(o, validated_cluster(o));
  }
  if (o.flat_calibration_ep != 0 || (o.nvlink_calibration_ep == 0 && o.rdma_calibration_ep == 0)) {
    check_tokens_and_chunks(o);
    const topology::ClusterSpec spec = validated_cluster(o);
    if (!is_flat_platform(spec))
      throw InputError(SourceLocation{spec.source}, "scaleout",
                       fmt::format("the rows calibrate a flat platform's {} (a supernode, or nodes without "
                                   "[scaleout]); this platform has a scale-out network, whose normal kernel is "
                                   "the node relay (calibrate node.link_efficiency and scaleout.nic_efficiency)",
                                   topology::kPortEfficiencyKey));
    return run_flat_validation(o, spec);
  }
  if (measurement(o, o.nvlink_calibration_ep, "NVLink calibration row").ep > kGpusPerNode)
    throw InputError({}, "NVLink calibration row", "NVLink calibrates on an intranode row (EP <= 8)");
  if (measurement(o, o.rdma_calibration_ep, "RDMA calibration row").ep <= kGpusPerNode)
    throw InputError({}, "RDMA calibration row", "RDMA calibrates on an internode row (EP > 8)");
  for (int ep : {o.nvlink_calibration_ep, o.rdma_calibration_ep}) calibration_row(o, ep, "calibration row");
  check_tokens_and_chunks(o);

  const topology::ClusterSpec spec = validated_cluster(o);
  if (spec.node.npus != kGpusPerNode || is_flat_platform(spec))
    throw InputError(SourceLocation{spec.source}, "node.npus",
                     fmt::format("the rows are the node relay's (node.link_efficiency and scaleout.nic_efficiency): "
                                 "they need 8 GPUs per node and a scale-out network; a flat platform (a supernode, "
                                 "or nodes without [scaleout]) runs the one-hop kernel, whose rows calibrate {}",
                                 flat_parameter(spec)));
  const std::vector<int> efficiency_eps = {o.nvlink_calibration_ep, o.rdma_calibration_ep};
  check_size(spec, largest(o.eps, calibration_eps(o, efficiency_eps)));
  Bench bench(o, spec);

  DeepEpValidation v = validation_of(o, spec, bench);
  v.intra_node_latency_s = route_latency_s(bench.platform().facts, 0, 1);
  v.network_latency_s = route_latency_s(bench.platform().facts, 0, kGpusPerNode);
  calibrate_jointly(bench, o, spec.source, efficiency_eps, [&] {
    double rdma = 1.0;
    v.nvlink_efficiency = calibrate(bench, o.nvlink_calibration_ep, spec.source, "NVLink", v.nvlink_line_rate_Bps,
                                    [&](double e) { bench.set_efficiencies(e, rdma); });
    v.rdma_efficiency = calibrate(bench, o.rdma_calibration_ep, spec.source, "RDMA", v.nic_line_rate_Bps,
                                  [&](double e) { bench.set_efficiencies(v.nvlink_efficiency, rdma = e); });
  });
  v.kernels = kernel_values(bench, o);
  v.rows = run_rows(bench, o, efficiency_eps);
  return v;
}

namespace {

// Whether a row's dispatch (or combine) cell calibrated a parameter.
bool calibration_cell(const DeepEpValidation& v, const DeepEpRow& r, bool dispatch) {
  if (dispatch && r.calibration) return true;
  for (const DeepEpValidation::KernelValue& k : v.kernels)
    if (k.ep == r.ep && k.combine == !dispatch) return true;
  return false;
}

// A [kernels] value in its unit: "12.3 us", "52.1 GB/s".
std::string kernel_value_text(const DeepEpValidation::KernelValue& k) {
  return is_copy_rate(k.parameter) ? fmt::format("{:.2f} GB/s", k.value / 1e9) : fmt::format("{:.3f} us", 1e6 * k.value);
}

// The same as a TOML value, exact: "5.2123e+10Bps", "1.23e-05s".
std::string kernel_value_toml(const DeepEpValidation::KernelValue& k) {
  return fmt::format("\"{:.17g}{}\"", k.value, is_copy_rate(k.parameter) ? "Bps" : "s");
}

}  // namespace

std::string format_deepep_validation_json(const DeepEpValidation& v) {
  nlohmann::json rows = nlohmann::json::array();
  for (const DeepEpRow& r : v.rows) {
    for (int k = 0; k < 2; ++k) {
      const bool d = k == 0;
      const DeepEpCell& c = d ? r.dispatch : r.combine;
      if (!c.measured()) continue;
      const bool calibration = calibration_cell(v, r, d);
      rows.push_back({{"ep", r.ep},
                      {"kernel", d ? "dispatch" : "combine"},
                      {"simulated_GBps", c.simulated_Bps / 1e9},
                      {"simulated_us", 1e6 * c.simulated_s},
                      {"calibration", calibration}});
      if (c.measured_Bps > 0) rows.back()["measured_GBps"] = c.measured_Bps / 1e9;
      if (c.measured_s > 0) rows.back()["measured_us"] = 1e6 * c.measured_s;
      if (c.measured()) rows.back()["error"] = c.error();
    }
  }
  auto calibrated = [](double value, double line_rate_Bps, int ep) {
    return nlohmann::json{{"value", value}, {"line_rate_Bps", line_rate_Bps}, {"row_ep", ep}, {"kernel", "dispatch"}};
  };
  const DeepEpValidationOptions& o = v.options;
  nlohmann::json cal = nlohmann::json::object();
  if (v.flat) {
    if (o.flat_calibration_ep != 0)
      cal[v.flat_parameter] = calibrated(v.flat_efficiency, v.flat_line_rate_Bps, o.flat_calibration_ep);
  } else if (o.kernel == DeepEpKernel::kLowLatency) {
    if (o.low_latency_calibration_ep != 0)
      cal[v.low_latency_parameter] =
          calibrated(v.low_latency_efficiency, v.low_latency_line_rate_Bps, o.low_latency_calibration_ep);
  } else {
    cal[topology::kLinkEfficiencyKey] = calibrated(v.nvlink_efficiency, v.nvlink_line_rate_Bps, o.nvlink_calibration_ep);
    cal[topology::kNicEfficiencyKey] = calibrated(v.rdma_efficiency, v.nic_line_rate_Bps, o.rdma_calibration_ep);
  }
  for (const DeepEpValidation::KernelValue& k : v.kernels)
    cal[k.parameter] = {{"value", k.value},
                        {"unit", is_copy_rate(k.parameter) ? "B/s" : "s"},
                        {"row_ep", k.ep},
                        {"kernel", k.combine ? "combine" : "dispatch"}};
  const nlohmann::json out = {
      {"platform", o.platform}, {"kernels", to_string(o.kernel)}, {"calibrated", cal}, {"rows", rows}};
  return dump_checked(out, "validation");
}

std::string calibrated_platform_toml(const DeepEpValidation& v) {
  const DeepEpValidationOptions& o = v.options;
  const std::string file = topology::resolve_platform_file(o.platform);
  toml::table root = load_toml_file(file);
  apply_overrides(root, o.overrides);
  std::string overrides;
  for (const std::string& a : o.overrides) overrides += " --set " + a;
  std::vector<std::string> what;  // "key = value calibrated on the EPn dispatch row"
  auto set = [&](const std::string& key, const std::string& value, const std::string& shown, int ep, const char* cell) {
    apply_override(root, key + "=" + value);
    what.push_back(fmt::format("{} = {} calibrated on the EP{} {} row", key, shown, ep, cell));
  };
  auto efficiency = [&](const std::string& key, double e, int ep, const char* cell) {
    set(key, fmt::format("{:.17g}", e), fmt::format("{:.4f}", e), ep, cell);
  };
  if (v.flat) {
    if (o.flat_calibration_ep != 0) efficiency(v.flat_parameter, v.flat_efficiency, o.flat_calibration_ep, "dispatch");
  } else if (o.kernel == DeepEpKernel::kLowLatency) {
    if (o.low_latency_calibration_ep != 0)
      efficiency(v.low_latency_parameter, v.low_latency_efficiency, o.low_latency_calibration_ep, "low-latency dispatch");
  } else {
    efficiency(topology::kLinkEfficiencyKey, v.nvlink_efficiency, o.nvlink_calibration_ep, "dispatch");
    efficiency(topology::kNicEfficiencyKey, v.rdma_efficiency, o.rdma_calibration_ep, "dispatch");
  }
  for (const DeepEpValidation::KernelValue& k : v.kernels)
    set(k.parameter, kernel_value_toml(k), kernel_value_text(k), k.ep, k.combine ? "combine" : "dispatch");
  std::ostringstream text;
  text << toml::toml_formatter{root};
  std::string list;
  for (std::size_t i = 0; i < what.size(); ++i)
    list += (i == 0 ? "" : i + 1 == what.size() ? " and " : ", ") + what[i];
  return fmt::format("# Written by `epsim validate`: {}{} with {} of {}{} (docs/validation.md).\n{}\n", file, overrides,
                     list, o.source, v.flat ? " (flat one-hop kernel)" : "", text.str());
}

namespace {

std::string low_latency_header(const DeepEpValidation& v) {
  const DeepEpValidationOptions& o = v.options;
  return fmt::format(
      "{}: DeepEP low-latency kernels on {} ({} tokens/rank, hidden {}, {} experts, top-{}, seed {}), simulated as "
      "`epsim run --algorithm low-latency`: one message per (token, selected expert) straight to the expert's rank, "
      "a rank's messages to itself local, one round, network latency {:.1f} us\n"
      "bandwidth = counted bytes per rank (every selection, {:.0f} B dispatch, {:.0f} B combine) / kernel time "
      "(GB/s = 1e9 B/s); error = simulated / measured - 1 (on kernel time where only the time is measured); "
      "NVLink and network columns: message bytes per rank inside a node and between nodes\n\n",
      o.source, o.platform, o.tokens_per_rank, o.hidden, o.experts, o.top_k, o.seed, 1e6 * v.network_latency_s,
      v.token_bytes.dispatch_counted, v.token_bytes.combine_counted);
}

std::string flat_header(const DeepEpValidation& v) {
  const DeepEpValidationOptions& o = v.options;
  return fmt::format(
      "{}: DeepEP normal kernels on {} ({} tokens/rank, hidden {}, {} experts, top-{}, seed {}), a flat platform "
      "(every rank one hop from every other through the switch), simulated as `epsim run --algorithm direct`: each "
      "token once per {}, the rank's own tokens local, route latency {:.1f} us, combine then reduces "
      "at each token's owner in HBM\n"
      "bandwidth = counted bytes per rank ({}, the rank's own included, {:.0f} B "
      "dispatch, {:.0f} B combine) / kernel time (GB/s = 1e9 B/s); error = simulated / measured - 1 (on kernel "
      "time where only the time is measured); scale-up column: message bytes per rank that cross the fabric\n\n",
      o.source, o.platform, o.tokens_per_rank, o.hidden, o.experts, o.top_k, o.seed,
      v.per_selection ? "selected expert (kernels.messages = \"selection\")" : "destination rank",
      1e6 * v.intra_node_latency_s,
      v.per_selection ? "selections received" : "tokens received per destination rank",
      v.token_bytes.dispatch_counted, v.token_bytes.combine_counted);
}

}  // namespace

std::string format_deepep_validation(const DeepEpValidation& v) {
  const DeepEpValidationOptions& o = v.options;
  const bool ll = o.kernel == DeepEpKernel::kLowLatency;
  std::string out = ll ? low_latency_header(v) : v.flat ? flat_header(v) : fmt::format(
      "{}: DeepEP normal kernels on {} ({} tokens/rank, hidden {}, {} experts, top-{}, at most {} nodes per token, "
      "seed {}), simulated as `epsim run`'s hierarchical dispatch/combine: {} pipelined chunks per stage, stage "
      "latency paid once (NVLink {:.1f} us, network {:.1f} us)\n"
      "bandwidth = DeepEP's counted bytes per rank / kernel time (GB/s = 1e9 B/s); intranode counts NVLink "
      "receive bytes, internode counts RDMA send bytes, both including the rank's own node; error = simulated / "
      "measured - 1 (on kernel time where only the time is measured); NVLink and network columns: bytes that cross those links per rank\n\n",
      o.source, o.platform, o.tokens_per_rank, o.hidden, o.experts, o.top_k,
      o.group_limit == 0 ? std::string("all") : std::to_string(o.group_limit), o.seed, o.pipeline_chunks,
      1e6 * v.intra_node_latency_s, 1e6 * v.network_latency_s);
  out += fmt::format("{:<10} {:>3}  {:<8} {:>13} {:>13} {:>11} {:>8} {:>11} {:>13} {:>14} {:>14}\n", "type", "EP",
                     "kernel", "measured GB/s", "simulated GB/s", "measured us", "error", "kernel us",
                     "counted MB/rank", v.flat ? "scale-up MB/rank" : "NVLink MB/rank", "network MB/rank");
  auto figure = [](double v, double scale) { return v > 0 ? fmt::format("{:.1f}", v * scale) : std::string("-"); };
  for (const DeepEpRow& r : v.rows) {
    for (int k = 0; k < 2; ++k) {
      const bool d = k == 0;
      const DeepEpCell& c = d ? r.dispatch : r.combine;
      if (!c.measured()) continue;
      const double token_bytes = d ? v.token_bytes.dispatch_moved : v.token_bytes.combine_moved;
      out += fmt::format("{:<10} {:>3}  {:<8} {:>13} {:>14.1f} {:>11} {:>+7.1f}% {:>11.1f} {:>15.2f} {:>14.2f} {:>15.2f}{}\n",
                         v.flat ? "flat" : r.internode ? "internode" : "intranode", r.ep, d ? "dispatch" : "combine",
                         figure(c.measured_Bps, 1e-9), c.simulated_Bps / 1e9, figure(c.measured_s, 1e6),
                         100.0 * c.error(), 1e6 * c.simulated_s,
                         (d ? r.counted.dispatch_bytes : r.counted.combine_bytes) / 1e6,
                         r.moved.intra_node_tokens_per_rank * token_bytes / 1e6,
                         r.moved.network_tokens_per_rank * token_bytes / 1e6,
                         calibration_cell(v, r, d) ? "  (calibration)" : "");
    }
  }
  // The [kernels] values calibrated, each with the cell it came from.
  std::string kernels;
  for (const DeepEpValidation::KernelValue& k : v.kernels)
    kernels += fmt::format("{}{} {} on the EP{} {} cell", kernels.empty() ? "" : "; ", k.parameter,
                           kernel_value_text(k), k.ep, k.combine ? "combine" : "dispatch");
  if (!kernels.empty()) kernels = "; kernel mechanisms (docs/simulator.md): " + kernels;
  if (v.flat) {
    out += o.flat_calibration_ep == 0
               ? "\ncalibrated: " + kernels.substr(2)
               : fmt::format("\ncalibrated: {} {:.4f} (x {:.0f} GB/s line rate = {:.1f} GB/s per direction) on the EP{} "
                             "dispatch cell{}",
                             v.flat_parameter, v.flat_efficiency, v.flat_line_rate_Bps / 1e9,
                             v.flat_efficiency * v.flat_line_rate_Bps / 1e9, o.flat_calibration_ep, kernels);
    return out + "; every other cell is a prediction\n";
  }
  if (ll) {
    const bool rdma = v.low_latency_parameter == topology::kLowLatencyEfficiencyKey;
    out += o.low_latency_calibration_ep == 0
               ? "\ncalibrated: " + kernels.substr(2)
               : fmt::format("\ncalibrated: low-latency {} efficiency ({}) {:.4f} (x {:.0f} GB/s line rate = {:.2f} "
                             "GB/s per direction{}) on the EP{} dispatch cell{}",
                             rdma ? "RDMA" : "scale-up", v.low_latency_parameter, v.low_latency_efficiency,
                             v.low_latency_line_rate_Bps / 1e9,
                             v.low_latency_efficiency * v.low_latency_line_rate_Bps / 1e9,
                             rdma ? fmt::format("; the platform's nic_efficiency {:.4f}", v.rdma_efficiency) : "",
                             o.low_latency_calibration_ep, kernels);
    return out + "; every other cell is a prediction\n";
  }
  out += "\nlocal-node share of the counted RDMA tokens (counted, never on the NIC):";
  for (const DeepEpRow& r : v.rows)
    if (r.internode) out += fmt::format(" EP{} {:.1f}%", r.ep, 100.0 * r.counted.local_node_share);
  out += fmt::format(
      "\ncalibrated: NVLink efficiency (node.link_efficiency) {:.4f} (x {:.0f} GB/s line rate = {:.1f} GB/s per direction) on the EP{} "
      "dispatch cell; RDMA efficiency (scaleout.nic_efficiency) {:.4f} (x {:.0f} GB/s line rate = {:.2f} GB/s per direction) on the EP{} "
      "dispatch cell{}; every other cell is a prediction\n",
      v.nvlink_efficiency, v.nvlink_line_rate_Bps / 1e9, v.nvlink_efficiency * v.nvlink_line_rate_Bps / 1e9,
      o.nvlink_calibration_ep, v.rdma_efficiency, v.nic_line_rate_Bps / 1e9,
      v.rdma_efficiency * v.nic_line_rate_Bps / 1e9, o.rdma_calibration_ep, kernels);
  return out;
}

}  // namespace epsim::sim
