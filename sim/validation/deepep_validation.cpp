// DeepEP validation: calibrate the named cells, predict the rest (the
// printed forms are deepep_report.cpp's).
#include "sim/validation/deepep_validation.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <simgrid/s4u/Link.hpp>

#include "core/error.hpp"
#include "core/overrides.hpp"
#include "core/physical_ranges.hpp"
#include "core/toml_reader.hpp"
#include "sim/platform/platform_loader.hpp"
#include "sim/platform/sim_engine.hpp"
#include "topology/cluster_spec.hpp"
#include "topology/topology_graph.hpp"
#include "workloads/routing_stream.hpp"
#include "workloads/workload_spec.hpp"

namespace epsim::sim {

namespace s4u = simgrid::s4u;

const std::vector<DeepEpMeasurement>& deepep_h800_measurements() {
  static const std::vector<DeepEpMeasurement> rows = [] {
    std::vector<DeepEpMeasurement> out;
    for (auto [ep, dispatch_Bps, combine_Bps] : {std::tuple{8, 153e9, 158e9}, std::tuple{16, 43e9, 43e9},
                                                 std::tuple{32, 58e9, 57e9}, std::tuple{64, 51e9, 50e9}}) {
      DeepEpMeasurement m;
      m.ep = ep;
      m.dispatch_Bps = dispatch_Bps;
      m.combine_Bps = combine_Bps;
      out.push_back(m);
    }
    return out;
  }();
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

  // Every NPU's copy rates x `factor` (a row's cores over the table's).
  void scale_copy_rates(double factor) {
    if (factor == 1.0) return;
    for (NpuFacts& npu : platform_.facts.npus) {
      npu.kernels.dispatch_copy_Bps *= factor;
      npu.kernels.combine_copy_Bps *= factor;
    }
  }

  DeepEpRow run(int ep) {
    const workloads::TrafficMatrix& traffic = sampled(ep);
    DeepEpRow row;
    row.ep = ep;
    row.internode = traffic.nodes() > 1;
    row.counted = deepep_counted_bytes(traffic, token_bytes_, o_.kernel, flat_, per_selection_);
    row.moved = deepep_moved_tokens(traffic, platform_.facts, o_.kernel, flat_);
    const DeepEpMeasurement& m = measurement(o_, ep, "EP");
    // A row on its own core count copies at that share of the table's rates.
    const double cores = m.sms > 0 && o_.sms > 0 ? static_cast<double>(m.sms) / o_.sms : 1.0;
    const std::vector<NpuFacts> table_rates = cores != 1.0 ? platform_.facts.npus : std::vector<NpuFacts>{};
    scale_copy_rates(cores);
    row.times = time_deepep_kernels(engine_, platform_, traffic, token_bytes_, o_.pipeline_chunks, o_.kernel, flat_);
    if (cores != 1.0) platform_.facts.npus = table_rates;
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
// converge, which is an error, as is an efficiency outside its physical
// range (a rate far outside is never simulated), reported at the row's
// dispatch key when the row came from a file.
template <typename Apply>
double calibrate(Bench& bench, const DeepEpMeasurement& row, const std::string& source, const char* link,
                 double line_rate_Bps, Apply apply) {
  const int ep = row.ep;
  const std::string subject = fmt::format("{} calibration on the EP{} dispatch cell", link, ep);
  const double min_efficiency = physical_range(Physical::kEfficiency).min;
  double efficiency = 1.0;
  double ratio = 0;
  int steps = 0;
  while (steps < kCalibrationSteps) {
    ++steps;
    apply(efficiency);
    const DeepEpRow measured = bench.run(ep);
    ratio = measured.dispatch.calibration_ratio();
    efficiency *= ratio;
    if (std::abs(ratio - 1.0) < 1e-6) break;
    if (!(efficiency >= min_efficiency && efficiency <= 1 / min_efficiency)) break;
  }
  const bool converged = std::abs(ratio - 1.0) < 1e-3;
  if (!converged && !(efficiency < min_efficiency))
    throw InputError(SourceLocation{source}, subject,
                     fmt::format("did not converge: after {} steps measured / simulated bandwidth is still {:.4g} "
                                 "(efficiency {:.4g}); the row's time does not follow the {} bandwidth, so another "
                                 "link is its bottleneck (check the platform and its overrides)",
                                 steps, ratio, efficiency, link));
  if (!physical_range_problem(Physical::kEfficiency, efficiency).empty()) {
    const std::string problem =
        fmt::format("{}: the measurement needs {:.4g} GB/s per direction from the platform's {:.0f} GB/s line rate, "
                    "an efficiency of {:.4g}, outside the physical range {}",
                    subject, efficiency * line_rate_Bps / 1e9, line_rate_Bps / 1e9, efficiency,
                    describe_range(Physical::kEfficiency));
    if (!row.dispatch_key.empty()) throw InputError(row.dispatch_at, row.dispatch_key, problem);
    throw InputError(SourceLocation{source}, subject, problem.substr(subject.size() + 2));
  }
  apply(efficiency);
  return efficiency;
}

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

bool is_copy_rate(const std::string& parameter) {
  return parameter == topology::kDispatchCopyRateKey || parameter == topology::kCombineCopyRateKey;
}

bool is_flat_platform(const topology::ClusterSpec& spec) { return spec.supernode || !spec.scaleout; }

const char* low_latency_parameter(const topology::ClusterSpec& spec) {
  return spec.scaleout     ? topology::kLowLatencyEfficiencyKey
         : spec.supernode ? topology::kPortLowLatencyEfficiencyKey
                          : topology::kNodeLowLatencyEfficiencyKey;
}

const char* flat_parameter(const topology::ClusterSpec& spec) {
  return spec.supernode ? topology::kPortEfficiencyKey : topology::kLinkEfficiencyKey;
}

std::optional<DeepEpShapeProblem> deepep_shape_problem(int ep, int experts, int top_k, int group_limit,
                                                       int gpus_per_node) {
  const int per_node = std::min(ep, gpus_per_node);
  if (ep % per_node != 0)
    return DeepEpShapeProblem{"ep", fmt::format("EP{} is not a whole number of nodes of {} GPUs", ep, gpus_per_node)};
  if (experts % ep != 0)
    return DeepEpShapeProblem{"experts", fmt::format("{} experts do not split evenly over EP{}", experts, ep)};
  const int nodes = ep / per_node;
  const int reachable_nodes = group_limit == 0 ? nodes : std::min(nodes, group_limit);
  if (top_k > reachable_nodes * (experts / nodes))
    return DeepEpShapeProblem{group_limit == 0 || group_limit >= nodes ? "top_k" : "node_limit",
                              fmt::format("top-{} is more than the {} experts a token reaches on {} node{} of {} "
                                          "experts (EP{})",
                                          top_k, reachable_nodes * (experts / nodes), reachable_nodes,
                                          reachable_nodes == 1 ? "" : "s", experts / nodes, ep)};
  return std::nullopt;
}

workloads::TrafficMatrix deepep_benchmark_traffic(const DeepEpValidationOptions& o, int ep, int gpus_per_node) {
  if (const auto bad = deepep_shape_problem(ep, o.experts, o.top_k, o.group_limit, gpus_per_node))
    throw InputError({}, bad->key, "not a DeepEP benchmark shape: " + bad->problem);
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
  w.model.node_limit = o.group_limit == 0 ? nodes : o.group_limit;
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
      v.flat_efficiency = calibrate(bench, calibration_row(o, o.flat_calibration_ep, "flat calibration row"), spec.source,
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
          calibrate(bench, calibration_row(o, o.low_latency_calibration_ep, "low-latency calibration row"), spec.source, "low-latency", v.low_latency_line_rate_Bps,
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
    v.nvlink_efficiency = calibrate(bench, calibration_row(o, o.nvlink_calibration_ep, "calibration row"), spec.source, "NVLink", v.nvlink_line_rate_Bps,
                                    [&](double e) { bench.set_efficiencies(e, rdma); });
    v.rdma_efficiency = calibrate(bench, calibration_row(o, o.rdma_calibration_ep, "calibration row"), spec.source, "RDMA", v.nic_line_rate_Bps,
                                  [&](double e) { bench.set_efficiencies(v.nvlink_efficiency, rdma = e); });
  });
  v.kernels = kernel_values(bench, o);
  v.rows = run_rows(bench, o, efficiency_eps);
  return v;
}

}  // namespace epsim::sim
