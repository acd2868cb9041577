// Replays DeepEP's normal dispatch and combine kernels on a loaded SimGrid
// platform: each stage in chunks, the NVLink stage of a chunk starting when
// its network stage ends (pipelined as DeepEP's forwarders do), each
// stage's latency paid once (its chunks stream back to back).
#pragma once

#include <vector>

#include "sim/validation/deepep_plan.hpp"

namespace simgrid::s4u {
class Host;
}

namespace epsim::sim {

struct DeepEpPipeline {
  // Equal slices each stage is cut into, one after the other. DeepEP moves
  // 6..36 tokens per chunk per channel and peer (Buffer.get_dispatch_config),
  // i.e. tens of chunks per peer; 32 leaves a pipeline fill of 1/32 of a stage.
  int chunks = 32;
  // Route latency of each stage, paid once before its first chunk: DeepEP
  // keeps several chunks in flight, so later chunks' latency hides behind
  // earlier chunks' bytes. The platform's link latencies must then be 0,
  // or every chunk pays them again (run_deepep_validation sets both).
  double network_latency_s = 0;
  double nvlink_latency_s = 0;
};

struct DeepEpTimes {
  double dispatch_s = 0;  // kernel time: first byte sent to last byte received, all ranks
  double combine_s = 0;
};

// Runs dispatch, then combine, alone on the platform of the current
// engine; rank r is hosts[r]. Calls Engine::run() twice, so it may be
// called again in the same process (e.g. after changing link bandwidths).
// Throws InputError when hosts is smaller than plan.ranks or the pipeline
// has fewer than one chunk or a negative latency.
DeepEpTimes run_deepep_kernels(const std::vector<simgrid::s4u::Host*>& hosts, const DeepEpPlan& plan,
                               const DeepEpTokenBytes& token_bytes, const DeepEpPipeline& pipeline = {});

}  // namespace epsim::sim
