// Chunked, pipelined replay of DeepEP's kernels as ptask_L07 parallel tasks.
#include "sim/validation/deepep_kernels.hpp"

#include <memory>
#include <string>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include "core/error.hpp"

namespace epsim::sim {

namespace s4u = simgrid::s4u;

namespace {

struct Stage {
  const std::vector<TokenFlow>* flows = nullptr;
  bool reversed = false;  // combine: flows run dst -> src
  double latency_s = 0;
};

// One chunk of a stage: one parallel task over all ranks, every flow
// carrying 1/chunks of its bytes; all its flows progress at one rate, as
// a kernel's chunk is done when its slowest peer is.
s4u::ExecPtr chunk_exec(const std::vector<s4u::Host*>& hosts, const Stage& stage, double token_bytes, int chunks) {
  const std::size_t n = hosts.size();
  std::vector<double> bytes(n * n, 0.0);
  for (const TokenFlow& f : *stage.flows) {
    const std::size_t src = static_cast<std::size_t>(stage.reversed ? f.dst : f.src);
    const std::size_t dst = static_cast<std::size_t>(stage.reversed ? f.src : f.dst);
    bytes[src * n + dst] += f.tokens * token_bytes / chunks;
  }
  return s4u::Exec::init()->set_hosts(hosts)->set_flops_amounts(std::vector<double>(n, 0.0))->set_bytes_amounts(bytes);
}

// Runs the stage's chunks one after the other; `ready` (when given) gates
// chunk c until the previous stage released it; `done` (when given) is
// released as each chunk ends.
void run_stage(const std::vector<s4u::Host*>& hosts, const Stage& stage, double token_bytes,
               const DeepEpPipeline& p, s4u::SemaphorePtr ready, s4u::SemaphorePtr done) {
  for (int c = 0; c < p.chunks; ++c) {
    if (ready) ready->acquire();
    if (c == 0) s4u::this_actor::sleep_for(stage.latency_s);
    chunk_exec(hosts, stage, token_bytes, p.chunks)->wait();
    if (done) done->release();
  }
}

// The kernel's stages in order, each chunk of stage i+1 after the same chunk of stage i.
double run_kernel(const std::vector<s4u::Host*>& hosts, const std::vector<Stage>& stages, double token_bytes,
                  const DeepEpPipeline& p) {
  s4u::Engine* engine = s4u::Engine::get_instance();
  const double start_s = s4u::Engine::get_clock();
  s4u::SemaphorePtr previous;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    s4u::SemaphorePtr done = i + 1 < stages.size() ? s4u::Semaphore::create(0) : nullptr;
    const Stage stage = stages[i];
    s4u::Actor::create("deepep-stage" + std::to_string(i), hosts[0],
                       [&hosts, stage, token_bytes, p, previous, done] {
                         run_stage(hosts, stage, token_bytes, p, previous, done);
                       });
    previous = done;
  }
  engine->run();
  return s4u::Engine::get_clock() - start_s;
}

}  // namespace

DeepEpTimes run_deepep_kernels(const std::vector<s4u::Host*>& all_hosts, const DeepEpPlan& plan,
                               const DeepEpTokenBytes& token_bytes, const DeepEpPipeline& pipeline) {
  if (static_cast<int>(all_hosts.size()) < plan.ranks)
    throw InputError(SourceLocation{"deepep kernels"}, "ranks",
                     "the plan has " + std::to_string(plan.ranks) + " ranks, the platform " +
                         std::to_string(all_hosts.size()) + " GPUs");
  if (pipeline.chunks < 1 || pipeline.network_latency_s < 0 || pipeline.nvlink_latency_s < 0)
    throw InputError(SourceLocation{"deepep kernels"}, "pipeline", "chunks must be >= 1 and latencies >= 0");
  const std::vector<s4u::Host*> hosts(all_hosts.begin(), all_hosts.begin() + plan.ranks);
  std::vector<Stage> dispatch, combine;
  if (!plan.network.empty()) dispatch.push_back({&plan.network, false, pipeline.network_latency_s});
  if (!plan.nvlink.empty()) dispatch.push_back({&plan.nvlink, false, pipeline.nvlink_latency_s});
  for (auto it = dispatch.rbegin(); it != dispatch.rend(); ++it) combine.push_back({it->flows, true, it->latency_s});
  DeepEpTimes t;
  t.dispatch_s = run_kernel(hosts, dispatch, token_bytes.dispatch_moved, pipeline);
  t.combine_s = run_kernel(hosts, combine, token_bytes.combine_moved, pipeline);
  return t;
}

}  // namespace epsim::sim
