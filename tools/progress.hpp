// Progress of a long run on stderr: one line, rewritten in place, once the
// run has taken longer than a couple of seconds; silent unless stderr is a
// terminal or progress was asked for, and with --quiet.
#pragma once

#include <chrono>
#include <string>

#include "app/run_job.hpp"

namespace epsim::tools {

class ProgressLine {
 public:
  // `enabled`: whether to print at all (the caller's -q / --progress / isatty).
  explicit ProgressLine(bool enabled);
  ~ProgressLine();  // ends the line it wrote, if any
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // The callback to hand to app::run_job.
  app::RunProgress callback();

 private:
  void show(const app::ProgressEvent& event);
  bool enabled_;
  bool written_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

// Whether progress shows by default: stderr is a terminal.
bool stderr_is_terminal();

}  // namespace epsim::tools
