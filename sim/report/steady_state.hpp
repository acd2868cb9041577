// A pipelined step of many micro-batches from two short replays: once each
// further `delta` micro-batches add the same time and work to every stage
// (the steady state of the schedule, workloads::steady_state), the step of
// M micro-batches is the replay of m + delta plus (M - m - delta) / delta
// times the difference between the replays of m + delta and m. Everything
// a report sums over the step (times, bytes, spans) is carried the same
// way; what it divides (rates, shares, utilisations) is recomputed from the
// carried sums. docs/simulator.md, "Exact reductions".
#pragma once

#include <vector>

#include "sim/replay/timeline.hpp"
#include "sim/report/report.hpp"
#include "workloads/task_graph.hpp"

namespace epsim::sim {

// Per pipeline stage, when its last forward kernel started. Between a
// replay of m micro-batches and one of m + delta in the steady state, the
// second is the first with delta micro-batches' iterations inserted in the
// middle: every stage's tail starts later by the step's increment, which
// is what app/step_replay checks before carrying the step.
std::vector<double> last_forward_starts_s(const Timeline& timeline, const workloads::TaskGraph& graph);

struct Carried {
  Report report;
  ReportSums sums;
};

// `b`'s report carried `k` increments further: every summed figure x of
// the report becomes x_b + k (x_b - x_a) (phases matched by name), per
// rank and per link where the report takes a maximum or names a rank or
// a link (its sums), and the means, maxima, rates, shares, stragglers and
// busiest links are recomputed from the carried sums as build_report
// makes them. `a` and `b` are reports of the same scenario on `platform`
// at two micro-batch counts, b's the larger. The throughput is b's: the
// caller sets the step's scenario and recomputes it (add_throughput).
Carried extrapolate_report(const Report& a, const ReportSums& sums_a, const Report& b, const ReportSums& sums_b,
                           double k, const PlatformFacts& platform);

}  // namespace epsim::sim
