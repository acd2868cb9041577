// DeepEP validation: calibrate on two cells, predict the rest.
#include "core/json_output.hpp"
#include "sim/validation/deepep_validation.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <simgrid/s4u/Link.hpp>

#include "core/error.hpp"
#include "core/overrides.hpp"
#include "core/physical_ranges.hpp"
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
  const DeepEpTokenBytes b = deepep_token_bytes(o.hidden, o.top_k, o.kernel, o.dispatch_wire, o.combine_wire);
  return o.counted_metadata ? with_counted_metadata(b, o.top_k) : b;
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
        flat_(o.kernel == DeepEpKernel::kNormal && is_flat_platform(spec)) {
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

  // The low-latency kernel's NIC rate at scaleout.low_latency_efficiency
  // (the NIC links stay at nic_efficiency: the plan carries the difference).
  void set_low_latency_efficiency(double e) {
    for (NpuFacts& npu : platform_.facts.npus) npu.low_latency_nic_share = e / spec_.scaleout->nic_efficiency;
  }

  DeepEpRow run(int ep) {
    const workloads::TrafficMatrix& traffic = sampled(ep);
    DeepEpRow row;
    row.ep = ep;
    row.internode = traffic.nodes() > 1;
    row.counted = deepep_counted_bytes(traffic, token_bytes_, o_.kernel, flat_);
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

}  // namespace

bool is_flat_platform(const topology::ClusterSpec& spec) { return spec.supernode || !spec.scaleout; }

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

// Normal kernels on a flat platform: the one-hop exchange, one parameter
// (flat_parameter()) calibrated on one row's dispatch cell.
DeepEpValidation run_flat_validation(const DeepEpValidationOptions& o, const topology::ClusterSpec& spec) {
  const DeepEpMeasurement& cal = calibration_row(o, o.flat_calibration_ep, "flat calibration row");
  check_size(spec, std::max(*std::max_element(o.eps.begin(), o.eps.end()), cal.ep));
  Bench bench(o, spec);
  DeepEpValidation v = validation_of(o, spec, bench);
  v.flat = true;
  v.flat_parameter = flat_parameter(spec);
  v.flat_line_rate_Bps = spec.supernode ? spec.supernode->port_bandwidth_Bps : spec.node.link_bandwidth_Bps;
  v.intra_node_latency_s = route_latency_s(bench.platform().facts, 0, 1);
  v.flat_efficiency = calibrate(bench, cal, spec.source, spec.supernode ? "supernode port" : "scale-up link",
                                v.flat_line_rate_Bps, [&](double e) { bench.set_flat_efficiency(e); });
  v.rows = run_rows(bench, o, {cal.ep});
  return v;
}

// Low-latency rows: one parameter, scaleout.low_latency_efficiency, on one
// row's dispatch cell; the NVLink and NIC links keep the platform's rates.
DeepEpValidation run_low_latency_validation(const DeepEpValidationOptions& o, const topology::ClusterSpec& spec) {
  const DeepEpMeasurement& cal = calibration_row(o, o.low_latency_calibration_ep, "low-latency calibration row");
  if (!spec.scaleout)
    throw InputError(SourceLocation{spec.source}, "scaleout",
                     "the low-latency kernel sends over RDMA: the platform needs a [scaleout] network");
  check_size(spec, std::max(*std::max_element(o.eps.begin(), o.eps.end()), cal.ep));
  Bench bench(o, spec);
  DeepEpValidation v = validation_of(o, spec, bench);
  v.network_latency_s = route_latency_s(bench.platform().facts, 0, spec.node.npus);
  v.nvlink_efficiency = spec.node.link_efficiency;
  v.rdma_efficiency = spec.scaleout->nic_efficiency;
  v.low_latency_efficiency = calibrate(bench, cal, spec.source, "low-latency RDMA", v.nic_line_rate_Bps,
                                       [&](double e) { bench.set_low_latency_efficiency(e); });
  v.rows = run_rows(bench, o, {cal.ep});
  return v;
}

}  // namespace

