// Reading measurement files: every key once, with its type and range, and
// every shape the DeepEP kernel model does not cover refused by name.
#include "app/measurement_file.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>

#include <fmt/format.h>

#include "core/file_assignments.hpp"
#include "core/physical_ranges.hpp"
#include "core/presets.hpp"
#include "core/toml_reader.hpp"
#include "sim/platform/platform_loader.hpp"
#include "topology/cluster_spec.hpp"

namespace epsim::app {

using namespace sim;

namespace {

// The model (deepep_bytes.hpp) counts per destination rank in one node and
// per destination node across nodes, DeepEP normal's NVL and RDMA counts,
// and per selection for the low-latency kernels and a flat normal kernel
// that sends one message per selection (the platform's kernels.messages).
std::string model_counting(DeepEpKernel kernel, int ep, bool flat, bool per_selection) {
  if (kernel == DeepEpKernel::kLowLatency || (flat && per_selection)) return "selection";
  return ep <= 8 || flat ? "rank" : "node";
}

bool is_kernel_parameter(const std::string& p) { return p.rfind("kernels.", 0) == 0; }

// "\"a\", \"b\" or \"c\"".
std::string one_of(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + ("\"" + names[i] + "\"");
  return out;
}

workloads::Dtype wire_type(const std::string& name) {
  return name == "fp8" ? workloads::Dtype::kFp8 : name == "int8" ? workloads::Dtype::kInt8 : workloads::Dtype::kBf16;
}

// A measured figure in `unit_si` SI units per unit written (1e9 for GB/s,
// 1e-6 for us), inside the physical range of `kind`; 0 when absent.
double measured(TableReader& t, const std::string& key, Physical kind, double unit_si) {
  if (!t.has(key)) return 0;
  const double v = t.number(key, -std::numeric_limits<double>::max(), std::numeric_limits<double>::max());
  const std::string out_of_range = physical_range_problem(kind, v * unit_si);
  if (!(v > 0) || !out_of_range.empty())
    t.fail(key, fmt::format("{}, got {:g}", v > 0 ? out_of_range : "must be > 0", v));
  return v;
}

MeasuredKernel read_kernel(TableReader& t, const char* kernel) {
  MeasuredKernel k;
  const std::string GBps = std::string(kernel) + "_GBps", us = std::string(kernel) + "_us";
  k.GBps = measured(t, GBps, Physical::kBandwidth, 1e9);
  k.us = measured(t, us, Physical::kTime, 1e-6);
  const std::string& key = k.GBps > 0 ? GBps : us;
  if (const toml::node* n = t.node(key)) k.at = location_of(*n);
  k.key = t.key_path(key);
  return k;
}

}  // namespace

std::vector<std::string> calibratable_parameters(DeepEpKernel kernel, const char* flat, const char* low_latency) {
  if (kernel == DeepEpKernel::kLowLatency)
    return {low_latency, topology::kLowLatencyLaunchKey, topology::kLowLatencyPeerCostKey};
  std::vector<std::string> out = flat == nullptr ? std::vector<std::string>{topology::kLinkEfficiencyKey,
                                                                            topology::kNicEfficiencyKey}
                                                 : std::vector<std::string>{flat};
  for (const char* k : {topology::kKernelLaunchKey, topology::kDispatchPeerCostKey, topology::kCombinePeerCostKey,
                        topology::kDispatchCopyRateKey, topology::kCombineCopyRateKey})
    out.push_back(k);
  return out;
}

MeasurementFile load_measurement_file(const std::string& path) {
  const toml::table doc = load_toml_file(path);
  TableReader root(doc, "");
  root.integer("schema", kMeasurementSchemaVersion, kMeasurementSchemaVersion);
  MeasurementFile m;
  m.path = path;
  m.source = root.string("source");
  m.platform = root.string("platform");
  if (m.platform.find('/') != std::string::npos || m.platform.find(".toml") != std::string::npos) {
    const std::filesystem::path p(m.platform);
    if (p.is_relative()) m.platform = (std::filesystem::path(path).parent_path() / p).string();
  }
  std::vector<FileAssignment> platform_set;
  if (auto set = root.optional_table("platform_set")) platform_set = read_assignments(*set, "");
  m.platform_set = assignment_texts(platform_set);
  // The kernel's layout follows the platform (is_flat_platform), so the
  // rows are checked against the file's platform with its overrides; an
  // error in one of those is told at its key in this file.
  const PlatformShape platform = [&] {
    try {
      return check_platform(PlatformRequest{m.platform, m.platform_set});
    } catch (const FileError& e) {
      throw named_at(e, location_of(*root.node("platform")), "platform");
    } catch (const InputError& e) {
      rethrow_at_assignment(e, platform_set);
    }
  }();

  TableReader shape = root.table("shape");
  m.tokens_per_rank = static_cast<int>(shape.integer("tokens_per_rank", 1, 1 << 20));
  m.hidden = static_cast<int>(shape.integer("hidden", 128, 1 << 20));
  m.experts = static_cast<int>(shape.integer("experts", 1, 1 << 16));
  m.top_k = static_cast<int>(shape.integer("top_k", 1, 1 << 10));
  m.node_limit = static_cast<int>(shape.integer_or("node_limit", 0, 0, 1 << 16));
  m.sms = static_cast<int>(shape.integer_or("sms", 0, 0, 1 << 16));
  m.dispatch = wire_type(shape.choice("dispatch", {"fp8", "int8", "bf16"}));
  m.combine = wire_type(shape.choice("combine", {"fp8", "int8", "bf16"}));
  m.kernel = shape.choice("kernel", {"normal", "low_latency"}) == "normal" ? DeepEpKernel::kNormal
                                                                           : DeepEpKernel::kLowLatency;
  if (m.kernel == DeepEpKernel::kNormal && platform.cluster && is_flat_platform(*platform.cluster))
    m.flat_parameter = flat_parameter(*platform.cluster);
  const bool flat = !m.flat_parameter.empty();
  m.per_selection = flat && platform.cluster->kernels.per_selection;
  m.low_latency_parameter =
      platform.cluster ? low_latency_parameter(*platform.cluster) : topology::kLowLatencyEfficiencyKey;
  const std::string counting = shape.choice("counting", {"rank", "node", "selection"});
  const bool per_selection = m.kernel == DeepEpKernel::kLowLatency || m.per_selection;
  if ((counting == "selection") != per_selection)
    shape.fail("counting", fmt::format("\"{}\" does not fit kernel = \"{}\" (its benchmark counts {})", counting,
                                       to_string(m.kernel),
                                       m.kernel == DeepEpKernel::kLowLatency ? "per selection"
                                       : m.per_selection ? "per selection: the platform's kernel sends one message "
                                                           "per (token, expert), kernels.messages = \"selection\""
                                                         : "per destination rank or node"));
  m.metadata = shape.boolean_or("metadata", false);
  const std::string counted = shape.choice_or("dispatch_counted", "wire", {"wire", "fp8", "bf16"});
  m.dispatch_counted = counted == "fp8" ? CountedAs::kFp8 : counted == "bf16" ? CountedAs::kBf16 : CountedAs::kWire;
  shape.finish();

  const toml::node* rows = root.node("row");
  const toml::array* array = rows ? rows->as_array() : nullptr;
  if (!array || !array->is_array_of_tables() || array->empty()) root.fail("row", "expected [[row]] tables");
  const std::vector<std::string> known = calibratable_parameters(m.kernel, flat ? m.flat_parameter.c_str() : nullptr,
                                                                  m.low_latency_parameter.c_str());
  std::vector<const MeasuredRow*> calibrated_by(known.size(), nullptr);
  m.rows.reserve(array->size());
  for (std::size_t i = 0; i < array->size(); ++i) {
    TableReader t(*array->get(i)->as_table(), fmt::format("row[{}]", i));
    MeasuredRow r;
    r.at = location_of(*array->get(i));
    r.ep = static_cast<int>(t.integer("ep", 1, 1 << 16));
    if (m.kernel == DeepEpKernel::kNormal && !flat && r.ep > 8 && r.ep % 8 != 0)
      t.fail("ep", fmt::format("expected 1..8 or a multiple of 8 GPUs per node, got {}", r.ep));
    r.experts = static_cast<int>(t.integer_or("experts", 0, 1, 1 << 16));
    // The row's benchmark shape on the file's platform, blamed at the key that breaks it.
    if (const auto bad = deepep_shape_problem(r.ep, r.experts ? r.experts : m.experts, m.top_k, m.node_limit,
                                              platform.npus_per_node)) {
      if (bad->key == "ep" || (bad->key == "experts" && r.experts)) t.fail(bad->key, bad->problem);
      shape.fail(bad->key, fmt::format("{} (row[{}] at line {})", bad->problem, i, r.at.line));
    }
    r.sms = static_cast<int>(t.integer_or("sms", 0, 1, 1 << 16));
    if (r.sms > 0 && m.sms == 0)
      t.fail("sms", "a row's cores scale the copy rates against the table's: give [shape] sms too");
    for (const MeasuredRow& other : m.rows)
      if (other.ep == r.ep) t.fail("ep", fmt::format("EP{} already has a row at line {}", r.ep, other.at.line));
    r.dispatch = read_kernel(t, "dispatch");
    r.combine = read_kernel(t, "combine");
    if (!r.dispatch.given() && !r.combine.given())
      t.fail("ep", "the row has no measured value: give dispatch_GBps, dispatch_us, combine_GBps or combine_us");
    const std::string row_counting = t.choice_or("counting", counting, {"rank", "node", "selection"});
    if (row_counting != model_counting(m.kernel, r.ep, flat, m.per_selection))
      t.fail(t.has("counting") ? "counting" : "ep",
             fmt::format("counting \"{}\" at EP{} is not modelled yet (the model counts {})", row_counting, r.ep,
                         m.kernel == DeepEpKernel::kLowLatency ? "per selection"
                         : m.per_selection ? "per selection: the platform's kernel sends one message per (token, "
                                             "expert), kernels.messages = \"selection\""
                         : flat        ? "per destination rank: the platform is flat, one hop to every rank"
                         : r.ep <= 8   ? "per destination rank in one node"
                                       : "per destination node across nodes"));
    if (const toml::node* c = t.node("calibrate")) {
      const toml::array* names = c->as_array();
      if (!names) t.fail("calibrate", "expected an array of parameter names");
      for (const toml::node& n : *names) {
        const std::string name = n.value<std::string>().value_or("");
        const auto it = std::find(known.begin(), known.end(), name);
        if (it == known.end())
          throw InputError(location_of(n), fmt::format("row[{}].calibrate", i),
                           fmt::format("unknown parameter \"{}\" for {} kernels{}: expected {}", name,
                                       to_string(m.kernel), flat ? " on a flat platform" : "", one_of(known)));
        const std::size_t p = static_cast<std::size_t>(it - known.begin());
        if (calibrated_by[p])
          throw InputError(location_of(n), fmt::format("row[{}].calibrate", i),
                           fmt::format("{} is already calibrated by the row at line {} (at most one row per parameter)",
                                       name, calibrated_by[p]->at.line));
        const bool combine = name == topology::kCombinePeerCostKey || name == topology::kCombineCopyRateKey;
        if (!(combine ? r.combine.given() : r.dispatch.given()))
          throw InputError(location_of(n), fmt::format("row[{}].calibrate", i),
                           combine ? fmt::format("{} calibrates on the row's combine measurement; give combine_GBps "
                                                 "or combine_us",
                                                 name)
                                   : "a calibration uses the row's dispatch measurement; give dispatch_GBps or "
                                     "dispatch_us");
        if (m.kernel == DeepEpKernel::kNormal && !flat && p < 2 && (p == 0) != (r.ep <= 8))
          throw InputError(location_of(n), fmt::format("row[{}].calibrate", i),
                           p == 0 ? "node.link_efficiency calibrates on an intranode row (EP <= 8)"
                                  : "scaleout.nic_efficiency calibrates on an internode row (EP > 8)");
        r.calibrate.push_back(name);
      }
    }
    t.finish();
    m.rows.push_back(r);
    for (const std::string& name : m.rows.back().calibrate) {
      calibrated_by[static_cast<std::size_t>(std::find(known.begin(), known.end(), name) - known.begin())] =
          &m.rows.back();
    }
  }
  root.finish();
  return m;
}

DeepEpValidationOptions validation_options(const MeasurementFile& m) {
  DeepEpValidationOptions o;
  o.source = m.source;
  o.kernel = m.kernel;
  o.platform = m.platform;
  o.overrides = m.platform_set;
  o.measured_tokens_per_rank = o.tokens_per_rank = m.tokens_per_rank;
  o.hidden = m.hidden;
  o.experts = m.experts;
  o.top_k = m.top_k;
  o.group_limit = m.node_limit;
  o.dispatch_wire = m.dispatch;
  o.combine_wire = m.combine;
  o.counted_metadata = m.metadata;
  o.dispatch_counted = m.dispatch_counted;
  o.sms = m.sms;
  o.measurements.clear();
  o.eps.clear();
  o.nvlink_calibration_ep = o.rdma_calibration_ep = 0;
  for (const MeasuredRow& r : m.rows) {
    o.measurements.push_back({r.ep, 1e9 * r.dispatch.GBps, 1e9 * r.combine.GBps, 1e-6 * r.dispatch.us,
                              1e-6 * r.combine.us, r.experts, r.sms, r.dispatch.at, r.dispatch.key});
    o.eps.push_back(r.ep);
    for (const std::string& p : r.calibrate) {
      if (is_kernel_parameter(p)) o.kernel_calibrations.emplace_back(p, r.ep);
      else if (p == m.flat_parameter) o.flat_calibration_ep = r.ep;
      else if (p == topology::kLinkEfficiencyKey) o.nvlink_calibration_ep = r.ep;
      else if (p == topology::kNicEfficiencyKey) o.rdma_calibration_ep = r.ep;
      else o.low_latency_calibration_ep = r.ep;
    }
  }
  if (!m.flat_parameter.empty()) {
    o.nvlink_calibration_ep = o.rdma_calibration_ep = 0;
    if (o.flat_calibration_ep == 0 && o.kernel_calibrations.empty())
      throw InputError(SourceLocation{m.path}, "row",
                       fmt::format("no row calibrates {} or a kernels.* parameter: validate calibrates a flat "
                                   "platform's parameters, each on one row",
                                   m.flat_parameter));
    return o;
  }
  if (m.kernel == DeepEpKernel::kLowLatency) {
    if (o.low_latency_calibration_ep == 0 && o.kernel_calibrations.empty())
      throw InputError(SourceLocation{m.path}, "row",
                       fmt::format("no row calibrates {} or a kernels.low_latency_* parameter: validate calibrates "
                                   "them on low-latency rows",
                                   m.low_latency_parameter));
    return o;
  }
  for (const auto& [ep, name] : {std::pair{o.nvlink_calibration_ep, topology::kLinkEfficiencyKey},
                                 std::pair{o.rdma_calibration_ep, topology::kNicEfficiencyKey}})
    if (ep == 0)
      throw InputError(SourceLocation{m.path}, "row",
                       fmt::format("no row calibrates {}: validate calibrates node.link_efficiency on an intranode "
                                   "row and scaleout.nic_efficiency on an internode row",
                                   name));
  return o;
}

// In the data folder beside platforms/ (core/presets.hpp finds it for a build tree and an installed copy alike).
std::string measurement_kind(const std::string& path) {
  try {
    const toml::table root = load_toml_file(path);
    if (!root.contains("kind")) return "";
    TableReader reader(root, "");
    const std::string kind = reader.string("kind");
    if (std::find(kMeasurementKinds.begin(), kMeasurementKinds.end(), kind) == kMeasurementKinds.end())
      reader.fail("kind", fmt::format("expected \"{}\" (a kernel table has no kind), got \"{}\"",
                                      fmt::join(kMeasurementKinds, "\", \""), kind));
    return kind;
  } catch (const InputError& e) {
    if (e.key() == "kind") throw;
    return "";
  } catch (const std::exception&) {
    return "";
  }
}

std::string default_measurement_file() { return data_dir() + "/validation/deepep-h800-normal.toml"; }

}  // namespace epsim::app
