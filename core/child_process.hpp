// The one way epsim forks a child job (plan's layouts, validate's runs, a
// sweep's workers, a platform probe), and the one wire format a child's
// verdict comes back in. SimGrid allows one engine per process, so these
// children are how one command runs several simulations.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>

namespace epsim {

// Forks. In the child (returns 0): it dies with its parent
// (PR_SET_PDEATHSIG SIGKILL, and if the parent died before that was set, it
// exits at once), and SIGINT/SIGTERM are unblocked and at their defaults (the
// parent's handlers remove the parent's temporary files, which a child must
// not). In the parent: the child's pid. Flushes stdio first so no buffered
// line is printed twice. Throws std::runtime_error naming `what` when fork fails.
pid_t fork_child(const std::string& what);

// The child's side: runs `body` and returns its verdict as one line of JSON
// (no raw newline): {"ok": text}, {"input_error": {file, line, column, key,
// problem}} or {"error": message}; `exit_code` is 0, 2 or 1 to match.
std::string child_verdict(const std::function<std::string()>& body, int& exit_code);

// The parent's side, given what the child wrote and its wait status: an
// ok verdict from a child that exited 0 (kOk, its text); an error verdict
// (kError, its message); none (kNone: the child died first). An
// input_error verdict is thrown again as InputError, field for field.
struct ChildOutcome {
  enum Kind { kOk, kError, kNone } kind = kNone;
  std::string text;
};
ChildOutcome read_child_verdict(const std::string& text, int wait_status);

}  // namespace epsim
