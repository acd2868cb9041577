// A step's routing drawn on background threads while its consumer runs:
// the replay can start on the first layers while later ones are still
// being drawn. Jobs (routing_sampler.hpp) are drawn in job order, which is
// the order the step's forward first needs them; a consumer that needs a
// job no thread has started draws it itself rather than wait. The sample
// is the one sample_routing() returns, whatever the timing.
#pragma once

#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "workloads/routing_sampler.hpp"

namespace epsim::workloads {

class RoutingStream {
 public:
  // Starts drawing at once. `threads`: threads in all, counting the
  // caller's while it waits (0: one per core).
  explicit RoutingStream(const WorkloadSpec& w, int threads = 0);
  ~RoutingStream();  // stops after the jobs under way
  RoutingStream(const RoutingStream&) = delete;
  RoutingStream& operator=(const RoutingStream&) = delete;

  // Every layer's shape without its counts (empty vectors), for building a
  // task graph before the routing is in (workloads::fill_routing then sets
  // its amounts).
  const RoutingSample& placeholder() const { return placeholder_; }
  int jobs() const { return jobs_.count(); }
  // Job `job`'s routing once drawn, moved out of the stream: once per job
  // (rethrows a failed draw).
  LayerRouting take(int job);
  // The whole sample; the stream is spent.
  RoutingSample take();

 private:
  void work();
  bool claim(int job);  // whether this thread is the one to draw `job`
  void draw(int job);
  void wait(int job);

  RoutingJobs jobs_;
  RoutingSample placeholder_;
  std::vector<std::atomic<bool>> claimed_;
  std::vector<char> done_;  // guarded by mutex_
  std::exception_ptr failure_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable drawn_;
  std::vector<std::thread> workers_;
};

// Draws the routing of every MoE layer and micro-batch on `threads`
// threads (0 = one per core); the result does not depend on their number.
RoutingSample sample_routing(const WorkloadSpec& w, int threads = 0);

}  // namespace epsim::workloads
