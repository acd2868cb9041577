// The fork, the pipe and the verdict of run_in_child (child_probe.hpp).
#include "sim/platform/child_probe.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <exception>
#include <vector>

#include "core/child_process.hpp"
#include "core/error.hpp"

namespace epsim::sim {

namespace {

// The child reports on its stderr, which the parent reads: SimGrid's own
// messages there are plain lines, the child's verdict (core/child_process.hpp's
// JSON, one line) starts with this tag.
constexpr const char* kVerdictTag = "epsim-probe-verdict\t";

void write_all(const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(STDERR_FILENO, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

[[noreturn]] void child(const std::function<std::string()>& body) {
  int code = 0;
  const std::string verdict = child_verdict(body, code);
  write_all("\n" + std::string(kVerdictTag) + verdict + "\n");
  _exit(code);
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t end = text.find(sep, start);
    parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

// SimGrid's last words: the last non-empty line that is not a backtrace,
// without xbt_die's "[0.000000] ./src/file.cpp:529: [root/CRITICAL] " prefix.
std::string last_words(const std::vector<std::string>& lines) {
  std::string last;
  for (const std::string& line : lines) {
    if (line.find_first_not_of(" \t") != std::string::npos && line.rfind("Backtrace", 0) != 0) last = line;
  }
  if (!last.empty() && last.front() == '[') {
    std::size_t category = last.find(": [");
    std::size_t category_end = category == std::string::npos ? category : last.find("] ", category);
    if (category_end != std::string::npos) last = last.substr(category_end + 2);
  }
  return last.empty() ? "SimGrid could not load the file" : last;
}

}  // namespace

std::string run_in_child(const std::string& source, const std::function<std::string()>& body) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("cannot create a pipe to check " + source);
  pid_t pid = -1;
  try {
    pid = fork_child("a check of " + source);
  } catch (...) {
    close(fds[0]);
    close(fds[1]);
    throw;
  }
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], STDERR_FILENO);
    close(fds[1]);
    child(body);
  }
  close(fds[1]);
  std::string output;
  char buffer[4096];
  ssize_t n = 0;
  while ((n = read(fds[0], buffer, sizeof buffer)) > 0) output.append(buffer, static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);

  const std::vector<std::string> lines = split(output, '\n');
  for (const std::string& line : lines) {
    if (line.rfind(kVerdictTag, 0) != 0) continue;
    const ChildOutcome outcome = read_child_verdict(line.substr(std::string(kVerdictTag).size()), status);
    if (outcome.kind == ChildOutcome::kOk) return outcome.text;
    if (outcome.kind == ChildOutcome::kError)
      throw InputError({source, 0, 0}, "", "not a valid SimGrid platform: " + outcome.text);
  }
  throw InputError({source, 0, 0}, "", "not a valid SimGrid platform: " + last_words(lines));
}

}  // namespace epsim::sim
