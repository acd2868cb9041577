// Flattening sweep records into a CSV table.
#include "tools/sweep/results_csv.hpp"

#include <fstream>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "core/error.hpp"
#include "tools/sweep/results_store.hpp"

namespace epsim::sweep {

namespace {

void flatten_into(const nlohmann::json& v, const std::string& prefix,
                  std::vector<std::pair<std::string, std::string>>& out) {
  auto join = [&](const std::string& k) { return prefix.empty() ? k : prefix + "." + k; };
  if (v.is_object()) {
    for (const auto& [k, child] : v.items()) flatten_into(child, join(k), out);
  } else if (v.is_array()) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      const nlohmann::json& item = v[i];
      std::string label = std::to_string(i);
      if (item.is_object() && item.contains("name") && item["name"].is_string()) label = item["name"];
      flatten_into(item, join(label), out);
    }
  } else if (v.is_string()) {
    out.emplace_back(prefix, v.get<std::string>());
  } else if (v.is_number_integer()) {
    out.emplace_back(prefix, std::to_string(v.get<std::int64_t>()));
  } else if (v.is_number()) {
    out.emplace_back(prefix, fmt::format("{}", v.get<double>()));
  } else if (v.is_boolean()) {
    out.emplace_back(prefix, v.get<bool>() ? "true" : "false");
  }
}

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::vector<std::pair<std::string, std::string>> flatten(const nlohmann::json& value) {
  std::vector<std::pair<std::string, std::string>> out;
  flatten_into(value, "", out);
  return out;
}

std::string results_csv(const SweepSpec& spec, const std::vector<nlohmann::json>& records) {
  const auto latest = latest_by_key(records);
  std::vector<std::string> axis_columns;
  for (const Axis& a : spec.axes) axis_columns.push_back(a.key);

  std::vector<std::string> result_columns;
  std::map<std::string, bool> seen;
  std::vector<std::map<std::string, std::string>> rows;
  for (const Point& p : spec.points) {
    std::map<std::string, std::string> row;
    row["point"] = std::to_string(p.index);
    for (const auto& [k, v] : p.coordinates) row[k] = v.size() >= 2 && v.front() == '"' ? v.substr(1, v.size() - 2) : v;
    auto it = latest.find(p.key());
    if (it == latest.end()) {
      row["status"] = "missing";
    } else {
      const nlohmann::json& r = it->second;
      row["status"] = r.value("status", "");
      row["error"] = r.value("error", "");
      if (r.contains("wall_s")) row["wall_s"] = fmt::format("{:.3f}", r["wall_s"].get<double>());
      if (r.contains("result")) {
        for (const auto& [k, v] : flatten(r["result"])) {
          if (!seen[k]) {
            seen[k] = true;
            result_columns.push_back(k);
          }
          row[k] = v;
        }
      }
    }
    rows.push_back(std::move(row));
  }

  std::vector<std::string> columns = {"point"};
  columns.insert(columns.end(), axis_columns.begin(), axis_columns.end());
  columns.push_back("status");
  columns.insert(columns.end(), result_columns.begin(), result_columns.end());
  columns.insert(columns.end(), {"error", "wall_s"});

  std::string out;
  for (std::size_t i = 0; i < columns.size(); ++i) out += (i ? "," : "") + csv_cell(columns[i]);
  out += "\n";
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < columns.size(); ++i) {
      auto it = row.find(columns[i]);
      out += (i ? "," : "") + (it == row.end() ? std::string() : csv_cell(it->second));
    }
    out += "\n";
  }
  return out;
}

}  // namespace epsim::sweep
