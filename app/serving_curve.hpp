// A serving workload's throughput against its latency (docs/serving.md):
// the step replayed at several batches per rank, each in a child process
// (one SimGrid engine per process), and the batch with the most tokens/s
// per NPU whose TPOT (decode) or TTFT (prefill) meets a limit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "app/run_job.hpp"
#include "core/error.hpp"

namespace epsim::app {

struct ServingCurveRequest {
  RunRequest base;                    // a workload with a [serving] table
  std::vector<std::int64_t> batches;  // sequences per rank; empty: micro_batches x 2^i up to the largest that fits
  std::optional<double> latency_limit_s;  // TPOT (decode) or TTFT (prefill) the chosen batch must meet
  int jobs = 1;                           // child processes at once
};

struct ServingPoint {
  std::int64_t batch = 0;       // sequences per rank
  double step_s = 0;
  double latency_s = 0;         // TPOT: the step over the tokens a sequence gains; TTFT: the step
  double tokens_per_s_per_npu = 0;
  double tokens_per_s_per_node = 0;
  double memory_bytes = 0;      // per rank
  double mfu = 0;
};

struct ServingCurve {
  std::string phase;                   // "prefill" or "decode"
  std::string latency_name;            // "TPOT" or "TTFT"
  std::int64_t largest_batch = 0;      // the largest that fits a rank's HBM (0: capacity unknown)
  double hbm_bytes = 0;
  std::vector<ServingPoint> points;    // by batch
  std::optional<double> limit_s;
  std::optional<std::size_t> best;     // index into points: the most tokens/s per NPU within the limit
  std::optional<InputError> refusal;   // why no batch is chosen: none fits a rank's HBM, or none meets the limit
};

// Replays the steps and, with a limit, bisects between the largest batch
// that meets it and the next that does not. Throws InputError for a
// workload without [serving] and a batch that is not a multiple of its
// micro-batches or does not fit; a layout where not one sequence fits, or a
// limit no batch meets, is the curve's `refusal` (the points replayed kept).
ServingCurve replay_serving_curve(const ServingCurveRequest& request);

// The same, with the refusal thrown: "--workload: not even one sequence
// ...", or at --tpot or --ttft, the option the limit came from.
ServingCurve serving_curve(const ServingCurveRequest& request);

std::string format_serving_curve(const ServingCurve& curve, const RunRequest& base);
// The curve's table (a header and a row per batch, the best marked), as
// format_serving_curve and a layout search print it.
std::string format_serving_points(const ServingCurve& curve);
// The curve's JSON without the request (phase, latency, points, limit, best).
nlohmann::ordered_json serving_curve_json(const ServingCurve& curve);
std::string format_serving_curve_json(const ServingCurve& curve, const RunRequest& base);

}  // namespace epsim::app
