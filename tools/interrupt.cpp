// The handling behind interrupt.hpp. SimGrid's engine installs its own
// SIGINT handler (exit 1, the temporary files left behind), so no handler
// of ours would survive it: SIGINT and SIGTERM are blocked in every thread
// instead (threads created later inherit the mask) and one thread of ours
// takes them with sigwait. Children unblock them (core/child_process.hpp).
#include "tools/interrupt.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <thread>
#include <cstring>

namespace epsim::tools {

namespace {

constexpr int kSlots = 64;
constexpr std::size_t kPathBytes = 4096;
char g_paths[kSlots][kPathBytes];
std::atomic<bool> g_used[kSlots];

void write_stderr(const char* text) {
  const std::size_t n = std::strlen(text);
  std::size_t done = 0;
  while (done < n) {
    const ssize_t w = ::write(STDERR_FILENO, text + done, n - done);
    if (w <= 0) return;
    done += static_cast<std::size_t>(w);
  }
}

[[noreturn]] void on_interrupt(int sig) {
  for (int i = 0; i < kSlots; ++i) {
    if (g_used[i].load()) ::unlink(g_paths[i]);
  }
  write_stderr(sig == SIGINT ? "epsim: interrupted by SIGINT; no partial output left\n"
                             : "epsim: terminated by SIGTERM; no partial output left\n");
  ::_exit(128 + sig);
}

}  // namespace

void install_interrupt_handlers() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
  // Returns only once the thread is set up and about to wait: a fork()
  // (child jobs, platform probes) while it still starts could copy a lock
  // it holds (the allocator's, under ASan) into the child, which then hangs.
  static std::atomic<bool> waiting{false};
  std::thread([set] {
    waiting.store(true);
    for (;;) {
      int sig = 0;
      if (::sigwait(&set, &sig) == 0) on_interrupt(sig);
    }
  }).detach();
  while (!waiting.load()) std::this_thread::yield();
}

int register_temp_file(const std::string& path) {
  if (path.size() + 1 > kPathBytes) return -1;
  for (int i = 0; i < kSlots; ++i) {
    if (g_used[i].load()) continue;
    std::memcpy(g_paths[i], path.c_str(), path.size() + 1);
    g_used[i].store(true);
    return i;
  }
  return -1;
}

void forget_temp_file(int slot) {
  if (slot >= 0 && slot < kSlots) g_used[slot].store(false);
}

}  // namespace epsim::tools
