// The fork, the pipe and the verdict of run_child_job.
#include "app/child_job.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

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

// The child's verdict as one JSON document: {"ok": text} or an error.
[[noreturn]] void child(int fd, const std::function<std::string()>& body) {
  nlohmann::json verdict;
  int code = 0;
  try {
    verdict["ok"] = body();
  } catch (const InputError& e) {
    verdict["input_error"] = {{"file", e.where().file}, {"line", e.where().line}, {"column", e.where().column},
                              {"key", e.key()}, {"problem", e.problem()}};
    code = 2;
  } catch (const std::exception& e) {
    verdict["error"] = e.what();
    code = 1;
  }
  std::fflush(stdout);
  write_all(fd, verdict.dump());
  _exit(code);
}

}  // namespace

std::string run_child_job(const std::string& what, const std::function<std::string()>& body) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("cannot create a pipe for " + what);
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    throw std::runtime_error("cannot fork for " + what);
  }
  if (pid == 0) {
    close(fds[0]);
    child(fds[1], body);
  }
  close(fds[1]);
  std::string output;
  char buffer[1 << 16];
  ssize_t n = 0;
  while ((n = read(fds[0], buffer, sizeof buffer)) > 0) output.append(buffer, static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  const nlohmann::json verdict = nlohmann::json::parse(output, nullptr, false);
  if (verdict.is_object() && verdict.contains("ok") && WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return verdict["ok"].get<std::string>();
  if (verdict.is_object() && verdict.contains("input_error")) {
    const nlohmann::json& e = verdict["input_error"];
    throw InputError({e["file"].get<std::string>(), e["line"].get<int>(), e["column"].get<int>()},
                     e["key"].get<std::string>(), e["problem"].get<std::string>());
  }
  if (verdict.is_object() && verdict.contains("error"))
    throw std::runtime_error(what + ": " + verdict["error"].get<std::string>());
  throw std::runtime_error(fmt::format("{}: the child process died ({})", what,
                                       WIFSIGNALED(status) ? fmt::format("signal {}", WTERMSIG(status))
                                                           : fmt::format("exit code {}", WEXITSTATUS(status))));
}

}  // namespace epsim::app
