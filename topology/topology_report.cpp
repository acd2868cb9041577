// Formatting topology reports.
#include "topology/topology_report.hpp"

#include <fmt/format.h>

namespace epsim::topology {

TopologyReport make_report(const TopologyGraph& topo) {
  const Graph& g = topo.graph();
  TopologyReport r;
  r.name = topo.spec().name;
  r.source = topo.spec().source;
  r.npu = topo.spec().npu;
  r.npus = topo.npu_count();
  r.nodes = topo.spec().node.count;
  for (auto [v, end] = boost::vertices(g); v != end; ++v) {
    if (g[*v].kind == VertexKind::kSwitch) ++r.switches;
    if (!g[*v].link.name.empty()) ++r.links;
  }
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    if (!g[*e].internal) ++r.links;
  }
  const ClusterSpec& spec = topo.spec();
  if (!spec.supernode) r.link_rates.push_back({"scale-up link", spec.node.link_bandwidth_Bps, spec.node.link_efficiency});
  if (spec.supernode)
    r.link_rates.push_back({"supernode port", spec.supernode->port_bandwidth_Bps, spec.supernode->port_efficiency});
  if (spec.scaleout) r.link_rates.push_back({"NIC", spec.scaleout->nic_bandwidth_Bps, spec.scaleout->nic_efficiency});
  if (spec.scaleout && spec.scaleout->low_latency_efficiency != spec.scaleout->nic_efficiency)
    r.link_rates.push_back({"NIC, low-latency kernel", spec.scaleout->nic_bandwidth_Bps,
                            spec.scaleout->low_latency_efficiency});
  if (!spec.supernode && spec.node.low_latency_efficiency != spec.node.link_efficiency)
    r.link_rates.push_back({"scale-up link, low-latency kernel", spec.node.link_bandwidth_Bps,
                            spec.node.low_latency_efficiency});
  if (spec.supernode && spec.supernode->low_latency_efficiency != spec.supernode->port_efficiency)
    r.link_rates.push_back({"supernode port, low-latency kernel", spec.supernode->port_bandwidth_Bps,
                            spec.supernode->low_latency_efficiency});
  r.kernels = spec.kernels;
  r.stack = spec.stack.name;
  r.stack_source = spec.stack.source;
  r.classes = pair_classes(topo);
  r.connected = is_connected(topo);
  r.bisection_Bps = bisection_bandwidth_Bps(topo);
  r.diameter_hops = diameter_hops(topo);
  return r;
}

namespace {

// "bf16 376.0 TFLOP/s, int8 752.0 TOP/s, no fp8 (...), fp32 376.0 TFLOP/s (the bf16 peak)". An NPU
// without FP8 never runs FP8 GEMMs at its INT8 peak: the replay refuses them
// unless the workload names a fallback (sim/replay/compute_precision.hpp).
std::string npu_rates(const NpuSpec& npu) {
  std::string out = fmt::format("bf16 {:.1f} TFLOP/s, ", npu.flops_bf16 / 1e12);
  if (npu.flops_fp8 > 0) out += fmt::format("fp8 {:.1f} TFLOP/s, ", npu.flops_fp8 / 1e12);
  else
    out += fmt::format("int8 {:.1f} TOP/s, no fp8 (fp8 GEMMs run at the peak of the workload's "
                       "precision.gemm_fallback, e.g. bf16), ",
                       npu.flops_int8 / 1e12);
  return out + fmt::format("fp32 {:.1f} TFLOP/s (the bf16 peak)", npu.flops_bf16 / 1e12);
}

// The [kernels] that differ from the defaults, one line; "" when none do.
std::string format_kernels(const KernelSpec& k) {
  std::string out;
  auto add = [&](const std::string& item) { out += (out.empty() ? "" : ", ") + item; };
  auto us = [](double s) { return fmt::format("{:.3g} us", 1e6 * s); };
  if (k.launch_s > 0) add("normal launch " + us(k.launch_s));
  if (k.dispatch_peer_cost_s > 0) add("dispatch " + us(k.dispatch_peer_cost_s) + " per peer");
  if (k.combine_peer_cost_s > 0) add("combine " + us(k.combine_peer_cost_s) + " per peer");
  if (k.dispatch_copy_Bps > 0) add(fmt::format("dispatch copies {:.1f} GB/s", k.dispatch_copy_Bps / 1e9));
  if (k.combine_copy_Bps > 0) add(fmt::format("combine copies {:.1f} GB/s", k.combine_copy_Bps / 1e9));
  if (k.per_selection) add("one message per selection");
  if (k.package_npus > 1) add(fmt::format("{} NPUs per package", k.package_npus));
  if (k.low_latency_launch_s > 0) add("low-latency control " + us(k.low_latency_launch_s));
  if (k.low_latency_peer_cost_s > 0) add("low-latency " + us(k.low_latency_peer_cost_s) + " per peer");
  return out.empty() ? "" : "  dispatch/combine kernels ([kernels], docs/simulator.md): " + out + "\n";
}

}  // namespace

