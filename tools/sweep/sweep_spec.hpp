// A sweep spec: a base scenario plus axes, expanded into points (cartesian
// product, with zipped axes varying together). Pure: no running.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace epsim::sweep {

// One scenario to run: what `epsim run` takes.
struct Point {
  int index = 0;  // position in expansion order, 0-based
  std::string platform;
  std::string workload;
  std::string schedule;     // "" = the run command's default
  std::string algorithm;  // "" = the run command's default (from the platform)
  std::string fidelity;   // "" = the run command's default
  std::int64_t seed = 1;
  std::vector<std::string> sets;  // "platform.key=value" / "workload.key=value", base first

  // The axis values that made this point, for tables and plots: key -> TOML text.
  std::vector<std::pair<std::string, std::string>> coordinates;
  // Where each coordinate's value stands in the spec, for per-point errors.
  std::vector<SourceLocation> coordinate_sources;

  // The run command's arguments (without the program name and "run").
  std::vector<std::string> run_arguments() const;
  // A canonical identity: equal for equal scenarios, whatever the index.
  std::string key() const;
};

struct Axis {
  std::string key;                  // "workload.parallel.ep", "platform", "seed", ...
  std::vector<std::string> values;  // as TOML text (strings quoted for --set keys)
  std::vector<SourceLocation> value_sources;
  std::string zip_with;             // "" or the key of an earlier axis
  SourceLocation where;
};

struct SweepSpec {
  std::string path;
  Point base;
  std::vector<Axis> axes;
  std::vector<Point> points;  // expanded
};

// Points a spec may expand to unless it sets a top-level `max_points`
// (at most kMaxSweepPointsLimit): a sweep of more is usually a typo.
inline constexpr std::int64_t kDefaultMaxSweepPoints = 10000;
inline constexpr std::int64_t kMaxSweepPointsLimit = 1000000;

// Reads and expands a spec. Throws InputError (file:line:col, key) for
// unknown keys, unknown axis keys, empty axes, zip partners of unequal
// length or unknown, duplicate axes, and more points than max_points.
SweepSpec load_sweep_spec(const std::string& path);

}  // namespace epsim::sweep
