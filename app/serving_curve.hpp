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
  // Micro-batch counts each batch is replayed at, the fastest kept (empty:
  // the workload's serving.micro_batches alone); batches step by their lcm.
  std::vector<int> micro_batches;
  std::optional<double> latency_limit_s;  // TPOT (decode) or TTFT (prefill) the chosen batch must meet
  // The pool's traffic, tokens/s: output (decode) or input, hits included
  // (prefill); the pool sized for it at the chosen batch (needs the limit).
  std::optional<double> traffic_tokens_per_s;
  int jobs = 1;                           // child processes at once
};

struct ServingPoint {
  std::int64_t batch = 0;       // sequences per rank
  int micro_batches = 0;        // the count the batch ran in (the fastest of those replayed)
  double step_s = 0;
  double latency_s = 0;         // TPOT: the step over the tokens a sequence gains; TTFT: the step
  double tokens_per_s_per_npu = 0;
  double tokens_per_s_per_node = 0;
  double memory_bytes = 0;      // per rank
  double mfu = 0;
  int nodes = 0;                // the nodes a unit of this layout occupies
  int ranks_per_node = 0;
  // Prefill: the KV cache handed to the decode pool per input token
  // (layers x KV bytes per token / tp) and a rank's share of the fabric it
  // leaves over (0: none known).
  double handoff_bytes_per_token = 0;
  double handoff_Bps_per_rank = 0;
};

// A pool sized for a traffic at the chosen batch: whole units of the
// layout, the tokens/s per node at that batch.
struct PoolSize {
  double traffic_tokens_per_s = 0;
  double nodes_needed = 0;     // traffic / tokens/s per node
  int unit_nodes = 0;
  std::int64_t units = 0;      // ceil(nodes_needed / unit_nodes)
  std::int64_t nodes() const { return units * unit_nodes; }
  double load() const { return nodes_needed / static_cast<double>(nodes()); }
  // Prefill: the KV the pool hands to the decode pool, bytes/s in all and
  // per node, against a node's fabric out (its ranks' shares; 0: unknown).
  double handoff_Bps = 0;
  double handoff_Bps_per_node = 0;
  double fabric_Bps_per_node = 0;
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
  std::optional<PoolSize> pool;        // with a traffic and a chosen batch
  // Where the platform's stack spends host time per kernel (a training
  // framework's eager loop, which sets a decode step's floor): what it
  // costs and the stacks for this NPU that spend none (empty otherwise).
  std::string host_note;
};

// The request's workload, refused at --workload when it has no [serving] table.
workloads::WorkloadSpec load_serving_workload(const RunRequest& request);

// The option a phase's latency limit comes from: --tpot (decode) or --ttft (prefill).
std::string latency_option(const std::string& phase);

// What a serving JSON says it is about: platform, workload, overrides.
nlohmann::ordered_json request_json(const RunRequest& base);

// Whether the request's --set gives `key` ("serving.micro_batches"; a
// "workload." prefix counts).
bool sets_key(const RunRequest& request, const std::string& key);

// The pool for `traffic_tokens_per_s` at point `p`.
PoolSize size_pool(const ServingPoint& p, double traffic_tokens_per_s);

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

// The curve's host_note as an indented line (empty when it has none).
std::string format_host_note(const ServingCurve& curve);
// The curve's table (a header and a row per batch, the best marked), as
// format_serving_curve and a layout search print it.
std::string format_serving_points(const ServingCurve& curve);
// "pool for ... tokens/s: ... nodes ..." and, for prefill, its KV handoff.
std::string format_pool(const PoolSize& pool, const std::string& phase, int ranks_per_node);
// The curve's JSON without the request (phase, latency, points, limit, best).
nlohmann::ordered_json serving_curve_json(const ServingCurve& curve);
std::string format_serving_curve_json(const ServingCurve& curve, const RunRequest& base);

}  // namespace epsim::app
