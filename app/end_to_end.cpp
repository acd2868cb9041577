// End-to-end measurement files: reading, running, printing.
#include "app/end_to_end.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/child_job.hpp"
#include "app/measurement_file.hpp"
#include "app/run_job.hpp"
#include "app/serving_curve.hpp"
#include "core/input_file.hpp"
#include "core/presets.hpp"
#include "core/toml_reader.hpp"
#include "sim/report/report.hpp"

namespace epsim::app {

namespace {

constexpr int kSchema = 1;

std::vector<FileAssignment> optional_assignments(TableReader& parent, const char* key, const std::string& side) {
  if (auto t = parent.optional_table(key)) return read_assignments(*t, side);
  return {};
}

// The request of the layout with `variant`'s workload keys on top.
RunRequest request_of(const EndToEndFile& f, const std::vector<FileAssignment>& variant) {
  RunRequest request;
  request.platform = f.platform;
  request.workload = f.workload;
  for (const auto* set : {&f.platform_set, &f.workload_set, &variant})
    for (const std::string& s : assignment_texts(*set)) request.overrides.push_back(s);
  return request;
}

// The layout and every variant checked as `run` checks them, before any
// simulation: a bad value is told at its key in the file in seconds, not
// after the layout's simulation.
void check_runs(const EndToEndFile& f) {
  for (std::size_t i = 0; i <= f.slower.size(); ++i) {
    const std::vector<FileAssignment> none;
    const std::vector<FileAssignment>& variant = i == 0 ? none : f.slower[i - 1].workload_set;
    try {
      check_job(request_of(f, variant));
    } catch (const FileError&) {
      throw;
    } catch (const InputError& e) {
      std::vector<FileAssignment> all = f.platform_set;
      all.insert(all.end(), f.workload_set.begin(), f.workload_set.end());
      all.insert(all.end(), variant.begin(), variant.end());
      rethrow_at_assignment(e, all);
    }
  }
}

// One run of the file's layout with `workload_set` on top, in a child.
EndToEndRun run(const EndToEndFile& f, const std::string& name, const std::vector<FileAssignment>& workload_set) {
  const RunRequest request = request_of(f, workload_set);
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

// A `platform` or `workload` key: a preset name, or a path (with a '/' or
// ending in .toml or .xml) resolved against the measurement file's folder;
// a file that cannot be read is told at the key.
std::string measurement_input_file(TableReader& root, const char* key, PresetKind kind, const std::string& path) {
  std::string value = root.string(key);
  const auto ends_with = [&](const char* suffix) {
    const std::string s(suffix);
    return value.size() > s.size() && value.compare(value.size() - s.size(), s.size(), s) == 0;
  };
  if (value.find('/') != std::string::npos || ends_with(".toml") || ends_with(".xml")) {
    const std::filesystem::path p(value);
    if (p.is_relative()) value = (std::filesystem::path(path).parent_path() / p).string();
  }
  try {
    check_regular_file(resolve_preset_file(kind, value));
  } catch (const FileError& e) {
    throw named_at(e, location_of(*root.node(key)), key);
  }
  return value;
}

bool is_end_to_end_file(const std::string& path) { return measurement_kind(path) == "end_to_end"; }

EndToEndFile load_end_to_end_file(const std::string& path) {
  const toml::table doc = load_toml_file(path);
  TableReader root(doc, "");
  EndToEndFile f;
  f.path = path;
  root.integer("schema", kSchema, kSchema);
  root.choice("kind", {"end_to_end"});
  f.source = root.string("source");
  f.platform = measurement_input_file(root, "platform", PresetKind::kPlatform, path);
  f.workload = measurement_input_file(root, "workload", PresetKind::kWorkload, path);
  f.platform_set = optional_assignments(root, "platform_set", "platform.");
  f.workload_set = optional_assignments(root, "workload_set", "workload.");
  TableReader measured = root.table("measured");
  f.tokens_per_s_per_npu = measured.number("tokens_per_s_per_npu", 1e-3, 1e9);
  if (measured.has("latency")) f.latency_s = measured.quantity("latency", Quantity::kTime);
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
      v.workload_set = optional_assignments(t, "workload_set", "workload.");
      if (v.workload_set.empty()) t.fail("workload_set", "a variant changes at least one workload key");
      t.finish();
      f.slower.push_back(std::move(v));
    }
  }
  root.finish();
  if (f.latency_s && !f.slower.empty())
    root.fail("slower", "a serving file with [measured] latency chooses its batch per run: it has no variants");
  check_runs(f);
  if (f.latency_s && !load_job_workload(request_of(f, {})).serving)
    measured.fail("latency", "only a serving workload ([serving], docs/serving.md) has a latency to meet");
  return f;
}

bool EndToEndValidation::within_band() const { return !file.band || std::abs(error()) <= *file.band; }

bool EndToEndValidation::variants_slower() const {
  for (const EndToEndRun& r : slower)
    if (!(r.step_s > layout.step_s)) return false;
  return true;
}

// A serving file's layout at the batch with the most tokens/s per NPU within its latency.
EndToEndRun run_within_latency(const EndToEndFile& f) {
  ServingCurveRequest request;
  request.base = request_of(f, {});
  request.latency_limit_s = f.latency_s;
  const ServingCurve curve = serving_curve(request);
  const ServingPoint& best = curve.points[*curve.best];
  EndToEndRun out;
  out.serving_batch = best.batch;
  out.serving_latency_s = best.latency_s;
  out.step_s = best.step_s;
  out.tokens_per_s_per_npu = best.tokens_per_s_per_npu;
  out.mfu = best.mfu;
  out.reduction = "{}";
  return out;
}

EndToEndValidation validate_end_to_end(const EndToEndFile& file) {
  EndToEndValidation v;
  v.file = file;
  v.layout = file.latency_s ? run_within_latency(file) : run(file, "", {});
  for (const EndToEndVariant& variant : file.slower) v.slower.push_back(run(file, variant.name, variant.workload_set));
  return v;
}

std::string format_end_to_end(const EndToEndValidation& v) {
  const EndToEndFile& f = v.file;
  std::string out = fmt::format("epsim validate: end to end, {}\n  source     {}\n  run        --platform {} --workload {}",
                                f.path, f.source, f.platform, f.workload);
  for (const auto* set : {&f.platform_set, &f.workload_set})
    for (const std::string& s : assignment_texts(*set)) out += " --set " + s;
  out += "\n";
  out += fmt::format("  {:<44} {:>12} {:>16} {:>9} {:>9}\n", "", "step", "tokens/s/NPU", "MFU", "step vs");
  out += fmt::format("  {:<44} {:>10.5g} s {:>16.1f} {:>7.2f} % {:>9}\n", "layout (simulated)", v.layout.step_s,
                     v.layout.tokens_per_s_per_npu, 100 * v.layout.mfu, "");
  if (f.latency_s)
    out += fmt::format("  {:<44} the most tokens/s per NPU within {:.3f} ms: {} sequences per rank at {:.3f} ms\n",
                       "serving batch (simulated)", *f.latency_s * 1e3, v.layout.serving_batch,
                       v.layout.serving_latency_s * 1e3);
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
  if (v.file.latency_s) {
    j["latency_s"] = *v.file.latency_s;
    j["layout"]["serving_batch"] = v.layout.serving_batch;
    j["layout"]["serving_latency_s"] = v.layout.serving_latency_s;
  }
  j["error"] = v.error();
  j["slower"] = nlohmann::ordered_json::array();
  for (const EndToEndRun& r : v.slower) j["slower"].push_back(run_json(r));
  j["passed"] = v.passed();
  return j.dump(2) + "\n";
}

}  // namespace epsim::app
