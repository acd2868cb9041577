// End-to-end measurement files: reading, running, printing.
#include "app/end_to_end.hpp"

#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/child_job.hpp"
#include "app/run_job.hpp"
#include "core/toml_reader.hpp"
#include "sim/report/report.hpp"

namespace epsim::app {

namespace {

constexpr int kSchema = 1;

// A table of key = value pairs as run's --set assignments (strings quoted,
// so that "true" stays a string).
std::vector<std::string> assignments(TableReader& t) {
  std::vector<std::string> out;
  for (const auto& [key, value] : t.raw()) {
    const toml::node* n = t.node(key.str());
    std::string text;
    if (n->is_string())
      text = "\"" + *n->value<std::string>() + "\"";
    else if (n->is_integer())
      text = std::to_string(*n->value<std::int64_t>());
    else if (n->is_floating_point())
      text = fmt::format("{:.17g}", *n->value<double>());
    else if (n->is_boolean())
      text = *n->value<bool>() ? "true" : "false";
    else
      t.fail(key.str(), "expected a string, number or boolean, as after --set key=");
    out.push_back(std::string(key.str()) + "=" + text);
  }
  t.finish();
  return out;
}

std::vector<std::string> optional_assignments(TableReader& parent, const char* key) {
  if (auto t = parent.optional_table(key)) return assignments(*t);
  return {};
}

// One run of the file's layout with `workload_set` on top, in a child.
EndToEndRun run(const EndToEndFile& f, const std::string& name, const std::vector<std::string>& workload_set) {
  RunRequest request;
  request.platform = f.platform;
  request.workload = f.workload;
  for (const std::string& s : f.platform_set) request.overrides.push_back("platform." + s);
  for (const std::string& s : f.workload_set) request.overrides.push_back("workload." + s);
  for (const std::string& s : workload_set) request.overrides.push_back("workload." + s);
  const std::string json = run_child_job(f.path + (name.empty() ? "" : " (" + name + ")"), [&] {
    return sim::format_json(run_job(request).simulation.report);
  });
  const nlohmann::json r = nlohmann::json::parse(json);
  EndToEndRun out;
  out.name = name;
  out.step_s = r["step"]["sim_s"].get<double>();
  if (r.contains("throughput")) {
    out.tokens_per_s_per_npu = r["throughput"]["tokens_per_s_per_npu"].get<double>();
    out.mfu = r["throughput"]["mfu"].get<double>();
  }
  out.reduction = r["replay"]["reduction"].dump();
  return out;
}

}  // namespace

bool is_end_to_end_file(const std::string& path) {
  try {
    const toml::table root = load_toml_file(path);
    const auto kind = root["kind"].value<std::string>();
    return kind && *kind == "end_to_end";
  } catch (const std::exception&) {
    return false;
  }
}

EndToEndFile load_end_to_end_file(const std::string& path) {
  const toml::table doc = load_toml_file(path);
  TableReader root(doc, "");
  EndToEndFile f;
  f.path = path;
  root.integer("schema", kSchema, kSchema);
  root.choice("kind", {"end_to_end"});
  f.source = root.string("source");
  f.platform = root.string("platform");
  // A platform file is found beside the measurement file; a preset by its name.
  if (f.platform.size() > 5 && f.platform.compare(f.platform.size() - 5, 5, ".toml") == 0) {
    const std::filesystem::path p(f.platform);
    if (p.is_relative()) f.platform = (std::filesystem::path(path).parent_path() / p).string();
  }
  f.workload = root.string("workload");
  f.platform_set = optional_assignments(root, "platform_set");
  f.workload_set = optional_assignments(root, "workload_set");
  TableReader measured = root.table("measured");
  f.tokens_per_s_per_npu = measured.number("tokens_per_s_per_npu", 1e-3, 1e9);
  if (measured.has("band")) f.band = measured.number("band", 0, 1);
  measured.finish();
  if (const toml::node* slower = root.node("slower")) {
    const toml::array* array = slower->as_array();
    if (array == nullptr || !array->is_array_of_tables()) root.fail("slower", "expected [[slower]] tables");
    for (std::size_t i = 0; i < array->size(); ++i) {
      TableReader t(*array->get(i)->as_table(), fmt::format("slower[{}]", i));
      EndToEndVariant v;
      v.at = location_of(*array->get(i));
      v.name = t.string("name");
      v.workload_set = optional_assignments(t, "workload_set");
      if (v.workload_set.empty()) t.fail("workload_set", "a variant changes at least one workload key");
      t.finish();
      f.slower.push_back(std::move(v));
    }
  }
  root.finish();
  return f;
}

bool EndToEndValidation::within_band() const { return !file.band || std::abs(error()) <= *file.band; }

bool EndToEndValidation::variants_slower() const {
  for (const EndToEndRun& r : slower)
    if (!(r.step_s > layout.step_s)) return false;
  return true;
}

EndToEndValidation validate_end_to_end(const EndToEndFile& file) {
  EndToEndValidation v;
  v.file = file;
  v.layout = run(file, "", {});
  for (const EndToEndVariant& variant : file.slower) v.slower.push_back(run(file, variant.name, variant.workload_set));
  return v;
}

std::string format_end_to_end(const EndToEndValidation& v) {
  const EndToEndFile& f = v.file;
  std::string out = fmt::format("epsim validate: end to end, {}\n  source     {}\n  run        --platform {} --workload {}",
                                f.path, f.source, f.platform, f.workload);
  for (const std::string& s : f.platform_set) out += " --set platform." + s;
  for (const std::string& s : f.workload_set) out += " --set workload." + s;
  out += "\n";
  out += fmt::format("  {:<44} {:>12} {:>16} {:>9} {:>9}\n", "", "step", "tokens/s/NPU", "MFU", "step vs");
  out += fmt::format("  {:<44} {:>10.5g} s {:>16.1f} {:>7.2f} % {:>9}\n", "layout (simulated)", v.layout.step_s,
                     v.layout.tokens_per_s_per_npu, 100 * v.layout.mfu, "");
  out += fmt::format("  {:<44} {:>12} {:>16.1f} {:>9} {:>8}\n", "measured", "", f.tokens_per_s_per_npu, "", "");
  for (const EndToEndRun& r : v.slower)
    out += fmt::format("  {:<44} {:>10.5g} s {:>16.1f} {:>7.2f} % {:>+7.1f} %\n", r.name, r.step_s,
                       r.tokens_per_s_per_npu, 100 * r.mfu, 100 * (r.step_s / v.layout.step_s - 1));
  // Without a band the file is a prediction: its error is told, only its variants are checked.
  const std::string verdict = f.band ? fmt::format("check: {} (", v.passed() ? "passed" : "FAILED")
                              : v.passed() ? "prediction ("
                                           : "check: FAILED, a prediction (";
  const std::string band = f.band ? fmt::format("band +-{:.0f} %", 100 * *f.band) : "no band given";
  out += fmt::format("{}simulated {:+.1f} % from the measured {:.1f} tokens/s/NPU, {}{})\n", verdict,
                     100 * v.error(), f.tokens_per_s_per_npu, band,
                     v.slower.empty() ? ""
                     : v.variants_slower() ? "; every variant slower"
                                           : "; a variant is not slower");
  return out;
}

std::string format_end_to_end_json(const EndToEndValidation& v) {
  nlohmann::ordered_json j;
  j["file"] = v.file.path;
  j["source"] = v.file.source;
  j["measured_tokens_per_s_per_npu"] = v.file.tokens_per_s_per_npu;
  j["band"] = v.file.band ? nlohmann::ordered_json(*v.file.band) : nlohmann::ordered_json();
  const auto run_json = [](const EndToEndRun& r) {
    return nlohmann::ordered_json{{"name", r.name},
                                  {"step_s", r.step_s},
                                  {"tokens_per_s_per_npu", r.tokens_per_s_per_npu},
                                  {"mfu", r.mfu},
                                  {"reduction", nlohmann::ordered_json::parse(r.reduction)}};
  };
  j["layout"] = run_json(v.layout);
  j["error"] = v.error();
  j["slower"] = nlohmann::ordered_json::array();
  for (const EndToEndRun& r : v.slower) j["slower"].push_back(run_json(r));
  j["passed"] = v.passed();
  return j.dump(2) + "\n";
}

}  // namespace epsim::app
