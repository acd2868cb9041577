// The routing of DeepEP's normal-kernel benchmarks (tests/test_intranode.py,
// tests/test_internode.py) as a traffic matrix: i.i.d. scores per (token,
// expert), the top `group_limit` nodes by their best expert, top-k experts
// among those nodes. Used to validate the simulator against DeepEP's numbers.
#pragma once

#include <cstdint>

#include "workloads/task_graph.hpp"

namespace epsim::workloads {

struct DeepEpRoutingSpec {
  int ranks = 8;              // EP ranks
  int ranks_per_node = 8;     // GPUs per node; the benchmark's groups are the nodes
  int experts = 256;          // routed experts, ranks x (experts / ranks) in rank order
  int top_k = 8;              // experts per token
  int group_limit = 4;        // nodes a token may reach; DeepEP uses min(nodes, 4)
  int tokens_per_rank = 4096;
  std::uint64_t seed = 1;
};

// Counts per (source rank, destination rank) and per (source rank,
// destination node), once per token, the source's own rank and node
// included. The benchmark's scores are |N(0,1)| + 1; only their order
// matters and i.i.d. continuous scores make every order equally likely, so
// uniform 64-bit words give the same distribution of routes.
// Throws InputError when the spec is inconsistent (experts not a multiple
// of ranks, ranks not a multiple of ranks_per_node, top_k larger than the
// experts of `group_limit` nodes, non-positive sizes).
TrafficMatrix sample_deepep_traffic(const DeepEpRoutingSpec& spec);

}  // namespace epsim::workloads
