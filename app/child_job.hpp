// One SimGrid job in a forked child: SimGrid allows one engine per process,
// so a command that runs several steps (validate's end-to-end files, plan)
// runs each in a child of its one warm process and reads back what it printed.
#pragma once

#include <exception>
#include <functional>
#include <optional>
#include <string>

namespace epsim::app {

// Forks, runs `body` in the child and returns the text it returned (any
// length, any characters), passed back over a pipe of its own: the child's
// stderr stays the user's (progress, warnings). An InputError thrown in the
// child is thrown again here, field for field; another exception becomes a
// std::runtime_error with its message; a child that dies (a signal, an
// abort inside SimGrid) is a std::runtime_error naming `what` and how it
// ended. Call before this process constructs its own SimGrid engine.
std::string run_child_job(const std::string& what, const std::function<std::string()>& body);

// Several such jobs, at most `parallel` children at once. `next` gives the
// job to start whenever a slot is free (nullopt: none is left; it may look
// at what `done` has heard so far), `done` hears each job as it finishes, in
// the order they finish: its text, or in `error` what run_child_job would
// have thrown. All children are forked from the calling thread, so none
// holds another's pipe open.
struct ChildJob {
  std::string what;
  std::function<std::string()> body;
};
struct ChildVerdict {
  std::string output;
  std::exception_ptr error;  // null on success
};
void run_child_jobs(int parallel, const std::function<std::optional<ChildJob>()>& next,
                    const std::function<void(const ChildJob& job, ChildVerdict verdict)>& done);

}  // namespace epsim::app
