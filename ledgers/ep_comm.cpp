// Seed 003 part B: expert-parallel all-to-all bytes and times.
#include "ledgers/ep_comm.hpp"

#include "ledgers/checks.hpp"

namespace epsim::ledgers {

EpComm ep_comm(const EpCommOptions& options) {
  const EpCommOptions& o = options;
  require_positive(o.tokens, "tokens");
  require_positive(o.top_k, "top_k");
  require_positive(o.d_model, "d_model");
  require_positive(o.bytes, "bytes");
  EpComm c;
  c.options = o;
  c.per_token_bytes = checked_product({o.top_k, o.d_model, o.bytes}, "top_k", "per-token bytes");
  c.dispatch_bytes = checked_product({o.tokens, c.per_token_bytes, 2}, "tokens", "dispatch + combine bytes") / 2;
  c.combine_bytes = c.dispatch_bytes;
  c.total_bytes = c.dispatch_bytes + c.combine_bytes;
  c.activation_bytes = o.tokens * o.d_model * o.bytes;
  c.ratio_to_activation =
      static_cast<double>(c.total_bytes) / static_cast<double>(c.activation_bytes);
  for (double gbps : kEpCommBandwidthsGBps) {
    double bw = gbps * 1e9;
    c.times.push_back({bw, static_cast<double>(c.dispatch_bytes) / bw,
                       static_cast<double>(c.combine_bytes) / bw});
  }
  return c;
}

}  // namespace epsim::ledgers
