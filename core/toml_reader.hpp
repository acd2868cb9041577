// Strict TOML reading: every value is read through a TableReader, which
// checks its type and range, and reports keys nobody asked for as errors
// with a "did you mean". All errors are InputError with file:line:column.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/units.hpp"

namespace epsim {

// Parses a TOML file (read_input_file: FileError when it cannot be read
// whole); a syntax error becomes an InputError at its position.
toml::table load_toml_file(const std::string& path);

// Parses TOML text; `source_name` stands in for the file name in errors.
toml::table parse_toml_text(std::string_view text, const std::string& source_name);

// The preset names in a folder: the stems of its *.toml files, sorted
// (none when the folder is missing).
std::vector<std::string> toml_stems_in(const std::string& dir);

// The location of a node, taken from its source region.
SourceLocation location_of(const toml::node& node);

// Where values a program set rather than parsed came from (a workload's
// typed edits, workloads/workload_edits.hpp), by node: toml++ records a
// source only for what it parses. Such values count as overrides: they have
// no line:column, and a reader that blames the key a user changed blames them.
using NodeSources = std::map<const toml::node*, SourceLocation>;

// Reads one table. Accessors mark keys as known; finish() fails on any key
// that no accessor asked about. `path` is the dotted key path of this table
// ("" for the root), used to name keys in errors. `sources` (kept by the
// caller, passed on to sub-tables) names the values set by a program.
class TableReader {
 public:
  TableReader(const toml::table& table, std::string path, const NodeSources* sources = nullptr);

  bool has(std::string_view key);

  std::int64_t integer(std::string_view key, std::int64_t min,
                       std::int64_t max = std::numeric_limits<std::int64_t>::max());
  std::int64_t integer_or(std::string_view key, std::int64_t fallback, std::int64_t min,
                          std::int64_t max = std::numeric_limits<std::int64_t>::max());

  // A float or an integer, in [min, max].
  double number(std::string_view key, double min, double max);
  double number_or(std::string_view key, double fallback, double min, double max);

  // A unit string (see units.hpp), required to be > 0 and inside the
  // physical range of its kind (core/physical_ranges.hpp).
  double quantity(std::string_view key, Quantity kind);
  double quantity_or(std::string_view key, double fallback, Quantity kind);

  std::string string(std::string_view key);
  std::string string_or(std::string_view key, std::string fallback);
  // A string that must be one of `allowed`.
  std::string choice(std::string_view key, const std::vector<std::string>& allowed);
  std::string choice_or(std::string_view key, std::string fallback,
                        const std::vector<std::string>& allowed);

  bool boolean_or(std::string_view key, bool fallback);

  TableReader table(std::string_view key);
  std::optional<TableReader> optional_table(std::string_view key);

  // The raw node of a key (marks it known), or nullptr.
  const toml::node* node(std::string_view key);

  // Throws InputError for every key not asked about (the first one found, in
  // source order), naming the closest known key.
  void finish() const;

  // Errors located at a key's value (or at this table when the key is absent).
  [[noreturn]] void fail(std::string_view key, const std::string& problem) const;

  std::string key_path(std::string_view key) const;
  const toml::table& raw() const { return *table_; }

  // Where a key's value came from (this table's location when it is absent).
  SourceLocation location(std::string_view key) const;
  // Whether a key's value was set by --set or by a program, not read from a
  // file (marks it known; false when absent).
  bool overridden(std::string_view key);

 private:
  const toml::node& required(std::string_view key);
  SourceLocation where(const toml::node& node) const;

  const toml::table* table_;
  std::string path_;
  const NodeSources* sources_ = nullptr;
  std::set<std::string, std::less<>> known_;
};

// The closest of `candidates` to `word` by edit distance; failing that, the
// one candidate with `word` as a whole '_'-separated part ("s" -> "zipf_s");
// "" when none is close.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace epsim
