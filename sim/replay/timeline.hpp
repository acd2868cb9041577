// What a replay recorded: per-rank stream intervals, per-collective spans
// and the bytes each link carried, in a deterministic order.
#pragma once

#include <cstdint>
#include <vector>

#include "workloads/task_graph.hpp"

namespace epsim::sim {

// The streams of one NPU. Under `serial` everything runs on kCompute.
enum class Stream { kCompute = 0, kEpComm = 1, kDpComm = 2 };
inline constexpr int kStreams = 3;
const char* to_string(Stream s);

struct Interval {
  int rank = 0;
  Stream stream = Stream::kCompute;
  workloads::TaskId task = 0;
  double ready_s = 0;  // collectives: when this rank entered (it waits for its peers until start_s)
  double start_s = 0;
  double end_s = 0;
};

// Bytes a link carried for one activity over an interval in which the
// activity's rate was constant (sim/replay/link_progress.hpp).
struct LinkSpan {
  int link = 0;
  double start_s = 0;
  double end_s = 0;
  double bytes = 0;
};

struct CollectiveSpan {
  workloads::TaskId task = 0;
  double first_ready_s = 0;  // the first participant entered
  double start_s = 0;        // the last participant entered; transfers began
  double end_s = 0;
};

struct Timeline {
  double step_s = 0;
  std::vector<Interval> intervals;          // sorted by (rank, stream, start_s, task)
  std::vector<CollectiveSpan> collectives;  // sorted by task
  std::vector<double> link_bytes;           // per link of PlatformFacts
  std::vector<LinkSpan> link_spans;         // sorted by (link, start_s, end_s); empty unless recorded
  std::int64_t activities = 0;              // SimGrid activities started (the cost driver)
};

// Sorts the recorded vectors into their documented order.
void canonicalize(Timeline& timeline);

}  // namespace epsim::sim
