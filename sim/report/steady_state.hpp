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

// `b`'s report carried `k` increments further: every summed figure x of
// the report becomes x_b + k (x_b - x_a) (phases matched by name), the
// rates, shares and link utilisations are recomputed from those sums, and
// ranks, names and causes are b's. `a` and `b` are reports of the same
// scenario at two micro-batch counts, b's the larger. The throughput is
// b's: the caller sets the step's scenario and recomputes it (add_throughput).
Report extrapolate_report(const Report& a, const Report& b, double k);

}  // namespace epsim::sim
