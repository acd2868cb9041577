// One collective alone on a platform, as `epsim collective` asks for it: a
// typed request, checked before SimGrid starts (the ranks fit the platform,
// an alltoallv's routing drawn from its workload cut to one stage's EP
// group), then timed by the replay's own collective model
// (sim/replay/collective_bench.hpp) on one engine: once per process.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/replay/collective_bench.hpp"
#include "workloads/workload_spec.hpp"

namespace epsim::app {

struct CollectiveRequest {
  std::string platform;                // cluster TOML, preset name or SimGrid XML
  std::vector<std::string> overrides;  // --set: platform keys (alltoallv: workload keys too, split as run splits)
  sim::CollectiveOp op = sim::CollectiveOp::kAllToAll;
  int npus = 0;
  int npus_per_node = 0;      // 0: the platform's, at most npus
  std::vector<double> sizes;  // bytes per rank (not alltoallv)
  std::string algorithm;      // "": as `run` resolves it (group ops: hierarchical)
  std::optional<sim::Fidelity> fidelity;
  // alltoallv: the workload whose first MoE layer's routing is drawn, and its shape (unset: the workload's own).
  std::string workload = "deepseek-v3";
  std::vector<long long> tokens;  // tokens per rank, one row each; empty: the workload's own
  std::optional<long long> hidden, top_k, experts, seed;
  std::string routing;  // routing.kind, "": the workload's
};

struct CollectiveRow {
  sim::CollectiveTiming timing;
  std::int64_t tokens = 0;  // alltoallv: tokens per rank
};

struct CollectiveOutcome {
  std::string platform_source;  // the platform as it was read
  int npus_per_node = 0;
  std::optional<workloads::WorkloadSpec> workload;  // alltoallv: the first row's workload
  double bytes_per_token = 0;                       // alltoallv: per (token, destination rank)
  std::vector<CollectiveRow> rows;                  // alltoallv rows first, then one per size
};

// Whether `op` is a group collective (all-reduce, reduce-scatter, all-gather).
bool is_group_op(sim::CollectiveOp op);

// Checks and times the request. Bad input throws InputError naming the
// option it came from (--npus, --experts, --algorithm, ...).
CollectiveOutcome run_collective_job(const CollectiveRequest& request);

}  // namespace epsim::app
