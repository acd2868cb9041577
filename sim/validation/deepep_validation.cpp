// DeepEP validation: calibrate on two cells, predict the rest.
#include "sim/validation/deepep_validation.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include "core/error.hpp"
#include "sim/platform/platform_loader.hpp"
#include "sim/platform/sim_engine.hpp"
#include "topology/cluster_spec.hpp"
#include "topology/names.hpp"
#include "workloads/deepep_routing.hpp"

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

namespace {

constexpr int kGpusPerNode = 8;

const DeepEpMeasurement& measurement(int ep) {
  for (const DeepEpMeasurement& m : deepep_h800_measurements())
    if (m.ep == ep) return m;
  throw option_error("--ep", "DeepEP published EP8, 16, 32 and 64; got " + std::to_string(ep));
}

// Sets both directions of a split-duplex link (or a shared link) by name.
void set_bandwidth(const std::string& name, double Bps) {
  bool found = false;
  for (const std::string& n : {name + "_UP", name + "_DOWN"}) {
    if (s4u::Link* l = s4u::Link::by_name_or_null(n)) {
      l->set_bandwidth(Bps);
      found = true;
    }
  }
  if (found) return;
  if (s4u::Link* l = s4u::Link::by_name_or_null(name)) l->set_bandwidth(Bps);
  else throw InputError(SourceLocation{"deepep validation"}, name, "no such link in the platform");
}

class Bench {
 public:
  Bench(const DeepEpValidationOptions& o, std::vector<s4u::Host*> hosts, int nodes, const DeepEpPipeline& pipeline)
      : o_(o),
        hosts_(std::move(hosts)),
        nodes_(nodes),
        token_bytes_(deepep_token_bytes(o.hidden, o.top_k)),
        pipeline_(pipeline) {}

  void set_efficiencies(double nvlink, double rdma) {
    for (int n = 0; n < nodes_; ++n)
      for (int i = 0; i < kGpusPerNode; ++i) {
        set_bandwidth(topology::names::port(n, i), nvlink * o_.nvlink_line_rate_Bps);
        set_bandwidth(topology::names::nic(n, i), rdma * o_.nic_line_rate_Bps);
      }
  }

  DeepEpRow run(int ep) {
    const Sampled& s = sampled(ep);
    DeepEpRow row;
    row.ep = ep;
    row.internode = s.plan.internode;
    row.bytes = deepep_bytes(s.traffic, s.plan, token_bytes_);
    row.times = run_deepep_kernels(hosts_, s.plan, token_bytes_, pipeline_);
    const DeepEpMeasurement& m = measurement(ep);
    row.dispatch = {m.dispatch_Bps, row.bytes.dispatch_counted_bytes / row.times.dispatch_s};
    row.combine = {m.combine_Bps, row.bytes.combine_counted_bytes / row.times.combine_s};
    return row;
  }

 private:
  struct Sampled {
    workloads::TrafficMatrix traffic;
    DeepEpPlan plan;
  };
  // Routing is sampled once per EP and reused across calibration runs.
  const Sampled& sampled(int ep) {
    auto it = cache_.find(ep);
    if (it != cache_.end()) return it->second;
    workloads::DeepEpRoutingSpec r;
    r.ranks = ep;
    r.ranks_per_node = std::min(ep, kGpusPerNode);
    r.experts = o_.experts;
    r.top_k = o_.top_k;
    r.group_limit = o_.group_limit;
    r.tokens_per_rank = o_.tokens_per_rank;
    r.seed = o_.seed;
    Sampled s;
    s.traffic = workloads::sample_deepep_traffic(r);
    s.plan = plan_deepep(s.traffic);
    return cache_.emplace(ep, std::move(s)).first->second;
  }

  const DeepEpValidationOptions& o_;
  std::vector<s4u::Host*> hosts_;
  int nodes_;
  DeepEpTokenBytes token_bytes_;
  DeepEpPipeline pipeline_;
  std::map<int, Sampled> cache_;
};

// Scales the efficiency until the row's simulated dispatch bandwidth
// matches the measurement: time is nearly bytes / (efficiency x line
// rate), so the ratio converges in a few steps.
template <typename Apply>
double calibrate(Bench& bench, int ep, double start, Apply apply) {
  double efficiency = start;
  for (int i = 0; i < 8; ++i) {
    apply(efficiency);
    const DeepEpRow row = bench.run(ep);
    const double ratio = row.dispatch.measured_Bps / row.dispatch.simulated_Bps;
    efficiency *= ratio;
    if (std::abs(ratio - 1.0) < 1e-6) break;
  }
  apply(efficiency);
  return efficiency;
}

}  // namespace

