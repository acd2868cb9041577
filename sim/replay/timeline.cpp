// Canonical ordering of a Timeline, so reports and traces do not depend on
// completion order among simultaneous events.
#include "sim/replay/timeline.hpp"

#include <algorithm>
#include <tuple>

namespace epsim::sim {

const char* to_string(Stream s) {
  switch (s) {
    case Stream::kCompute: return "compute";
    case Stream::kEpComm: return "ep-comm";
    case Stream::kDpComm: return "dp-comm";
  }
  return "?";
}

void canonicalize(Timeline& t) {
  std::sort(t.intervals.begin(), t.intervals.end(), [](const Interval& a, const Interval& b) {
    return std::make_tuple(a.rank, static_cast<int>(a.stream), a.start_s, a.task) <
           std::make_tuple(b.rank, static_cast<int>(b.stream), b.start_s, b.task);
  });
  std::sort(t.collectives.begin(), t.collectives.end(),
            [](const CollectiveSpan& a, const CollectiveSpan& b) { return a.task < b.task; });
  std::sort(t.link_spans.begin(), t.link_spans.end(), [](const LinkSpan& a, const LinkSpan& b) {
    return std::make_tuple(a.link, a.start_s, a.end_s, a.bytes) < std::make_tuple(b.link, b.start_s, b.end_s, b.bytes);
  });
}

}  // namespace epsim::sim
