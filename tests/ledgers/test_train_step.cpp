// Seed 000 (train_step_budget): every number its README prints, a second
// parameter set computed independently in python3, and bad input.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "ledgers/report.hpp"
#include "ledgers/train_step.hpp"

using namespace epsim::ledgers;

namespace {
// The figures of one parameter set, formatted to the seed's printed precision.
struct Expected {
  TrainStepOptions options;
  std::string dispatch_payload, dispatch_kb, combine_payload, combine_kb;
  std::vector<std::string> distinct;  // EP 8..128, .2f
  std::vector<std::string> ratio;     // EP 8..128, .1f %
  std::string growth;                 // .0f %
  std::vector<std::string> totals;    // EP8 d GB, d us, c GB, c us, then EP128
  std::string flops_e, tflop, intensity;
};

std::string gb(double bytes) { return fmt::format("{:.3f}", bytes / 1e9); }
std::string us(double s) { return fmt::format("{:.0f}", s * 1e6); }
}  // namespace

TEST_CASE("bounds: train step reproduces seed 000's five sections", "[bounds][train]") {
  std::vector<Expected> cases = {
      // Seed 000's README output, default options.
      {{},
       "43008", "42.0", "86040", "84.0",
       {"4.41", "5.14", "5.55", "5.77", "5.88"},
       {"73.5", "85.6", "92.5", "96.2", "98.1"},
       "33",
       {"0.518", "1381", "1.036", "2986", "0.691", "2159", "1.382", "4973"},
       "8.659e+12", "8.66", "5957.8"},
      // python3 /tmp s0alt.py: the same formulas (docs/bounds.md) evaluated for
      // T=8192, d=4096, k=8, experts=128, ffn=1408 at the same bandwidths.
      {{8192, 4096, 8, 128, 1408, 1, 2, 128},
       "32768", "32.0", "65568", "64.0",
       {"5.25", "6.45", "7.18", "7.58", "7.78"},
       {"65.6", "80.7", "89.7", "94.7", "97.3"},
       "48",
       {"0.176", "470", "0.352", "1016", "0.261", "816", "0.522", "1880"},
       "2.268e+12", "2.27", "4092.1"},
  };
  for (const Expected& e : cases) {
    TrainStep s = train_step(e.options);
    CHECK(std::to_string(s.dispatch_payload_bytes) == e.dispatch_payload);
    CHECK(fmt::format("{:.1f}", s.dispatch_payload_bytes / 1024.0) == e.dispatch_kb);
    CHECK(std::to_string(s.combine_payload_bytes) == e.combine_payload);
    CHECK(fmt::format("{:.1f}", s.combine_payload_bytes / 1024.0) == e.combine_kb);
    REQUIRE(s.dedup.size() == 5);
    for (std::size_t i = 0; i < 5; ++i) {
      CHECK(fmt::format("{:.2f}", s.dedup[i].distinct_ranks) == e.distinct[i]);
      CHECK(fmt::format("{:.1f}", s.dedup[i].ratio_to_k * 100) == e.ratio[i]);
    }
    CHECK(fmt::format("{:.0f}", s.growth_8_to_128 * 100) == e.growth);
    REQUIRE(s.totals.size() == 2);
    std::vector<std::string> totals;
    for (const RankTotalRow& r : s.totals) {
      totals.insert(totals.end(), {gb(r.dispatch_bytes), us(r.dispatch_time_s),
                                   gb(r.combine_bytes), us(r.combine_time_s)});
    }
    CHECK(totals == e.totals);
    CHECK(fmt::format("{:.3e}", static_cast<double>(s.gemm_flops)) == e.flops_e);
    CHECK(fmt::format("{:.2f}", s.gemm_flops / 1e12) == e.tflop);
    CHECK(fmt::format("{:.1f}", s.intensity_flop_per_byte) == e.intensity);
  }
}

TEST_CASE("bounds: train step derived constants reproduce 247 / 124 and 9.4", "[bounds][train]") {
  TrainStep s = train_step({});
  CHECK(fmt::format("{:.0f}", s.balance_fp8_flop_per_byte) == "247");
  CHECK(fmt::format("{:.0f}", s.balance_bf16_flop_per_byte) == "124");
  CHECK(fmt::format("{:.1f}", s.onchip_over_crosscard) == "9.4");
  // python3: 2*(16384*6)*7168*2048*3 and 2*98304*7168 + 3*7168*2048
  CHECK(s.gemm_flops == 8658654068736);
  CHECK(s.gemm_bytes == 1453326336);
}

TEST_CASE("bounds: train step text carries the seed's lines", "[bounds][train]") {
  std::string text = render_text(train_step({}));
  for (const char* piece : {"dispatch 6*7168*1 = 43008 B = 42.0 KB", "combine 6*7168*2 + k*4 = 86040 B = 84.0 KB",
                            "EP8 -> EP128: cross-device bytes grow 33% (4.41 -> 5.88)",
                            "0.518 GB / 1381 us", "1.036 GB / 2986 us", "0.691 GB / 2159 us",
                            "1.382 GB / 4973 us", "total 8.659e+12 FLOP = 8.66 TFLOP",
                            "arithmetic intensity 5957.8 FLOP/byte", "balance point fp8: 247 / bf16: 124 FLOP/byte",
                            "3500 / 374 ≈ 9.4"}) {
    INFO(piece);
    CHECK(text.find(piece) != std::string::npos);
  }
}

TEST_CASE("bounds: train step rejects bad input naming the field", "[bounds][train][errors]") {
  struct Case { TrainStepOptions options; std::string message; };
  std::vector<Case> cases = {
      {{0, 7168, 6, 256, 2048, 1, 2, 128}, "error: tokens: expected an integer >= 1, got 0"},
      {{16384, -7, 6, 256, 2048, 1, 2, 128}, "error: hidden: expected an integer >= 1, got -7"},
      {{16384, 7168, 6, 256, 0, 1, 2, 128}, "error: ffn: expected an integer >= 1, got 0"},
      {{16384, 7168, 6, 256, 2048, 0, 2, 128}, "error: dispatch_bytes: expected an integer >= 1, got 0"},
      {{16384, 7168, 6, 256, 2048, 1, 0, 128}, "error: combine_bytes: expected an integer >= 1, got 0"},
      {{16384, 7168, 6, 256, 2048, 1, 2, 0}, "error: expert_align: expected an integer >= 1, got 0"},
      {{16384, 7168, 257, 256, 2048, 1, 2, 128}, "error: topk: must be <= experts (256), got 257"},
      {{16384, 7168, 6, 100, 2048, 1, 2, 128},
       "error: experts: must be divisible by every EP size of the table (8..128), got 100 (not divisible by 8)"},
      {{4000000000000000000, 7168, 6, 256, 2048, 1, 2, 128},
       "error: tokens: too large: the GEMM rows T x k would overflow a 64-bit count"},
      {{1000000000000000, 7168, 6, 256, 2048, 1, 2, 128},
       "error: tokens: too large: the per-rank bytes would overflow a 64-bit count"},
      {{16384, 7168, 6, 256, 1000000000000, 1, 2, 128},
       "error: ffn: too large: the GEMM FLOPs would overflow a 64-bit count"},
  };
  for (const Case& c : cases) {
    CHECK_THROWS_WITH(train_step(c.options), c.message);
  }
}
