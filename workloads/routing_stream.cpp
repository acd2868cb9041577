#include "workloads/routing_stream.hpp"

#include <algorithm>
#include <utility>

namespace epsim::workloads {

namespace {

// The shape of `s` without a copy of its (zeroed, large) counts.
RoutingSample without_counts(const RoutingSample& s) {
  RoutingSample shape;
  shape.ranks = s.ranks;
  shape.ranks_per_node = s.ranks_per_node;
  shape.experts_per_rank = s.experts_per_rank;
  shape.micro_batches = s.micro_batches;
  shape.tokens_per_rank = s.tokens_per_rank;
  for (const LayerRouting& l : s.layers) {
    LayerRouting& copy = shape.layers.emplace_back();
    copy.layer = l.layer;
    copy.micro_batch = l.micro_batch;
    copy.traffic.ranks = l.traffic.ranks;
    copy.traffic.ranks_per_node = l.traffic.ranks_per_node;
    copy.traffic.selections_per_rank = l.traffic.selections_per_rank;
    copy.traffic.tokens_per_rank = l.traffic.tokens_per_rank;
  }
  return shape;
}

}  // namespace

RoutingStream::RoutingStream(const WorkloadSpec& w, int threads)
    : jobs_(w),
      claimed_(static_cast<std::size_t>(jobs_.count())),
      done_(static_cast<std::size_t>(jobs_.count()), 0) {
  placeholder_ = without_counts(jobs_.sample());
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // The caller draws too whenever it waits: one thread fewer keeps every
  // core busy without taking one from it while it works.
  const int workers = std::min(threads - 1, jobs_.count());
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { work(); });
}

RoutingStream::~RoutingStream() {
  stop_ = true;
  for (std::thread& t : workers_) t.join();
}

bool RoutingStream::claim(int job) { return !claimed_[static_cast<std::size_t>(job)].exchange(true); }

void RoutingStream::draw(int job) {
  std::exception_ptr failed;
  try {
    jobs_.run(job);
  } catch (...) {
    failed = std::current_exception();
  }
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    done_[static_cast<std::size_t>(job)] = 1;
    if (failed && !failure_) failure_ = failed;
  }
  drawn_.notify_all();
}

void RoutingStream::work() {
  for (int job = 0; job < jobs_.count() && !stop_; ++job)
    if (claim(job)) draw(job);
}

void RoutingStream::wait(int job) {
  if (claim(job)) draw(job);
  // While a worker draws `job`, draw later jobs rather than idle: the
  // caller is then late by at most the one it is drawing.
  int next = job + 1;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (done_[static_cast<std::size_t>(job)] != 0) break;
    }
    while (next < jobs_.count() && !claim(next)) ++next;
    if (next < jobs_.count()) {
      draw(next);
      continue;
    }
    std::unique_lock<std::mutex> lock(mutex_);
    drawn_.wait(lock, [&] { return done_[static_cast<std::size_t>(job)] != 0; });
    break;
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  if (failure_) std::rethrow_exception(failure_);
}

LayerRouting RoutingStream::take(int job) {
  wait(job);
  return std::move(jobs_.sample().layers[static_cast<std::size_t>(job)]);
}

RoutingSample RoutingStream::take() {
  for (int job = 0; job < jobs_.count(); ++job) wait(job);
  return std::move(jobs_.sample());
}

RoutingSample sample_routing(const WorkloadSpec& w, int threads) { return RoutingStream(w, threads).take(); }

}  // namespace epsim::workloads
