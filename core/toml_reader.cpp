// Strict, located TOML reading.
#include "core/toml_reader.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>

#include <fmt/format.h>

#include "core/overrides.hpp"
#include "core/physical_ranges.hpp"

namespace epsim {

namespace {

const char* type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    default: return "a date/time";
  }
}

std::string quote(const toml::node& n) {
  std::ostringstream out;
  if (n.is_string()) out << '"' << *n.value<std::string>() << '"';
  else if (n.is_integer()) out << *n.value<std::int64_t>();
  else if (n.is_floating_point()) out << *n.value<double>();
  else if (n.is_boolean()) out << (*n.value<bool>() ? "true" : "false");
  else out << type_name(n);
  return out.str();
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

SourceLocation location_of(const toml::node& node) {
  const toml::source_region& region = node.source();
  // A table --set created ("foo" of --set foo.bar=1) has no source of its own:
  // it came from the assignment of its first value.
  if (!region.path && node.is_table()) {
    for (const auto& [key, child] : *node.as_table()) {
      SourceLocation inner = location_of(child);
      if (!inner.file.empty()) return inner;
    }
  }
  SourceLocation where;
  if (region.path) where.file = *region.path;
  // Values given with --set have no meaningful line:column.
  if (!is_override(node)) {
    where.line = static_cast<int>(region.begin.line);
    where.column = static_cast<int>(region.begin.column);
  }
  return where;
}

std::vector<std::string> toml_stems_in(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".toml") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

toml::table parse_toml_text(std::string_view text, const std::string& source_name) {
  try {
    return toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    SourceLocation where{source_name, static_cast<int>(e.source().begin.line),
                         static_cast<int>(e.source().begin.column)};
    throw InputError(where, "", std::string("malformed TOML: ") + std::string(e.description()));
  }
}

toml::table load_toml_file(const std::string& path) {
  return parse_toml_text(read_input_file(path), path);
}

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const std::string& c : candidates) {
    std::size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  if (!best.empty() || word.empty()) return best;
  // A shortened name ("s" for "zipf_s", "share" for "hot_share"): the one
  // candidate that has `word` as a whole '_'-separated part.
  std::string only;
  for (const std::string& c : candidates) {
    std::string_view rest = c;
    bool part = false;
    while (!part) {
      std::size_t cut = rest.find('_');
      part = rest.substr(0, cut) == word;
      if (cut == std::string_view::npos) break;
      rest.remove_prefix(cut + 1);
    }
    if (!part) continue;
    if (!only.empty()) return "";
    only = c;
  }
  return only;
}

TableReader::TableReader(const toml::table& table, std::string path, const NodeSources* sources)
    : table_(&table), path_(std::move(path)), sources_(sources) {}

SourceLocation TableReader::where(const toml::node& node) const {
  if (sources_) {
    const auto it = sources_->find(&node);
    if (it != sources_->end()) return it->second;
    // A table made for a set value has no source of its own: it came from its first value.
    if (!node.source().path && node.is_table()) {
      for (const auto& [key, child] : *node.as_table()) {
        SourceLocation inner = where(child);
        if (!inner.file.empty()) return inner;
      }
    }
  }
  return location_of(node);
}

SourceLocation TableReader::location(std::string_view key) const {
  const toml::node* n = table_->get(key);
  return where(n ? *n : static_cast<const toml::node&>(*table_));
}

bool TableReader::overridden(std::string_view key) {
  const toml::node* n = node(key);
  return n && ((sources_ && sources_->count(n)) || is_override(*n));
}

