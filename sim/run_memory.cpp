#include "sim/run_memory.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/memory_limit.hpp"

namespace epsim::sim {

RunMemory estimate_run_memory(const PlatformShape& platform, const workloads::WorkloadSpec& workload) {
  RunMemory m;
  if (platform.cluster) m.platform_bytes = platform_memory_bytes(*platform.cluster);
  m.traffic_bytes = workloads::traffic_memory_bytes(workload.model.moe_layers(), workload.parallel.micro_batches,
                                                    workload.parallel.ranks());
  return m;
}

void check_run_memory(const PlatformShape& platform, const workloads::WorkloadSpec& workload) {
  // Each term alone is refused where it is set, with its own formula (the
  // traffic term when the workload is loaded); here, their sum.
  if (platform.cluster) check_platform_memory(*platform.cluster);
  const RunMemory m = estimate_run_memory(platform, workload);
  if (m.total_bytes() <= memory_limit_GiB() * kBytesPerGiB) return;
  const bool platform_larger = platform.cluster && m.platform_bytes >= m.traffic_bytes;
  const std::string problem =
      fmt::format("the run needs an estimated {:.1f} GiB: platform {:.1f} GiB ({} NPUs) + traffic matrices {:.1f} "
                  "GiB ({} ranks), {}",
                  m.total_bytes() / kBytesPerGiB, m.platform_bytes / kBytesPerGiB,
                  platform.nodes * platform.npus_per_node, m.traffic_bytes / kBytesPerGiB,
                  workload.parallel.ranks(), memory_limit_clause());
  if (platform_larger) throw InputError(platform.cluster->node.count_given_at, "node.count", problem);
  throw InputError(workload.parallel.ranks_given_at, "parallel.ep", problem);
}

}  // namespace epsim::sim
