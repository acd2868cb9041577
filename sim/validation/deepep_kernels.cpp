// DeepEP's kernels as a two-task graph replayed by the replay.
#include "sim/validation/deepep_kernels.hpp"

#include "sim/platform/placement.hpp"
#include "sim/replay/collectives.hpp"

namespace epsim::sim {

using workloads::Task;
using workloads::TaskGraph;
using workloads::TaskKind;
using workloads::TrafficMatrix;

TaskGraph deepep_kernel_graph(const TrafficMatrix& traffic, const DeepEpTokenBytes& token_bytes) {
  TaskGraph g;
  g.ranks = traffic.ranks;
  g.ranks_per_node = traffic.ranks_per_node;
  g.traffic.push_back(traffic);
  Task dispatch;
  dispatch.id = 0;
  dispatch.kind = TaskKind::kDispatch;
  dispatch.layer = 0;
  dispatch.micro_batch = 0;
  dispatch.traffic = 0;
  dispatch.bytes_per_token = token_bytes.dispatch_moved;
  Task combine = dispatch;
  combine.id = 1;
  combine.kind = TaskKind::kCombine;
  combine.phase = workloads::Phase::kForward;
  combine.transpose = true;
  combine.bytes_per_token = token_bytes.combine_moved;
  combine.deps = {0};
  g.tasks = {dispatch, combine};
  return g;
}

namespace {

AlltoallAlgorithm algorithm_of(DeepEpKernel kernel, bool flat) {
  if (kernel == DeepEpKernel::kLowLatency) return AlltoallAlgorithm::kLowLatency;
  return flat ? AlltoallAlgorithm::kDirect : AlltoallAlgorithm::kHierarchical;
}

}  // namespace

ReplayOptions deepep_replay_options(int pipeline_chunks, DeepEpKernel kernel, bool flat) {
  ReplayOptions o;
  o.algorithm = algorithm_of(kernel, flat);
  o.fidelity = Fidelity::kAggregated;
  o.pipeline_chunks = pipeline_chunks;
  o.record_link_spans = false;
  return o;
}

DeepEpTimes time_deepep_kernels(SimEngine& engine, const LoadedPlatform& platform, const TrafficMatrix& traffic,
                                const DeepEpTokenBytes& token_bytes, int pipeline_chunks, DeepEpKernel kernel,
                                bool flat) {
  const TaskGraph graph = deepep_kernel_graph(traffic, token_bytes);
  const Placement placement = place_ranks(graph.ranks, graph.ranks_per_node, platform.facts);
  const Timeline t = replay(engine, platform, placement, graph, deepep_replay_options(pipeline_chunks, kernel, flat));
  DeepEpTimes out;
  for (const CollectiveSpan& c : t.collectives) {
    const double kernel_s = c.end_s - c.start_s;
    (c.task == 0 ? out.dispatch_s : out.combine_s) = kernel_s;
  }
  return out;
}

DeepEpMovedTokens deepep_moved_tokens(const TrafficMatrix& traffic, const PlatformFacts& platform,
                                      DeepEpKernel kernel, bool flat) {
  const TaskGraph graph = deepep_kernel_graph(traffic, DeepEpTokenBytes{1, 1, 1, 1});
  const Placement placement = place_ranks(graph.ranks, graph.ranks_per_node, platform);
  AlltoallvOptions o;
  o.algorithm = algorithm_of(kernel, flat);
  if (!platform.npus.empty()) o.kernels = platform.npus.front().kernels;  // one message per selection or per rank
  const CollectivePlan plan = plan_alltoallv(graph.tasks[0], traffic, placement, o);
  DeepEpMovedTokens out;
  for (const CollectivePhase& phase : plan.phases)
    for (const Transfer& x : phase.transfers) {
      const bool network = flat                               ? false
                           : kernel == DeepEpKernel::kNormal ? phase.name == "inter-node"
                                                             : platform.npus[x.src_npu].node != platform.npus[x.dst_npu].node;
      (network ? out.network_tokens_per_rank : out.intra_node_tokens_per_rank) += x.bytes;
    }
  out.network_tokens_per_rank /= traffic.ranks;
  out.intra_node_tokens_per_rank /= traffic.ranks;
  return out;
}

}  // namespace epsim::sim
