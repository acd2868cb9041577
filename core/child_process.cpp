// fork_child's PR_SET_PDEATHSIG and signal defaults; the verdict as JSON.
#include "core/child_process.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace epsim {

pid_t fork_child(const std::string& what) {
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("cannot fork for " + what);
  if (pid == 0) {
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    sigset_t set;  // the parent takes them in a thread of its own (tools/interrupt.hpp), which a child lacks
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
    // A child must not outlive its parent (kill -9 of `plan -j 2`): it holds
    // CPU and memory for a verdict nobody will read.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the parent died before the line above
  }
  return pid;
}

std::string child_verdict(const std::function<std::string()>& body, int& exit_code) {
  nlohmann::json verdict;
  exit_code = 0;
  try {
    verdict["ok"] = body();
  } catch (const InputError& e) {
    verdict["input_error"] = {{"file", e.where().file}, {"line", e.where().line}, {"column", e.where().column},
                              {"key", e.key()}, {"problem", e.problem()}};
    exit_code = 2;
  } catch (const std::exception& e) {
    verdict["error"] = e.what();
    exit_code = 1;
  }
  // Invalid UTF-8 (a file name) is replaced, never a throw in the child.
  return verdict.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

ChildOutcome read_child_verdict(const std::string& text, int wait_status) {
  const nlohmann::json verdict = nlohmann::json::parse(text, nullptr, false);
  if (!verdict.is_object()) return {};
  if (verdict.contains("ok") && WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0)
    return {ChildOutcome::kOk, verdict["ok"].get<std::string>()};
  if (verdict.contains("input_error")) {
    const nlohmann::json& e = verdict["input_error"];
    throw InputError({e["file"].get<std::string>(), e["line"].get<int>(), e["column"].get<int>()},
                     e["key"].get<std::string>(), e["problem"].get<std::string>());
  }
  if (verdict.contains("error")) return {ChildOutcome::kError, verdict["error"].get<std::string>()};
  return {};
}

}  // namespace epsim
