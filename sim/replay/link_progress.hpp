// The bytes an activity puts on its links over time, as piecewise-constant
// rates: SimGrid changes an activity's rate only when an activity sharing
// one of its resources starts or ends, so sampling its remaining ratio at
// every replay event and closing a segment whenever the rate changes
// records exactly what each link carried when. (Spreading an activity's
// bytes evenly over its whole duration instead overstates a link's load
// while a sharer runs: trace counters above 100 %.) Pure: no SimGrid.
#pragma once

#include <utility>
#include <vector>

#include "sim/replay/timeline.hpp"

namespace epsim::sim {

class LinkProgress {
 public:
  LinkProgress() = default;
  // An activity started at `start_s` that carries `link_bytes` (link, bytes) over its whole run.
  LinkProgress(std::vector<std::pair<int, double>> link_bytes, double start_s);

  bool empty() const { return link_bytes_.empty(); }
  // At `now_s` the activity had `left` of its work to do (1 at the start, 0 at the end).
  // Appends the current segment to `out` when the rate changed.
  void sample(double now_s, double left, std::vector<LinkSpan>& out);
  // The activity ended at `end_s`: appends what is left of it.
  void finish(double end_s, std::vector<LinkSpan>& out);

 private:
  void close(double end_s, double left, std::vector<LinkSpan>& out);
  std::vector<std::pair<int, double>> link_bytes_;
  double segment_start_s_ = 0;
  double segment_left_ = 1;
  double last_s_ = 0;
  double last_left_ = 1;
  double rate_ = -1;  // share of the work per second over the current segment; -1: not known yet
};

}  // namespace epsim::sim
