// Seed 003 part B (ascend_map.py comm_model): expert-parallel all-to-all
// bytes of one layer, compared with the activation bytes, and the time they
// take at a list of placeholder bandwidths.
#pragma once

#include <cstdint>
#include <vector>

namespace epsim::ledgers {

// The seed's command-line options, with its defaults.
struct EpCommOptions {
  std::int64_t tokens = 8192;   // --tokens
  std::int64_t top_k = 8;       // --top-k
  std::int64_t d_model = 7168;  // --d-model
  std::int64_t bytes = 2;       // --bytes: bytes per element
};

// Time of each direction at one bandwidth.
struct EpCommTime {
  double bandwidth_Bps = 0.0;
  double dispatch_time_s = 0.0;
  double combine_time_s = 0.0;
};

struct EpComm {
  EpCommOptions options;
  std::int64_t per_token_bytes = 0;   // k x d x b, each direction
  std::int64_t dispatch_bytes = 0;    // tokens x per_token_bytes
  std::int64_t combine_bytes = 0;     // = dispatch_bytes
  std::int64_t total_bytes = 0;       // dispatch + combine
  std::int64_t activation_bytes = 0;  // tokens x d x b
  double ratio_to_activation = 0.0;   // total / activation (= 2k)
  std::vector<EpCommTime> times;      // at 50, 100, 200, 400 GB/s
};

// The seed's placeholder bandwidths, GB/s (not any device's figure).
inline constexpr double kEpCommBandwidthsGBps[] = {50, 100, 200, 400};

// The ledger. Throws InputError naming the option for non-positive values or
// byte counts that would overflow 64 bits.
EpComm ep_comm(const EpCommOptions& options);

}  // namespace epsim::ledgers