DeepEpValidation run_deepep_validation(const DeepEpValidationOptions& o) {
  for (int ep : o.eps) measurement(o, ep, "EP");
  if (o.kernel == DeepEpKernel::kLowLatency) {
    check_tokens_and_chunks(o);
    return run_low_latency_validation(o, validated_cluster(o));
  }
  if (o.flat_calibration_ep != 0) {
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
  check_size(spec, std::max(*std::max_element(o.eps.begin(), o.eps.end()), o.rdma_calibration_ep));
  Bench bench(o, spec);

  DeepEpValidation v = validation_of(o, spec, bench);
  v.intra_node_latency_s = route_latency_s(bench.platform().facts, 0, 1);
  v.network_latency_s = route_latency_s(bench.platform().facts, 0, kGpusPerNode);
  double rdma = 1.0;
  const DeepEpMeasurement& nvlink_row = calibration_row(o, o.nvlink_calibration_ep, "calibration row");
  const DeepEpMeasurement& rdma_row = calibration_row(o, o.rdma_calibration_ep, "calibration row");
  v.nvlink_efficiency = calibrate(bench, nvlink_row, spec.source, "NVLink", v.nvlink_line_rate_Bps,
                                  [&](double e) { bench.set_efficiencies(e, rdma); });
  v.rdma_efficiency = calibrate(bench, rdma_row, spec.source, "RDMA", v.nic_line_rate_Bps,
                                [&](double e) { bench.set_efficiencies(v.nvlink_efficiency, rdma = e); });
  v.rows = run_rows(bench, o, {o.nvlink_calibration_ep, o.rdma_calibration_ep});
  return v;
}

std::string format_deepep_validation_json(const DeepEpValidation& v) {
  nlohmann::json rows = nlohmann::json::array();
  for (const DeepEpRow& r : v.rows) {
    for (int k = 0; k < 2; ++k) {
      const bool d = k == 0;
      const DeepEpCell& c = d ? r.dispatch : r.combine;
      if (!c.measured()) continue;
      rows.push_back({{"ep", r.ep},
                      {"kernel", d ? "dispatch" : "combine"},
                      {"simulated_GBps", c.simulated_Bps / 1e9},
                      {"simulated_us", 1e6 * c.simulated_s},
                      {"calibration", r.calibration && d}});
      if (c.measured_Bps > 0) rows.back()["measured_GBps"] = c.measured_Bps / 1e9;
      if (c.measured_s > 0) rows.back()["measured_us"] = 1e6 * c.measured_s;
      if (c.measured()) rows.back()["error"] = c.error();
    }
  }
  auto calibrated = [](double value, double line_rate_Bps, int ep) {
    return nlohmann::json{{"value", value}, {"line_rate_Bps", line_rate_Bps}, {"row_ep", ep}, {"kernel", "dispatch"}};
  };
  const bool ll = v.options.kernel == DeepEpKernel::kLowLatency;
  const nlohmann::json out = {
      {"platform", v.options.platform},
      {"kernels", to_string(v.options.kernel)},
      {"calibrated",
       v.flat ? nlohmann::json{{v.flat_parameter, calibrated(v.flat_efficiency, v.flat_line_rate_Bps,
                                                            v.options.flat_calibration_ep)}}
       : ll ? nlohmann::json{{topology::kLowLatencyEfficiencyKey,
                            calibrated(v.low_latency_efficiency, v.nic_line_rate_Bps,
                                       v.options.low_latency_calibration_ep)}}
          : nlohmann::json{{topology::kLinkEfficiencyKey, calibrated(v.nvlink_efficiency, v.nvlink_line_rate_Bps,
                                                                      v.options.nvlink_calibration_ep)},
                           {topology::kNicEfficiencyKey,
                            calibrated(v.rdma_efficiency, v.nic_line_rate_Bps, v.options.rdma_calibration_ep)}}},
      {"rows", rows}};
  return dump_checked(out, "validation");
}

std::string calibrated_platform_toml(const DeepEpValidation& v) {
  const DeepEpValidationOptions& o = v.options;
  const std::string file = topology::resolve_platform_file(o.platform);
  toml::table root = load_toml_file(file);
  apply_overrides(root, o.overrides);
  std::string overrides;
  for (const std::string& a : o.overrides) overrides += " --set " + a;
  if (v.flat) {
    apply_override(root, fmt::format("{}={:.17g}", v.flat_parameter, v.flat_efficiency));
    std::ostringstream text;
    text << toml::toml_formatter{root};
    return fmt::format("# Written by `epsim validate`: {}{} with {} = {:.4f} calibrated on the EP{} dispatch row of "
                       "{} (flat one-hop kernel, docs/validation.md).\n{}\n",
                       file, overrides, v.flat_parameter, v.flat_efficiency, o.flat_calibration_ep, o.source,
                       text.str());
  }
  if (o.kernel == DeepEpKernel::kLowLatency) {
    apply_override(root, fmt::format("{}={:.17g}", topology::kLowLatencyEfficiencyKey, v.low_latency_efficiency));
    std::ostringstream text;
    text << toml::toml_formatter{root};
    return fmt::format("# Written by `epsim validate`: {}{} with {} = {:.4f} calibrated on the EP{} low-latency "
                       "dispatch row of {} (docs/validation.md).\n{}\n",
                       file, overrides, topology::kLowLatencyEfficiencyKey, v.low_latency_efficiency,
                       o.low_latency_calibration_ep, o.source, text.str());
  }
  apply_override(root, fmt::format("{}={:.17g}", topology::kLinkEfficiencyKey, v.nvlink_efficiency));
  apply_override(root, fmt::format("{}={:.17g}", topology::kNicEfficiencyKey, v.rdma_efficiency));
  std::ostringstream text;
  text << toml::toml_formatter{root};
  return fmt::format(
      "# Written by `epsim validate`: {}{} with {} = {:.4f} calibrated on the EP{} dispatch row and {} = {:.4f} "
      "on the EP{} dispatch row of {} (docs/validation.md).\n{}\n",
      file, overrides, topology::kLinkEfficiencyKey, v.nvlink_efficiency, o.nvlink_calibration_ep,
      topology::kNicEfficiencyKey, v.rdma_efficiency, o.rdma_calibration_ep, o.source, text.str());
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
      "token once per destination rank, the rank's own tokens local, route latency {:.1f} us, combine then reduces "
      "at each token's owner in HBM\n"
      "bandwidth = counted bytes per rank (tokens received per destination rank, the rank's own included, {:.0f} B "
      "dispatch, {:.0f} B combine) / kernel time (GB/s = 1e9 B/s); error = simulated / measured - 1 (on kernel "
      "time where only the time is measured); scale-up column: message bytes per rank that cross the fabric\n\n",
      o.source, o.platform, o.tokens_per_rank, o.hidden, o.experts, o.top_k, o.seed, 1e6 * v.intra_node_latency_s,
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
                         r.calibration && d ? "  (calibration)" : "");
    }
  }
  if (v.flat) {
    out += fmt::format("\ncalibrated: {} {:.4f} (x {:.0f} GB/s line rate = {:.1f} GB/s per direction) on the EP{} "
                       "dispatch cell; every other cell is a prediction\n",
                       v.flat_parameter, v.flat_efficiency, v.flat_line_rate_Bps / 1e9,
                       v.flat_efficiency * v.flat_line_rate_Bps / 1e9, o.flat_calibration_ep);
    return out;
  }
  if (ll) {
    out += fmt::format(
        "\ncalibrated: low-latency RDMA efficiency (scaleout.low_latency_efficiency) {:.4f} (x {:.0f} GB/s line rate "
        "= {:.2f} GB/s per direction; the platform's nic_efficiency {:.4f}) on the EP{} dispatch cell; every other "
        "cell is a prediction\n",
        v.low_latency_efficiency, v.nic_line_rate_Bps / 1e9, v.low_latency_efficiency * v.nic_line_rate_Bps / 1e9,
        v.rdma_efficiency, o.low_latency_calibration_ep);
    return out;
  }
  out += "\nlocal-node share of the counted RDMA tokens (counted, never on the NIC):";
  for (const DeepEpRow& r : v.rows)
    if (r.internode) out += fmt::format(" EP{} {:.1f}%", r.ep, 100.0 * r.counted.local_node_share);
  out += fmt::format(
      "\ncalibrated: NVLink efficiency (node.link_efficiency) {:.4f} (x {:.0f} GB/s line rate = {:.1f} GB/s per direction) on the EP{} "
      "dispatch cell; RDMA efficiency (scaleout.nic_efficiency) {:.4f} (x {:.0f} GB/s line rate = {:.2f} GB/s per direction) on the EP{} "
      "dispatch cell; every other cell is a prediction\n",
      v.nvlink_efficiency, v.nvlink_line_rate_Bps / 1e9, v.nvlink_efficiency * v.nvlink_line_rate_Bps / 1e9,
      o.nvlink_calibration_ep, v.rdma_efficiency, v.nic_line_rate_Bps / 1e9,
      v.rdma_efficiency * v.nic_line_rate_Bps / 1e9, o.rdma_calibration_ep);
  return out;
}

}  // namespace epsim::sim
