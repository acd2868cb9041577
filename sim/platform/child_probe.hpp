// Running a platform check in a forked child process. SimGrid calls abort()
// (xbt_die, xbt_assert) on some malformed platforms, which no handler can
// catch; run in a child, such a file costs the child, and its last words
// come back as an InputError instead of killing epsim.
#pragma once

#include <functional>
#include <string>

namespace epsim::sim {

// Forks, runs `body` in the child with stderr captured, and returns what
// `body` returned (one line, no '\n'). An InputError thrown by `body` is
// thrown again here, field for field; any other exception or a crash (abort,
// signal) becomes InputError({source}, "", "not a valid SimGrid platform:
// <the exception's message or SimGrid's last stderr line>").
// Call before this process constructs its SimGrid engine (the child makes its own).
std::string run_in_child(const std::string& source, const std::function<std::string()>& body);

}  // namespace epsim::sim
