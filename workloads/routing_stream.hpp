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
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "workloads/routing_sampler.hpp"

namespace epsim::workloads {

// The layers a stream handed out, kept for a later stream of the same
// workload with more micro-batches (a pipeline's steady state replays the
// step twice): a job's draw depends only on the routing seed, its layer,
// its micro-batch and its source ranks (routing_sampler.hpp), so a kept
// layer is exactly the one that stream would draw, and it is not drawn again.
class KeptRouting {
 public:
  void keep(const LayerRouting& layer);
  // The kept layer of that model layer and micro-batch, if it has `shape`'s counts' shape.
  const LayerRouting* find(const LayerRouting& shape) const;
  std::size_t bytes() const;

 private:
  std::map<std::pair<int, int>, LayerRouting> layers_;  // by (model layer, micro-batch)
};

class RoutingStream {
 public:
  // Starts drawing at once. `threads`: threads in all, counting the
  // caller's while it waits (0: one per core). The layers `drawn_before`
  // holds are taken from it rather than drawn; with `keep`, every layer
  // handed out is kept there too.
  explicit RoutingStream(const WorkloadSpec& w, int threads = 0, const KeptRouting* drawn_before = nullptr,
                         KeptRouting* keep = nullptr);
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
  KeptRouting* keep_;
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
