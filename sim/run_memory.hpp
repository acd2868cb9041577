// The memory a whole run needs, estimated before anything is allocated:
// the platform's routes plus the job's traffic matrices through sampling,
// task graph and replay, held against the one limit (core/memory_limit.hpp).
#pragma once

#include "sim/platform/platform_loader.hpp"
#include "workloads/workload_spec.hpp"

namespace epsim::sim {

struct RunMemory {
  double platform_bytes = 0;  // platform_memory_bytes; 0 for a SimGrid XML (bounded by its file size)
  double traffic_bytes = 0;   // workloads::traffic_memory_bytes
  double replay_bytes = 0;    // replay_memory_bytes
  double total_bytes() const { return platform_bytes + traffic_bytes + replay_bytes; }
};

// The task graph's tasks and their per-rank parts, and the replay's
// SimGrid activities, grow with the ranks replayed x the micro-batches x
// the layers a rank holds: measured +132 MB from 8 to 16 micro-batches of
// deepseek-v3-pp8 on 32 A2 nodes (256 ranks x 8 x 61/8 layers), 8.45 kB
// each, rounded up. Against whole runs it errs high: production on 2,048
// H800 (1,024 ranks replayed x 36 x 61/16) predicts 1.6 GB with the other
// terms, measured 1.59 GB; TP2 PP8 VPP4 on 1,024 H800 2.9 GB, measured 1.25.
inline constexpr double kReplayBytesPerRankMicroBatchLayer = 8.5e3;
double replay_memory_bytes(const workloads::WorkloadSpec& workload);

// `kept_micro_batches`: routing of that many more micro-batches held
// beside the replay's own (an earlier replay's draws, reused).
RunMemory estimate_run_memory(const PlatformShape& platform, const workloads::WorkloadSpec& workload,
                              int kept_micro_batches = 0);

// Throws InputError above the limit: the platform alone as
// check_platform_memory does, else the sum at the larger term's key
// (node.count or parallel.ep), naming both terms.
void check_run_memory(const PlatformShape& platform, const workloads::WorkloadSpec& workload,
                      int kept_micro_batches = 0);

}  // namespace epsim::sim
