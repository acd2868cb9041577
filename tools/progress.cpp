// The progress line: after kQuietFor of wall time, at most every kEvery.
#include "tools/progress.hpp"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

namespace epsim::tools {

namespace {

constexpr std::chrono::milliseconds kQuietFor{2000};  // short runs say nothing
constexpr std::chrono::milliseconds kEvery{500};

}  // namespace

bool stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

ProgressLine::ProgressLine(bool enabled)
    : enabled_(enabled), start_(std::chrono::steady_clock::now()), last_(start_) {}

ProgressLine::~ProgressLine() {
  if (written_) std::fputs("\n", stderr);
}


app::RunProgress ProgressLine::callback() {
  if (!enabled_) return {};
  return [this](const app::ProgressEvent& e) { show(e); };
}

void ProgressLine::show(const app::ProgressEvent& e) {
  const auto now = std::chrono::steady_clock::now();
  if (now - start_ < kQuietFor || now - last_ < kEvery) return;
  last_ = now;
  const double wall_s = std::chrono::duration<double>(now - start_).count();
  const std::string line =
      e.done > 0 ? fmt::format("epsim: {}: {:.3f} s simulated, {:.0f} % of its tasks, {:.0f} s", e.phase, e.sim_s,
                               100 * e.done, wall_s)
                 : fmt::format("epsim: {}, {:.0f} s", e.phase, wall_s);
  std::fprintf(stderr, "\r%-100s", line.c_str());
  std::fflush(stderr);
  written_ = true;
}

}  // namespace epsim::tools