std::string TableReader::key_path(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

void TableReader::fail(std::string_view key, const std::string& problem) const {
  throw InputError(location(key), key_path(key), problem);
}

bool TableReader::has(std::string_view key) {
  known_.emplace(key);
  return table_->contains(key);
}

const toml::node* TableReader::node(std::string_view key) {
  known_.emplace(key);
  return table_->get(key);
}

const toml::node& TableReader::required(std::string_view key) {
  const toml::node* n = node(key);
  if (n) return *n;
  // A misspelt key is the likelier story than a forgotten one: say so.
  for (const auto& [k, v] : *table_) {
    if (!known_.count(k.str()) && closest_match(k.str(), {std::string(key)}) == key) {
      throw InputError(where(v), key_path(k.str()),
                       "unknown key (did you mean \"" + std::string(key) + "\"?)");
    }
  }
  fail(key, "missing required key");
}

std::int64_t TableReader::integer(std::string_view key, std::int64_t min, std::int64_t max) {
  const toml::node& n = required(key);
  if (!n.is_integer()) fail(key, fmt::format("expected an integer, got {}", type_name(n)));
  std::int64_t v = *n.value<std::int64_t>();
  if (v < min || v > max) {
    if (max == std::numeric_limits<std::int64_t>::max())
      fail(key, fmt::format("expected an integer >= {}, got {}", min, v));
    fail(key, fmt::format("expected an integer in [{}, {}], got {}", min, max, v));
  }
  return v;
}

std::int64_t TableReader::integer_or(std::string_view key, std::int64_t fallback,
                                     std::int64_t min, std::int64_t max) {
  return has(key) ? integer(key, min, max) : fallback;
}

double TableReader::number(std::string_view key, double min, double max) {
  const toml::node& n = required(key);
  if (!n.is_number()) fail(key, fmt::format("expected a number, got {}", type_name(n)));
  double v = n.is_integer() ? static_cast<double>(*n.value<std::int64_t>()) : *n.value<double>();
  if (!std::isfinite(v) || v < min || v > max)
    fail(key, fmt::format("expected a number in [{}, {}], got {}", min, max, quote(n)));
  return v;
}

double TableReader::number_or(std::string_view key, double fallback, double min, double max) {
  return has(key) ? number(key, min, max) : fallback;
}

double TableReader::quantity(std::string_view key, Quantity kind) {
  const toml::node& n = required(key);
  if (!n.is_string()) fail(key, "expected " + describe(kind) + ", got " + quote(n));
  double v = 0;
  try {
    v = parse_quantity(*n.value<std::string>(), kind);
  } catch (const std::invalid_argument& e) {
    fail(key, e.what());
  }
  if (!(v > 0)) fail(key, "must be > 0, got " + quote(n));
  const std::string out_of_range = physical_range_problem(kind, v);
  if (!out_of_range.empty()) fail(key, out_of_range + ", got " + quote(n));
  return v;
}

double TableReader::quantity_or(std::string_view key, double fallback, Quantity kind) {
  return has(key) ? quantity(key, kind) : fallback;
}

std::string TableReader::string(std::string_view key) {
  const toml::node& n = required(key);
  if (!n.is_string()) fail(key, fmt::format("expected a string, got {}", type_name(n)));
  return *n.value<std::string>();
}

std::string TableReader::string_or(std::string_view key, std::string fallback) {
  return has(key) ? string(key) : fallback;
}

std::string TableReader::choice(std::string_view key, const std::vector<std::string>& allowed) {
  std::string v = string(key);
  if (std::find(allowed.begin(), allowed.end(), v) == allowed.end()) {
    std::string hint = closest_match(v, allowed);
    fail(key, fmt::format("expected one of {}, got \"{}\"{}", fmt::join(allowed, ", "), v,
                          hint.empty() ? "" : " (did you mean \"" + hint + "\"?)"));
  }
  return v;
}

std::string TableReader::choice_or(std::string_view key, std::string fallback,
                                   const std::vector<std::string>& allowed) {
  return has(key) ? choice(key, allowed) : fallback;
}

bool TableReader::boolean_or(std::string_view key, bool fallback) {
  if (!has(key)) return fallback;
  const toml::node& n = *table_->get(key);
  if (!n.is_boolean()) fail(key, fmt::format("expected true or false, got {}", type_name(n)));
  return *n.value<bool>();
}

TableReader TableReader::table(std::string_view key) {
  const toml::node& n = required(key);
  if (!n.is_table()) fail(key, fmt::format("expected a table, got {}", type_name(n)));
  return TableReader(*n.as_table(), key_path(key), sources_);
}

std::optional<TableReader> TableReader::optional_table(std::string_view key) {
  if (!has(key)) return std::nullopt;
  return table(key);
}

void TableReader::finish() const {
  std::vector<std::string> known(known_.begin(), known_.end());
  const toml::node* first = nullptr;
  std::string first_key;
  for (const auto& [k, v] : *table_) {
    if (known_.count(k.str())) continue;
    const toml::source_position& p = v.source().begin;
    if (!first || p < first->source().begin) {
      first = &v;
      first_key = std::string(k.str());
    }
  }
  if (!first) return;
  std::string hint = closest_match(first_key, known);
  throw InputError(where(*first), key_path(first_key),
                   "unknown key" + (hint.empty() ? "" : " (did you mean \"" + hint + "\"?)"));
}

}  // namespace epsim
