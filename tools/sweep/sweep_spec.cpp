// Reading and expanding sweep specs.
#include "tools/sweep/sweep_spec.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/toml_reader.hpp"

namespace epsim::sweep {

namespace {

const std::vector<std::string> kScenarioKeys = {"platform", "workload", "schedule", "algorithm", "fidelity", "seed"};

bool is_override_key(const std::string& key) {
  return (key.rfind("platform.", 0) == 0 && key.size() > 9) ||
         (key.rfind("workload.", 0) == 0 && key.size() > 9);
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// A scalar as TOML text, the way `--set` reads it back; "" for non-scalars.
std::string toml_text(const toml::node& n) {
  if (n.is_string()) return quoted(*n.value<std::string>());
  if (n.is_integer()) return std::to_string(*n.value<std::int64_t>());
  if (n.is_floating_point()) return fmt::format("{}", *n.value<double>());
  if (n.is_boolean()) return *n.value<bool>() ? "true" : "false";
  return "";
}

std::string unquoted(const std::string& text) {
  if (text.size() >= 2 && text.front() == '"') return nlohmann::json::parse(text).get<std::string>();
  return text;
}

void apply_coordinate(Point& p, const Axis& axis, std::size_t i) {
  const std::string& value = axis.values[i];
  if (axis.key == "platform") p.platform = unquoted(value);
  else if (axis.key == "workload") p.workload = unquoted(value);
  else if (axis.key == "schedule") p.schedule = unquoted(value);
  else if (axis.key == "algorithm") p.algorithm = unquoted(value);
  else if (axis.key == "fidelity") p.fidelity = unquoted(value);
  else if (axis.key == "seed") p.seed = std::stoll(value);
  else p.sets.push_back(axis.key + "=" + value);
  p.coordinates.emplace_back(axis.key, value);
  p.coordinate_sources.push_back(axis.value_sources[i]);
}

Axis read_axis(TableReader& t, const std::vector<Axis>& earlier) {
  Axis axis;
  axis.where = location_of(t.raw());
  axis.key = t.string("key");
  if (!is_override_key(axis.key) &&
      std::find(kScenarioKeys.begin(), kScenarioKeys.end(), axis.key) == kScenarioKeys.end()) {
    std::vector<std::string> known = kScenarioKeys;
    known.insert(known.end(), {"platform.<key>", "workload.<key>"});
    std::string hint = closest_match(axis.key, kScenarioKeys);
    t.fail("key", fmt::format("unknown axis key \"{}\": expected {}{}", axis.key,
                              fmt::join(known, ", "),
                              hint.empty() ? "" : " (did you mean \"" + hint + "\"?)"));
  }
  for (const Axis& a : earlier) {
    if (a.key == axis.key) t.fail("key", "axis \"" + axis.key + "\" is declared twice");
  }
  const toml::node* values = t.node("values");
  if (!values) t.fail("values", "missing required key");
  const toml::array* array = values->as_array();
  if (!array) t.fail("values", "expected an array of values");
  if (array->empty()) t.fail("values", "empty axis: give at least one value");
  for (const toml::node& v : *array) {
    std::string text = toml_text(v);
    if (text.empty()) {
      throw InputError(location_of(v), t.key_path("values"), "expected a string, number or boolean");
    }
    if (axis.key == "seed" && !v.is_integer()) {
      throw InputError(location_of(v), t.key_path("values"), "seeds are integers");
    }
    if (axis.key == "seed" && *v.value<std::int64_t>() < 0) {  // as base.seed: no "unset" seed
      throw InputError(location_of(v), t.key_path("values"),
                       fmt::format("expected an integer >= 0, got {}", *v.value<std::int64_t>()));
    }
    if (axis.key != "seed" && !is_override_key(axis.key) && !v.is_string()) {
      throw InputError(location_of(v), t.key_path("values"), "expected a string");
    }
    if (axis.key != "seed" && !is_override_key(axis.key) && v.value<std::string>()->empty()) {
      throw InputError(location_of(v), t.key_path("values"), "expected a non-empty string (\"\" is no value)");
    }
    axis.values.push_back(text);
    axis.value_sources.push_back(location_of(v));
  }
  axis.zip_with = t.string_or("zip_with", "");
  if (!axis.zip_with.empty()) {
    auto partner = std::find_if(earlier.begin(), earlier.end(),
                                [&](const Axis& a) { return a.key == axis.zip_with; });
    if (partner == earlier.end()) {
      t.fail("zip_with", "no earlier axis \"" + axis.zip_with + "\" to zip with");
    }
    if (partner->values.size() != axis.values.size()) {
      t.fail("zip_with", fmt::format("zipped axes need equal lengths: \"{}\" has {} values, this one {}",
                                     axis.zip_with, partner->values.size(), axis.values.size()));
    }
  }
  t.finish();
  return axis;
}

// Groups of axes that vary together: each group is a list of axis indices,
// led by an axis without zip_with.
std::vector<std::vector<std::size_t>> zip_groups(const std::vector<Axis>& axes) {
  std::vector<std::vector<std::size_t>> groups;
  std::vector<std::size_t> group_of(axes.size());
  for (std::size_t i = 0; i < axes.size(); ++i) {
    if (axes[i].zip_with.empty()) {
      group_of[i] = groups.size();
      groups.push_back({i});
      continue;
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (axes[j].key == axes[i].zip_with) {
        group_of[i] = group_of[j];
        groups[group_of[j]].push_back(i);
      }
    }
  }
  return groups;
}

}  // namespace

std::vector<std::string> Point::run_arguments() const {
  std::vector<std::string> args = {"--platform", platform, "--workload", workload,
                                   "--seed", std::to_string(seed)};
  if (!schedule.empty()) args.insert(args.end(), {"--schedule", schedule});
  if (!algorithm.empty()) args.insert(args.end(), {"--algorithm", algorithm});
  if (!fidelity.empty()) args.insert(args.end(), {"--fidelity", fidelity});
  for (const std::string& s : sets) args.insert(args.end(), {"--set", s});
  return args;
}

std::string Point::key() const {
  nlohmann::json j = {{"platform", platform}, {"workload", workload}, {"schedule", schedule},
                      {"seed", seed}, {"set", sets}};
  // Absent when unset, so keys of points recorded before the option existed still match.
  if (!algorithm.empty()) j["algorithm"] = algorithm;
  if (!fidelity.empty()) j["fidelity"] = fidelity;
  return j.dump();
}

SweepSpec load_sweep_spec(const std::string& path) {
  toml::table doc = load_toml_file(path);
  TableReader root(doc, "");
  root.integer("schema_version", 1, 1);
  SweepSpec spec;
  spec.path = path;

  TableReader base = root.table("base");
  // A scenario key given "" would silently mean its default: refused; leave the key out instead.
  auto scenario_string = [&base](const char* key, bool required) {
    if (!required && !base.has(key)) return std::string();
    std::string value = base.string(key);
    if (value.empty()) base.fail(key, "expected a non-empty string (leave the key out for the default)");
    return value;
  };
  spec.base.platform = scenario_string("platform", true);
  spec.base.workload = scenario_string("workload", true);
  spec.base.schedule = scenario_string("schedule", false);
  spec.base.algorithm = scenario_string("algorithm", false);
  spec.base.fidelity = scenario_string("fidelity", false);
  spec.base.seed = base.integer_or("seed", 1, 0);
  if (const toml::node* sets = base.node("set")) {
    const toml::array* array = sets->as_array();
    if (!array) base.fail("set", "expected an array of \"key=value\" strings");
    for (const toml::node& s : *array) {
      if (!s.is_string() || s.value<std::string>()->find('=') == std::string::npos ||
          !is_override_key(s.value<std::string>()->substr(0, s.value<std::string>()->find('=')))) {
        throw InputError(location_of(s), "base.set",
                         "expected \"platform.<key>=<value>\" or \"workload.<key>=<value>\"");
      }
      spec.base.sets.push_back(*s.value<std::string>());
    }
  }
  base.finish();

  if (const toml::node* axes = root.node("axis")) {
    const toml::array* array = axes->as_array();
    if (!array || !array->is_array_of_tables()) root.fail("axis", "expected [[axis]] tables");
    for (std::size_t i = 0; i < array->size(); ++i) {
      TableReader t(*array->get(i)->as_table(), fmt::format("axis[{}]", i));
      spec.axes.push_back(read_axis(t, spec.axes));
    }
  }
  // Counted before expanding: a typo'd axis must not allocate 1e12 points.
  const std::int64_t max_points = root.integer_or("max_points", kDefaultMaxSweepPoints, 1, kMaxSweepPointsLimit);
  root.finish();

  // Cartesian product over zip groups, the first axis varying slowest.
  std::vector<std::vector<std::size_t>> groups = zip_groups(spec.axes);
  std::int64_t count = 1;
  for (const std::vector<std::size_t>& group : groups) {
    count *= static_cast<std::int64_t>(spec.axes[group.front()].values.size());
    if (count > max_points) {
      root.fail("axis", fmt::format("the axes expand to more than {} points (max_points); "
                                    "set max_points = N at the top of the spec to allow more, up to {}",
                                    max_points, kMaxSweepPointsLimit));
    }
  }
  std::vector<std::size_t> position(groups.size(), 0);
  for (int index = 0;; ++index) {
    Point p = spec.base;
    p.index = index;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      for (std::size_t axis : groups[g]) {
        apply_coordinate(p, spec.axes[axis], position[g]);
      }
    }
    spec.points.push_back(std::move(p));
    std::size_t g = groups.size();
    while (g > 0) {
      --g;
      if (++position[g] < spec.axes[groups[g].front()].values.size()) break;
      position[g] = 0;
      if (g == 0) return spec;
    }
    if (groups.empty()) return spec;
  }
}

}  // namespace epsim::sweep
