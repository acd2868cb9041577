// Runs sweep points as child processes, at most `jobs` at a time. Each
// child is `epsim sweep SPEC --point I --results FILE` and appends its own
// record, so killing this process loses no finished point.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace epsim::sweep {

struct PoolOptions {
  int jobs = 1;                         // concurrent children (-j)
  std::vector<std::string> child_argv;  // command before "--point I", e.g. {exe, "sweep", spec, "--results", f}
  bool progress = true;                 // done/total, failures, ETA on stderr
};

struct PoolOutcome {
  int finished = 0;
  int failed = 0;                     // children that exited non-zero or were killed
  std::vector<int> crashed_points;    // killed by a signal or unexpected exit code: no record written
};

// Runs the given point indices. `on_crash(index, why)` is called for a
// child that died without recording (so the caller can record the failure).
PoolOutcome run_points(const std::vector<int>& points, const PoolOptions& options,
                       const std::function<void(int, const std::string&)>& on_crash);

// Exit codes of `epsim sweep --point`: the point ran and its record says ok or failed.
inline constexpr int kPointOk = 0;
inline constexpr int kPointFailed = 1;

}  // namespace epsim::sweep