std::string format_report(const TopologyReport& r) {
  std::string out = fmt::format("platform {} ({})\n", r.name, r.source);
  out += fmt::format("  NPU {}: {}\n", r.npu.model.empty() ? "(no model given)" : npu_description(r.npu),
                     npu_rates(r.npu));
  out += fmt::format("  HBM {:.1f} GB/s, {:.1f} GB per NPU; communication kernels hold {:g} % of compute\n",
                     r.npu.hbm_bandwidth_Bps / 1e9, r.npu.hbm_capacity_bytes / 1e9, 100 * r.npu.comm_compute_share);
  out += fmt::format("  {} NPUs in {} nodes, {} switch{}, {} links, {}\n", r.npus, r.nodes, r.switches,
                     r.switches == 1 ? "" : "es", r.links, r.connected ? "connected" : "DISCONNECTED");
  for (const LinkRate& l : r.link_rates)
    out += fmt::format("  {} {:.1f} GB/s line rate x {:.4g} efficiency = {:.1f} GB/s each direction\n", l.link_class,
                       l.line_rate_Bps / 1e9, l.efficiency, l.effective_Bps() / 1e9);
  out += format_kernels(r.kernels);
  if (!r.stack.empty())
    out += fmt::format("  software stack {} ({}): kernel libraries and framework costs, docs/stacks.md\n", r.stack,
                       r.stack_source);
  out += fmt::format("  bisection bandwidth {:.1f} GB/s, diameter {} hops\n", r.bisection_Bps / 1e9,
                     r.diameter_hops);
  out += "  pair class      sample                      bottleneck      latency  hops  route\n";
  for (const PairClass& c : r.classes) {
    std::string route;
    for (const RouteLink& l : c.route.links) route += (route.empty() ? "" : " ") + l.name;
    out +=
        fmt::format("  {:<14}  rank {:>4} -> rank {:<4}      {:>8.1f} GB/s  {:>7.2f} us  {:>4}  {}\n", c.name,
                    c.src, c.dst, c.route.bottleneck_Bps / 1e9, c.route.latency_s * 1e6, c.route.hops, route);
  }
  return out;
}

nlohmann::json report_json(const TopologyReport& r) {
  nlohmann::json classes = nlohmann::json::array();
  for (const PairClass& c : r.classes) {
    nlohmann::json links = nlohmann::json::array();
    for (const RouteLink& l : c.route.links) links.push_back(l.name);
    classes.push_back({{"class", c.name},
                       {"src_rank", c.src},
                       {"dst_rank", c.dst},
                       {"bottleneck_Bps", c.route.bottleneck_Bps},
                       {"latency_s", c.route.latency_s},
                       {"hops", c.route.hops},
                       {"links", links}});
  }
  nlohmann::json rates = nlohmann::json::array();
  for (const LinkRate& l : r.link_rates)
    rates.push_back({{"class", l.link_class},
                     {"line_rate_Bps", l.line_rate_Bps},
                     {"efficiency", l.efficiency},
                     {"effective_Bps", l.effective_Bps()}});
  nlohmann::json npu = {{"model", r.npu.model},
                         {"flops_bf16_per_s", r.npu.flops_bf16},
                         {"flops_fp32_per_s", r.npu.flops_bf16},
                         {"hbm_bandwidth_Bps", r.npu.hbm_bandwidth_Bps},
                         {"hbm_capacity_bytes", r.npu.hbm_capacity_bytes},
                         {"comm_compute_share", r.npu.comm_compute_share},
                         {"dies", r.npu.dies},
                         {"rank", r.npu.rank_per_die ? "die" : "package"}};  // the figures are per rank
  if (r.npu.flops_fp8 > 0) npu["flops_fp8_per_s"] = r.npu.flops_fp8;
  else npu["flops_int8_per_s"] = r.npu.flops_int8;
  return {{"name", r.name},
          {"source", r.source},
          {"npu", npu},
          {"npus", r.npus},
          {"nodes", r.nodes},
          {"switches", r.switches},
          {"links", r.links},
          {"stack", {{"name", r.stack}, {"source", r.stack_source}}},
          {"link_rates", rates},
          {"kernels",
           {{"launch_s", r.kernels.launch_s},
            {"dispatch_peer_cost_s", r.kernels.dispatch_peer_cost_s},
            {"combine_peer_cost_s", r.kernels.combine_peer_cost_s},
            {"dispatch_copy_Bps", r.kernels.dispatch_copy_Bps},
            {"combine_copy_Bps", r.kernels.combine_copy_Bps},
            {"messages", r.kernels.per_selection ? "selection" : "rank"},
            {"package_npus", r.kernels.package_npus},
            {"low_latency_launch_s", r.kernels.low_latency_launch_s},
            {"low_latency_peer_cost_s", r.kernels.low_latency_peer_cost_s}}},
          {"connected", r.connected},
          {"bisection_Bps", r.bisection_Bps},
          {"diameter_hops", r.diameter_hops},
          {"pair_classes", classes}};
}

}  // namespace epsim::topology
