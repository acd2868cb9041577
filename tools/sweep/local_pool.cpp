// A small process pool for sweep points (core/child_process.hpp's fork + exec, waitpid).
#include "tools/sweep/local_pool.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>

#include <fmt/format.h>

#include "core/child_process.hpp"

namespace epsim::sweep {

namespace {

pid_t spawn(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  try {
    // A child must not outlive a killed sweep driver on a laptop; its
    // finished record is already on disk, an unfinished one is rerun.
    pid = fork_child("a sweep worker");
  } catch (const std::exception&) {
    return -1;
  }
  if (pid == 0) {
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  return pid;
}

std::string format_duration(double s) {
  long total = static_cast<long>(s + 0.5);
  if (total < 60) return fmt::format("{}s", total);
  if (total < 3600) return fmt::format("{}m{:02}s", total / 60, total % 60);
  return fmt::format("{}h{:02}m", total / 3600, total % 3600 / 60);
}

}  // namespace

PoolOutcome run_points(const std::vector<int>& points, const PoolOptions& options,
                       const std::function<void(int, const std::string&)>& on_crash) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  PoolOutcome outcome;
  std::map<pid_t, int> running;
  std::size_t next = 0;
  const int total = static_cast<int>(points.size());

  while (next < points.size() || !running.empty()) {
    while (next < points.size() && static_cast<int>(running.size()) < std::max(1, options.jobs)) {
      std::vector<std::string> argv = options.child_argv;
      argv.insert(argv.end(), {"--point", std::to_string(points[next])});
      pid_t pid = spawn(argv);
      if (pid < 0) {
        on_crash(points[next], "cannot start a worker process");
        ++outcome.failed;
        ++outcome.finished;
      } else {
        running[pid] = points[next];
      }
      ++next;
    }
    if (running.empty()) continue;
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    auto it = running.find(pid);
    if (it == running.end()) continue;
    int point = it->second;
    running.erase(it);
    ++outcome.finished;
    if (WIFEXITED(status) && WEXITSTATUS(status) == kPointOk) {
      // recorded as ok
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == kPointFailed) {
      ++outcome.failed;
    } else {
      ++outcome.failed;
      outcome.crashed_points.push_back(point);
      std::string why = WIFSIGNALED(status)
                            ? fmt::format("worker killed by signal {}", WTERMSIG(status))
                            : fmt::format("worker exited with code {}", WEXITSTATUS(status));
      on_crash(point, why);
    }
    if (options.progress) {
      double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
      double eta = elapsed / outcome.finished * (total - outcome.finished);
      std::fprintf(stderr, "epsim sweep: %d/%d done, %d failed, elapsed %s, ETA %s\n",
                   outcome.finished, total, outcome.failed, format_duration(elapsed).c_str(),
                   format_duration(eta).c_str());
    }
  }
  return outcome;
}

}  // namespace epsim::sweep