DeepEpValidation run_deepep_validation(const DeepEpValidationOptions& o) {
  for (int ep : o.eps) measurement(ep);
  if (measurement(o.nvlink_calibration_ep).ep > kGpusPerNode)
    throw option_error("--nvlink-row", "NVLink calibrates on an intranode row (EP <= 8)");
  measurement(o.rdma_calibration_ep);
  if (o.rdma_calibration_ep <= kGpusPerNode)
    throw option_error("--rdma-row", "RDMA calibrates on an internode row (EP > 8)");

  // The platform's verdict is check_platform's, as for every command.
  const PlatformShape shape = check_platform(PlatformRequest{o.platform, o.overrides});
  if (!shape.cluster)
    throw InputError(SourceLocation{shape.source}, "",
                     "DeepEP validation needs a cluster TOML or preset, not a SimGrid XML");
  const topology::ClusterSpec& spec = *shape.cluster;
  if (spec.node.npus != kGpusPerNode || !spec.scaleout)
    throw InputError(SourceLocation{spec.source}, "node.npus",
                     "DeepEP's rows need 8 GPUs per node and a scale-out network");
  const int max_ep = std::max(*std::max_element(o.eps.begin(), o.eps.end()), o.rdma_calibration_ep);
  if (spec.npu_count() < max_ep)
    throw InputError(SourceLocation{spec.source}, "node.count",
                     "EP" + std::to_string(max_ep) + " needs " + std::to_string(max_ep / kGpusPerNode) +
                         " nodes, the platform has " + std::to_string(spec.node.count));
  OpenPlatform platform = open_platform(spec);
  SimEngine& engine = *platform.engine;
  std::vector<s4u::Host*> hosts;
  for (int n = 0; n < spec.node.count; ++n)
    for (int i = 0; i < kGpusPerNode; ++i) hosts.push_back(s4u::Host::by_name(topology::names::npu(n, i)));

  // Stage latencies from the platform's routes (GPU to GPU in a node, GPU
  // to the same local index in the next node), then the links' own
  // latencies to 0 so that chunks do not pay them again.
  DeepEpValidation v;
  v.options = o;
  std::vector<s4u::Link*> route;
  hosts[0]->route_to(hosts[1], route, &v.options.pipeline.nvlink_latency_s);
  route.clear();
  hosts[0]->route_to(hosts[kGpusPerNode], route, &v.options.pipeline.network_latency_s);
  for (s4u::Link* l : engine.engine().get_all_links()) l->set_latency(0);
  Bench bench(o, hosts, spec.node.count, v.options.pipeline);
  double rdma = 1.0;
  v.nvlink_efficiency =
      calibrate(bench, o.nvlink_calibration_ep, 1.0, [&](double e) { bench.set_efficiencies(e, rdma); });
  v.rdma_efficiency = calibrate(bench, o.rdma_calibration_ep, 1.0,
                                [&](double e) { bench.set_efficiencies(v.nvlink_efficiency, rdma = e); });
  for (int ep : o.eps) {
    DeepEpRow row = bench.run(ep);
    row.calibration = ep == o.nvlink_calibration_ep || ep == o.rdma_calibration_ep;
    v.rows.push_back(row);
  }
  return v;
}

std::string format_deepep_validation(const DeepEpValidation& v) {
  const DeepEpValidationOptions& o = v.options;
  std::string out = fmt::format(
      "DeepEP normal kernels on {} ({} tokens/rank, hidden {}, {} experts, top-{}, at most {} nodes per token, "
      "seed {}; {} chunks per stage; stage latency paid once: NVLink {:.1f} us, network {:.1f} us)\n"
      "bandwidth = DeepEP's counted bytes per rank / kernel time (GB/s = 1e9 B/s); intranode counts NVLink "
      "receive bytes, internode counts RDMA send bytes, both including the rank's own node; error = simulated / "
      "measured - 1; NVLink and network columns: bytes that cross those links per rank\n\n",
      o.platform, o.tokens_per_rank, o.hidden, o.experts, o.top_k, o.group_limit, o.seed, o.pipeline.chunks,
      1e6 * o.pipeline.nvlink_latency_s, 1e6 * o.pipeline.network_latency_s);
  out += fmt::format("{:<10} {:>3}  {:<8} {:>13} {:>13} {:>8} {:>11} {:>13} {:>14} {:>14}\n", "type", "EP", "kernel",
                     "measured GB/s", "simulated GB/s", "error", "kernel us", "counted MB/rank",
                     "NVLink MB/rank", "network MB/rank");
  for (const DeepEpRow& r : v.rows) {
    for (int k = 0; k < 2; ++k) {
      const bool d = k == 0;
      const DeepEpCell& c = d ? r.dispatch : r.combine;
      out += fmt::format("{:<10} {:>3}  {:<8} {:>13.1f} {:>14.1f} {:>+7.1f}% {:>11.1f} {:>15.2f} {:>14.2f} {:>15.2f}{}\n",
                         r.internode ? "internode" : "intranode", r.ep, d ? "dispatch" : "combine",
                         c.measured_Bps / 1e9, c.simulated_Bps / 1e9, 100.0 * c.error(),
                         1e6 * (d ? r.times.dispatch_s : r.times.combine_s),
                         (d ? r.bytes.dispatch_counted_bytes : r.bytes.combine_counted_bytes) / 1e6,
                         (d ? r.bytes.dispatch_nvlink_bytes : r.bytes.combine_nvlink_bytes) / 1e6,
                         (d ? r.bytes.dispatch_network_bytes : r.bytes.combine_network_bytes) / 1e6,
                         r.calibration && d ? "  (calibration)" : "");
    }
  }
  out += "\nlocal-node share of the counted RDMA tokens (counted, never on the NIC):";
  for (const DeepEpRow& r : v.rows)
    if (r.internode) out += fmt::format(" EP{} {:.1f}%", r.ep, 100.0 * r.bytes.counted_local_node_share);
  out += fmt::format(
      "\ncalibrated: NVLink efficiency {:.4f} (x {:.0f} GB/s line rate = {:.1f} GB/s per direction) on the EP{} "
      "dispatch cell; RDMA efficiency {:.4f} (x {:.0f} GB/s line rate = {:.2f} GB/s per direction) on the EP{} "
      "dispatch cell; every other cell is a prediction\n",
      v.nvlink_efficiency, o.nvlink_line_rate_Bps / 1e9, v.nvlink_efficiency * o.nvlink_line_rate_Bps / 1e9,
      o.nvlink_calibration_ep, v.rdma_efficiency, o.nic_line_rate_Bps / 1e9,
      v.rdma_efficiency * o.nic_line_rate_Bps / 1e9, o.rdma_calibration_ep);
  return out;
}

}  // namespace epsim::sim
