#include "sim/run_memory.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/memory_limit.hpp"

namespace epsim::sim {

double replay_memory_bytes(const workloads::WorkloadSpec& w) {
  const workloads::ParallelSpec& p = w.parallel;
  return kReplayBytesPerRankMicroBatchLayer * p.world() * static_cast<double>(p.micro_batches) * w.model.layers /
         p.pp;
}

RunMemory estimate_run_memory(const PlatformShape& platform, const workloads::WorkloadSpec& workload,
                              int kept_micro_batches) {
  RunMemory m;
  if (platform.cluster) m.platform_bytes = platform_memory_bytes(*platform.cluster);
  m.traffic_bytes = workloads::traffic_memory_bytes(
      workload.model.moe_layers(), workload.parallel.micro_batches + kept_micro_batches, workload.parallel.ranks());
  m.replay_bytes = replay_memory_bytes(workload);
  return m;
}

void check_run_memory(const PlatformShape& platform, const workloads::WorkloadSpec& workload,
                      int kept_micro_batches) {
  // Each term alone is refused where it is set, with its own formula (the
  // traffic term when the workload is loaded); here, their sum.
  if (platform.cluster) check_platform_memory(*platform.cluster);
  const RunMemory m = estimate_run_memory(platform, workload, kept_micro_batches);
  if (m.total_bytes() <= memory_limit_GiB() * kBytesPerGiB) return;
  const workloads::ParallelSpec& p = workload.parallel;
  const std::string problem = fmt::format(
      "the run needs an estimated {:.1f} GiB: platform {:.1f} GiB ({} NPUs) + traffic matrices {:.1f} GiB ({} "
      "ranks x {} micro-batches) + task graph and replay {:.1f} GiB ({} ranks replayed x {} micro-batches x {} "
      "layers / {} stages), {}",
      m.total_bytes() / kBytesPerGiB, m.platform_bytes / kBytesPerGiB, platform.nodes * platform.npus_per_node,
      m.traffic_bytes / kBytesPerGiB, p.ranks(), p.micro_batches + kept_micro_batches, m.replay_bytes / kBytesPerGiB,
      p.world(), p.micro_batches, workload.model.layers, p.pp, memory_limit_clause());
  // Blamed at the largest term's key.
  if (platform.cluster && m.platform_bytes >= m.traffic_bytes && m.platform_bytes >= m.replay_bytes)
    throw InputError(platform.cluster->node.count_given_at, "node.count", problem);
  if (m.replay_bytes > m.traffic_bytes)
    throw InputError(SourceLocation{workload.source}, "parallel.micro_batches", problem);  // often derived: no line
  throw InputError(p.ranks_given_at, "parallel.ep", problem);
}

}  // namespace epsim::sim
