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
  double total_bytes() const { return platform_bytes + traffic_bytes; }
};

RunMemory estimate_run_memory(const PlatformShape& platform, const workloads::WorkloadSpec& workload);

// Throws InputError above the limit: the platform alone as
// check_platform_memory does, else the sum at the larger term's key
// (node.count or parallel.ep), naming both terms.
void check_run_memory(const PlatformShape& platform, const workloads::WorkloadSpec& workload);

}  // namespace epsim::sim
