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

std::size_t counts_bytes(const LayerRouting& l) {
  return sizeof(std::int32_t) * (l.traffic.tokens.size() + l.traffic.node_tokens.size() + l.expert_tokens.size());
}

}  // namespace

void KeptRouting::keep(const LayerRouting& layer) { layers_.try_emplace({layer.layer, layer.micro_batch}, layer); }

const LayerRouting* KeptRouting::find(const LayerRouting& shape) const {
  const auto it = layers_.find({shape.layer, shape.micro_batch});
  if (it == layers_.end()) return nullptr;
  const LayerRouting& l = it->second;
  const bool same_shape = l.traffic.ranks == shape.traffic.ranks &&
                          l.traffic.ranks_per_node == shape.traffic.ranks_per_node &&
                          l.traffic.tokens_per_rank == shape.traffic.tokens_per_rank &&
                          l.traffic.selections_per_rank == shape.traffic.selections_per_rank &&
                          l.traffic.tokens.size() == shape.traffic.tokens.size() &&
                          l.traffic.node_tokens.size() == shape.traffic.node_tokens.size() &&
                          l.expert_tokens.size() == shape.expert_tokens.size();
  return same_shape ? &l : nullptr;
}

std::size_t KeptRouting::bytes() const {
  std::size_t total = 0;
  for (const auto& kept : layers_) total += counts_bytes(kept.second);
  return total;
}

RoutingStream::RoutingStream(const WorkloadSpec& w, int threads, const KeptRouting* drawn_before, KeptRouting* keep)
    : jobs_(w),
      keep_(keep),
      claimed_(static_cast<std::size_t>(jobs_.count())),
      done_(static_cast<std::size_t>(jobs_.count()), 0) {
  placeholder_ = without_counts(jobs_.sample());
  if (drawn_before != nullptr) {
    for (int job = 0; job < jobs_.count(); ++job) {
      LayerRouting& layer = jobs_.sample().layers[static_cast<std::size_t>(job)];
      if (const LayerRouting* drawn = drawn_before->find(layer)) {
        layer = *drawn;
        claimed_[static_cast<std::size_t>(job)] = true;
        done_[static_cast<std::size_t>(job)] = 1;
      }
    }
  }
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
  LayerRouting& layer = jobs_.sample().layers[static_cast<std::size_t>(job)];
  if (keep_ != nullptr) keep_->keep(layer);
  return std::move(layer);
}

RoutingSample RoutingStream::take() {
  for (int job = 0; job < jobs_.count(); ++job) wait(job);
  if (keep_ != nullptr)
    for (const LayerRouting& layer : jobs_.sample().layers) keep_->keep(layer);
  return std::move(jobs_.sample());
}

RoutingSample sample_routing(const WorkloadSpec& w, int threads) { return RoutingStream(w, threads).take(); }

}  // namespace epsim::workloads
