// A plan's results file (docs/plan.md, "Interrupted and resumed"): every
// layout a plan simulates is appended as one JSON line through the sweep's
// locked store (tools/sweep/results_store.hpp), with the digest of what its
// step depends on, so that a plan killed and run again with the same
// arguments takes the finished steps instead of simulating them again, and
// a changed input file or epsim binary never reuses a stale one.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tools/sweep/results_store.hpp"

namespace epsim::tools {

// The digest of a plan's steps' inputs: this executable's bytes, then
// `arguments` in order (the options that shape the layouts and their
// steps), then each input file's path and text (core/input_file.hpp's
// InputFileLog while the plan's inputs are read).
std::string plan_digest(const std::vector<std::string>& arguments,
                        const std::vector<std::pair<std::string, std::string>>& files);

// $XDG_CACHE_HOME/epsim/plan/<digest>.jsonl, or ~/.cache/epsim/plan/... when
// XDG_CACHE_HOME is unset or empty; the folders are created. Throws
// option_error("--results", ...) when neither variable is set or the
// folder cannot be made.
std::string default_plan_results(const std::string& digest);

// The results file of one plan: locked for the plan's life (a second plan on
// the same file is refused, naming --results) and read once.
class PlanResultsFile {
 public:
  PlanResultsFile(std::string path, std::string digest);
  // A finished step of this digest under `key` (app::plan_record_key), as finished() was given it.
  std::optional<std::string> earlier(const std::string& key) const;
  // Appends {"key", "digest", "status": "ok", "step"}: durable at once.
  void finished(const std::string& key, const std::string& step);
  const std::string& path() const { return path_; }
  int records() const { return static_cast<int>(steps_.size()); }  // finished steps of this digest found at open

 private:
  std::string path_;
  std::string digest_;
  sweep::DriverLock lock_;
  std::map<std::string, std::string> steps_;  // key -> step JSON text
};

}  // namespace epsim::tools
