// What `epsim validate` prints: the comparison table, its JSON form and
// the calibrated platform TOML (deepep_validation.hpp).
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/json_output.hpp"
#include "core/overrides.hpp"
#include "core/toml_reader.hpp"
#include "sim/validation/deepep_validation.hpp"
#include "topology/presets.hpp"

namespace epsim::sim {

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
