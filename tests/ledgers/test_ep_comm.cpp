// Seed 003 part B (ascend_map.py comm_model): defaults and a second set,
// expected strings from the seed's formulas evaluated in python3.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "ledgers/ep_comm.hpp"

using namespace epsim::ledgers;

TEST_CASE("bounds: ep comm matches the seed's formulas", "[bounds][ep]") {
  struct Case {
    EpCommOptions options;
    std::int64_t per_token;
    std::string kb, dispatch_mb, total_mb, activation_mb, ratio;
    std::vector<std::string> times_us;  // at 50, 100, 200, 400 GB/s
  };
  std::vector<Case> cases = {
      {{}, 114688, "112.0", "939.5", "1879.0", "117.4", "16.0", {"18790.5", "9395.2", "4697.6", "2348.8"}},
      {{4096, 6, 5120, 1}, 30720, "30.0", "125.8", "251.7", "21.0", "12.0", {"2516.6", "1258.3", "629.1", "314.6"}},
  };
  for (const Case& c : cases) {
    EpComm e = ep_comm(c.options);
    CHECK(e.per_token_bytes == c.per_token);
    CHECK(fmt::format("{:.1f}", e.per_token_bytes / 1024.0) == c.kb);
    CHECK(fmt::format("{:.1f}", e.dispatch_bytes / 1e6) == c.dispatch_mb);
    CHECK(fmt::format("{:.1f}", e.combine_bytes / 1e6) == c.dispatch_mb);
    CHECK(fmt::format("{:.1f}", e.total_bytes / 1e6) == c.total_mb);
    CHECK(fmt::format("{:.1f}", e.activation_bytes / 1e6) == c.activation_mb);
    CHECK(fmt::format("{:.1f}", e.ratio_to_activation) == c.ratio);
    REQUIRE(e.times.size() == 4);
    for (std::size_t i = 0; i < 4; ++i) {
      CHECK(fmt::format("{:.1f}", e.times[i].dispatch_time_s * 1e6) == c.times_us[i]);
      CHECK(fmt::format("{:.1f}", e.times[i].combine_time_s * 1e6) == c.times_us[i]);
    }
  }
}

TEST_CASE("bounds: ep comm rejects bad input naming the field", "[bounds][ep][errors]") {
  struct Case { EpCommOptions options; std::string message; };
  std::vector<Case> cases = {
      {{0, 8, 7168, 2}, "error: tokens: expected an integer >= 1, got 0"},
      {{8192, 0, 7168, 2}, "error: top_k: expected an integer >= 1, got 0"},
      {{8192, 8, -1, 2}, "error: d_model: expected an integer >= 1, got -1"},
      {{8192, 8, 7168, 0}, "error: bytes: expected an integer >= 1, got 0"},
      {{8192, 4000000000000000000, 7168, 2},
       "error: top_k: too large: the per-token bytes would overflow a 64-bit count"},
      {{4000000000000000000, 8, 7168, 2},
       "error: tokens: too large: the dispatch + combine bytes would overflow a 64-bit count"},
  };
  for (const Case& c : cases) {
    CHECK_THROWS_WITH(ep_comm(c.options), c.message);
  }
}
