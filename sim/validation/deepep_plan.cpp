// Flows and byte accounting of DeepEP's normal kernels.
#include "sim/validation/deepep_plan.hpp"

#include <cmath>
#include <map>
#include <utility>

namespace epsim::sim {

namespace {

double padded16(double bytes) { return std::ceil(bytes / 16.0) * 16.0; }

}  // namespace

DeepEpPlan plan_deepep(const workloads::TrafficMatrix& traffic) {
  DeepEpPlan plan;
  plan.ranks = traffic.ranks;
  plan.ranks_per_node = traffic.ranks_per_node;
  const int per_node = traffic.ranks_per_node;
  const int nodes = traffic.nodes();
  plan.internode = nodes > 1;
  if (!plan.internode) {
    for (int s = 0; s < traffic.ranks; ++s)
      for (int d = 0; d < traffic.ranks; ++d)
        if (s != d && traffic.at(s, d) > 0) plan.nvlink.push_back({s, d, static_cast<double>(traffic.at(s, d))});
    return plan;
  }
  for (int s = 0; s < traffic.ranks; ++s) {
    const int node = s / per_node;
    const int local = s % per_node;
    for (int m = 0; m < nodes; ++m) {
      if (m == node || traffic.to_node(s, m) == 0) continue;
      plan.network.push_back({s, m * per_node + local, static_cast<double>(traffic.to_node(s, m))});
    }
  }
  // The forwarder of a token in node m is the GPU with its source's local index.
  std::map<std::pair<int, int>, double> forwarded;
  for (int s = 0; s < traffic.ranks; ++s) {
    const int local = s % per_node;
    for (int d = 0; d < traffic.ranks; ++d) {
      const int forwarder = (d / per_node) * per_node + local;
      if (forwarder != d && traffic.at(s, d) > 0) forwarded[{forwarder, d}] += static_cast<double>(traffic.at(s, d));
    }
  }
  for (const auto& [pair, tokens] : forwarded) plan.nvlink.push_back({pair.first, pair.second, tokens});
  return plan;
}

DeepEpTokenBytes deepep_token_bytes(int hidden, int top_k) {
  DeepEpTokenBytes b;
  const double h = hidden;
  b.dispatch_counted = h * (1.0 + 4.0 / 128.0);
  b.combine_counted = h * 2.0;
  const double scales = 4.0 * std::ceil(h / 128.0);
  const double source_record = 8.0;
  b.dispatch_moved = padded16(h + scales + 4.0 * top_k + 4.0 * top_k + source_record);
  b.combine_moved = padded16(2.0 * h + 4.0 * top_k + source_record);
  return b;
}

DeepEpBytes deepep_bytes(const workloads::TrafficMatrix& traffic, const DeepEpPlan& plan,
                         const DeepEpTokenBytes& token_bytes) {
  DeepEpBytes out;
  const double ranks = traffic.ranks;
  double counted_tokens = 0;
  double local_node_tokens = 0;
  if (!plan.internode) {
    for (std::int32_t t : traffic.tokens) counted_tokens += t;
  } else {
    for (int s = 0; s < traffic.ranks; ++s)
      for (int m = 0; m < traffic.nodes(); ++m) {
        counted_tokens += static_cast<double>(traffic.to_node(s, m));
        if (m == s / traffic.ranks_per_node) local_node_tokens += static_cast<double>(traffic.to_node(s, m));
      }
    out.counted_local_node_share = counted_tokens > 0 ? local_node_tokens / counted_tokens : 0;
  }
  out.dispatch_counted_bytes = counted_tokens * token_bytes.dispatch_counted / ranks;
  out.combine_counted_bytes = counted_tokens * token_bytes.combine_counted / ranks;
  double nvlink_tokens = 0, network_tokens = 0;
  for (const TokenFlow& f : plan.nvlink) nvlink_tokens += f.tokens;
  for (const TokenFlow& f : plan.network) network_tokens += f.tokens;
  out.dispatch_nvlink_bytes = nvlink_tokens * token_bytes.dispatch_moved / ranks;
  out.dispatch_network_bytes = network_tokens * token_bytes.dispatch_moved / ranks;
  out.combine_nvlink_bytes = nvlink_tokens * token_bytes.combine_moved / ranks;
  out.combine_network_bytes = network_tokens * token_bytes.combine_moved / ranks;
  return out;
}

}  // namespace epsim::sim
