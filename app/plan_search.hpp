// `epsim plan`'s search on one cluster (docs/plan.md): enumerate the
// layouts (plan_candidates.hpp), check each as `epsim run` would (the
// workload loader's validity checks, the run's memory estimate, the HBM
// fit: check_job), order the survivors by their bound (plan_bound.hpp),
// simulate them best bound first in forked children of this process, and
// prune every candidate whose bound is slower than the best step simulated.
// The workload's own layout is simulated too, whatever its bound, for reference.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app/plan_candidates.hpp"
#include "app/run_job.hpp"

namespace epsim::app {

struct PlanRequest {
  // The platform, the workload, --set overrides every layout starts from
  // (workload keys below each layout's own), and the replay's options.
  RunRequest base;
  std::optional<int> npus;                    // unset: every NPU of the platform
  std::optional<std::int64_t> global_batch;   // unset: the workload's
  std::vector<std::int64_t> micro_batch = {1, 2, 4};  // sequences per micro-batch to try
  int parallel = 1;         // children simulating at once
  int max_candidates = 32;  // only the first this many by bound may be simulated
  std::function<void(const std::string& line)> progress;  // what the search is doing, one line at a time
  // Simulations an earlier plan of the same inputs finished (a results file,
  // tools/plan_results.hpp), keyed by plan_record_key: `earlier` gives one's
  // step as `finished` was told it (JSON text), or nullopt; such a layout is
  // not simulated again. `finished` hears each new simulation as it ends.
  std::function<std::optional<std::string>(const std::string& key)> earlier;
  std::function<void(const std::string& key, const std::string& step)> finished;
};

// What a simulated layout's report says, as the plan ranks and prints it.
struct PlanStep {
  double step_s = 0;
  double replay_bound_s = 0;  // the replay's own bound (critical path, rank streams)
  double tokens_per_s_per_npu = 0;
  double mfu = 0;
  double exposed_comm_s = 0;  // mean per rank: communication while the compute stream is idle
  double bubble_s = 0;        // mean per rank: idle waiting for the neighbouring stage
  std::vector<std::pair<std::string, double>> phases;  // the report's phase rows, mean over every rank
};

// Why a layout was not simulated, or that it was.
enum class PlanStatus {
  kSimulated,
  kInvalid,       // the workload loader or the run's checks refuse it (`key` says which)
  kMemory,        // a rank does not fit the NPU's HBM
  kTooLarge,      // the simulation would exceed this machine's memory limit (EPSIM_MEMORY_LIMIT_GIB)
  kBound,         // its bound is slower than the best simulated step: it cannot win
  kNotSimulated,  // beyond --max-candidates by bound
  kFailed,        // the simulation itself failed (`key` holds its message)
};
const char* to_string(PlanStatus status);  // "simulated", "invalid", "memory", ...

struct PlanCandidate {
  PlanLayout layout;
  PlanStatus status = PlanStatus::kInvalid;
  std::string key;            // kInvalid: the key at fault; kFailed: the message
  double bound_s = 0;         // the larger of the two below; 0 when kInvalid
  double compute_bound_s = 0;  // plan_step_bound_s: model FLOPs and the pipeline's fill and drain
  double comm_bound_s = 0;     // plan_comm_bound_s: the bytes the NICs and scale-up links must carry
  bool bound_by_comm() const { return comm_bound_s > compute_bound_s; }
  double memory_bytes = 0;    // per rank, the fullest stage (docs/memory.md); 0 when kInvalid
  std::optional<PlanStep> step;  // kSimulated only
  // The workload's own layout (its [parallel] and [memory] keys, at the
  // plan's global batch): simulated whatever its bound, first, so the
  // ranking says where it stands.
  bool own = false;
  bool reused = false;  // its step came from an earlier plan's results (PlanRequest::earlier)
};

struct PlanResult {
  std::string platform;  // as given
  std::string workload;
  int npus = 0;
  int npus_per_node = 0;
  double hbm_bytes = 0;   // per NPU
  double peak_flops = 0;  // the bound's peak per NPU
  double node_out_Bps = 0;  // the communication bound's rates (plan_comm_bound.hpp's PlanLinks)
  double rank_in_Bps = 0;
  std::int64_t global_batch = 0;
  std::int64_t sequence_length = 0;
  long long considered = 0;  // every combination of the dimensions' values
  // Layouts left out before simulation or instead of it, by reason
  // ("cheap check: parallel.ep", "invalid: parallel.global_batch", "memory", ...).
  std::map<std::string, long long> pruned;
  // The workload's own layout's name, and why it is not among the
  // candidates when it is not (empty when it is).
  std::string own_name;
  std::string own_missing;
  // Every layout the loader saw: simulated ones first, fastest first, then
  // the rest by status and bound; ties by PlanLayout::operator<.
  std::vector<PlanCandidate> candidates;
  int simulated() const;
  int reused() const;  // of the simulated, those whose step an earlier plan found
};

// The key of `layout` on `platform` (as given) in a plan's results file.
std::string plan_record_key(const std::string& platform, const PlanLayout& layout);

// Reads and checks the workload and every platform as plan_layouts does
// before it enumerates: the files a plan's results depend on, for
// core/input_file.hpp's InputFileLog. Throws as plan_layouts would.
void check_plan_inputs(const PlanRequest& request);

// Runs the search. Throws InputError for bad options (an XML platform: no
// HBM to fit; --npus that is not a whole number of the platform's nodes).
PlanResult plan_layouts(const PlanRequest& request);

}  // namespace epsim::app
