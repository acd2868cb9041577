// Segments of constant rate from progress samples.
#include "sim/replay/link_progress.hpp"

#include <algorithm>
#include <cmath>

namespace epsim::sim {

LinkProgress::LinkProgress(std::vector<std::pair<int, double>> link_bytes, double start_s)
    : link_bytes_(std::move(link_bytes)), segment_start_s_(start_s), last_s_(start_s) {}

void LinkProgress::close(double end_s, double left, std::vector<LinkSpan>& out) {
  const double done = segment_left_ - left;
  if (end_s > segment_start_s_ && done > 0)
    for (const auto& [link, bytes] : link_bytes_) out.push_back({link, segment_start_s_, end_s, bytes * done});
  segment_start_s_ = end_s;
  segment_left_ = left;
}

void LinkProgress::sample(double now_s, double left, std::vector<LinkSpan>& out) {
  if (link_bytes_.empty() || !(now_s > last_s_)) return;
  const double rate = (last_left_ - left) / (now_s - last_s_);
  // A new rate (beyond rounding) starts a new segment at the previous sample.
  if (rate_ >= 0 && std::fabs(rate - rate_) > 1e-9 * std::max(rate, rate_)) close(last_s_, last_left_, out);
  rate_ = rate;
  last_s_ = now_s;
  last_left_ = left;
}

void LinkProgress::finish(double end_s, std::vector<LinkSpan>& out) {
  if (link_bytes_.empty()) return;
  sample(end_s, 0, out);
  close(end_s, 0, out);
}

}  // namespace epsim::sim
