// The pipe and the verdict of run_child_job, one child or several at once;
// the fork and the verdict's format are core/child_process.hpp's.
#include "app/child_job.hpp"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "core/child_process.hpp"
#include "core/error.hpp"

namespace epsim::app {

namespace {

void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

// The child's verdict (core/child_process.hpp's one wire format) on its own pipe.
[[noreturn]] void child(int fd, const std::function<std::string()>& body) {
  int code = 0;
  const std::string verdict = child_verdict(body, code);
  std::fflush(stdout);
  write_all(fd, verdict);
  _exit(code);
}

// A forked child and the read end of its pipe.
struct Started {
  pid_t pid = -1;
  int fd = -1;
};

Started start_child(const std::string& what, const std::function<std::string()>& body) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("cannot create a pipe for " + what);
  pid_t pid = -1;
  try {
    pid = fork_child(what);
  } catch (...) {
    close(fds[0]);
    close(fds[1]);
    throw;
  }
  if (pid == 0) {
    close(fds[0]);
    child(fds[1], body);
  }
  close(fds[1]);
  return {pid, fds[0]};
}

// The child's text once its pipe is closed and it has exited; its error thrown again.
std::string verdict_of(const std::string& what, pid_t pid, const std::string& output) {
  int status = 0;
  waitpid(pid, &status, 0);
  const ChildOutcome outcome = read_child_verdict(output, status);
  if (outcome.kind == ChildOutcome::kOk) return outcome.text;
  if (outcome.kind == ChildOutcome::kError) throw std::runtime_error(what + ": " + outcome.text);
  throw std::runtime_error(fmt::format("{}: the child process died ({})", what,
                                       WIFSIGNALED(status) ? fmt::format("signal {}", WTERMSIG(status))
                                                           : fmt::format("exit code {}", WEXITSTATUS(status))));
}

}  // namespace

std::string run_child_job(const std::string& what, const std::function<std::string()>& body) {
  const Started started = start_child(what, body);
  std::string output;
  char buffer[1 << 16];
  ssize_t n = 0;
  while ((n = read(started.fd, buffer, sizeof buffer)) > 0) output.append(buffer, static_cast<std::size_t>(n));
  close(started.fd);
  return verdict_of(what, started.pid, output);
}

void run_child_jobs(int parallel, const std::function<std::optional<ChildJob>()>& next,
                    const std::function<void(const ChildJob& job, ChildVerdict verdict)>& done) {
  struct Running {
    ChildJob job;
    Started started;
    std::string output;
  };
  std::vector<Running> running;
  bool exhausted = false;
  for (;;) {
    while (!exhausted && static_cast<int>(running.size()) < std::max(1, parallel)) {
      std::optional<ChildJob> job = next();
      if (!job) {
        exhausted = true;
        break;
      }
      const Started started = start_child(job->what, job->body);
      running.push_back({std::move(*job), started, {}});
    }
    if (running.empty()) return;
    // Every pipe is drained as it fills: a child's verdict may exceed a pipe's buffer.
    std::vector<pollfd> fds;
    for (const Running& r : running) fds.push_back({r.started.fd, POLLIN, 0});
    if (poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error("poll failed while waiting for child jobs");
    }
    for (std::size_t i = fds.size(); i-- > 0;) {
      if (fds[i].revents == 0) continue;
      Running& r = running[i];
      char buffer[1 << 16];
      const ssize_t n = read(r.started.fd, buffer, sizeof buffer);
      if (n > 0) {
        r.output.append(buffer, static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      close(r.started.fd);
      ChildVerdict verdict;
      try {
        verdict.output = verdict_of(r.job.what, r.started.pid, r.output);
      } catch (...) {
        verdict.error = std::current_exception();
      }
      Running finished = std::move(r);
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
      done(finished.job, std::move(verdict));
    }
  }
}

}  // namespace epsim::app
