// Seed 002 (step_budget): every figure of its printed tables at the
// defaults, other parameter sets from the seed's README commands evaluated
// independently in python3 with the formulas of docs/bounds.md, bad input.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "ledgers/step_budget.hpp"

using namespace epsim::ledgers;

namespace {
// One row as the seed prints it: ops, bytes, memory, compute, bound, share.
using Row = std::vector<std::string>;

std::string time_text(double s) {
  return s < 1e-3 ? fmt::format("{:.1f} us", s * 1e6) : fmt::format("{:.3f} ms", s * 1e3);
}

Row row(const Phase& p) {
  return {fmt::format("{:.1f} GF", p.flops / 1e9), fmt::format("{:.2f} GB", p.bytes / 1e9),
          time_text(p.memory_time_s), time_text(p.compute_time_s), time_text(p.bound_s),
          fmt::format("{:.1f}%", p.share * 100)};
}

std::vector<Row> rows(const std::vector<Phase>& table) {
  std::vector<Row> out;
  for (const Phase& p : table) out.push_back(row(p));
  return out;
}

struct Case {
  StepBudgetOptions options;
  std::vector<Row> training;
  std::vector<Row> inference;
};

StepBudgetOptions with(void (*edit)(StepBudgetOptions&)) {
  StepBudgetOptions o;
  edit(o);
  return o;
}
}  // namespace

TEST_CASE("bounds: step budget reproduces seed 002's tables", "[bounds][budget]") {
  std::vector<Case> cases = {
      // Seed 002's README, default parameters.
      {{},
       {{"66056.6 GF", "28.45 GB", "6.320 ms", "90.575 ms", "90.575 ms", "27.9%"},
        {"132113.2 GF", "56.91 GB", "12.641 ms", "181.151 ms", "181.151 ms", "55.9%"},
        {"120.5 GF", "208.78 GB", "46.375 ms", "165.2 us", "46.375 ms", "14.3%"},
        {"0.0 GF", "28.11 GB", "6.243 ms", "0.0 us", "6.243 ms", "1.9%"}},
       {{"66056.6 GF", "28.45 GB", "6.320 ms", "90.575 ms", "90.575 ms", "96.6%"},
        {"16.1 GF", "14.50 GB", "3.220 ms", "22.1 us", "3.220 ms", "3.4%"}}},
      // python3 s2alt.py: --layers 80 --hidden 8192 --ffn 28672 --params 70e9 --world 64
      {with([](StepBudgetOptions& o) {
         o.layers = 80; o.hidden = 8192; o.ffn = 28672; o.params = 70e9; o.world = 64;
       }),
       {{"605160.9 GF", "209.38 GB", "46.508 ms", "829.783 ms", "829.783 ms", "28.1%"},
        {"1210321.8 GF", "418.76 GB", "93.016 ms", "1659.566 ms", "1659.566 ms", "56.2%"},
        {"1050.0 GF", "1820.00 GB", "404.265 ms", "1.440 ms", "404.265 ms", "13.7%"},
        {"0.0 GF", "275.62 GB", "61.223 ms", "0.0 us", "61.223 ms", "2.1%"}},
       {{"605160.9 GF", "209.38 GB", "46.508 ms", "829.783 ms", "829.783 ms", "96.4%"},
        {"147.6 GF", "138.24 GB", "30.707 ms", "202.4 us", "30.707 ms", "3.6%"}}},
      // python3 s2alt.py: --seq-len 32768
      {with([](StepBudgetOptions& o) { o.seq_len = 32768; }),
       {{"1025844.3 GF", "129.92 GB", "28.859 ms", "1406.615 ms", "1406.615 ms", "32.9%"},
        {"2051688.7 GF", "259.85 GB", "57.718 ms", "2813.230 ms", "2813.230 ms", "65.8%"},
        {"120.5 GF", "208.78 GB", "46.375 ms", "165.2 us", "46.375 ms", "1.1%"},
        {"0.0 GF", "28.11 GB", "6.243 ms", "0.0 us", "6.243 ms", "0.1%"}},
       {{"1025844.3 GF", "129.92 GB", "28.859 ms", "1406.615 ms", "1406.615 ms", "99.7%"},
        {"31.1 GF", "18.25 GB", "4.055 ms", "42.7 us", "4.055 ms", "0.3%"}}},
      // python3 s2alt.py: --peak-tflops 989.5 --bandwidth-gbps 4800
      {with([](StepBudgetOptions& o) { o.peak_tflops = 989.5; o.bandwidth_gbps = 4800; }),
       {{"66056.6 GF", "28.45 GB", "5.928 ms", "66.758 ms", "66.758 ms", "26.7%"},
        {"132113.2 GF", "56.91 GB", "11.856 ms", "133.515 ms", "133.515 ms", "53.5%"},
        {"120.5 GF", "208.78 GB", "43.496 ms", "121.7 us", "43.496 ms", "17.4%"},
        {"0.0 GF", "28.11 GB", "5.855 ms", "0.0 us", "5.855 ms", "2.3%"}},
       {{"66056.6 GF", "28.45 GB", "5.928 ms", "66.758 ms", "66.758 ms", "95.7%"},
        {"16.1 GF", "14.50 GB", "3.020 ms", "16.3 us", "3.020 ms", "4.3%"}}},
  };
  for (const Case& c : cases) {
    StepBudget b = step_budget(c.options);
    CHECK(rows(b.training) == c.training);
    CHECK(rows(b.inference) == c.inference);
  }
}

TEST_CASE("bounds: step budget weights and world size 1", "[bounds][budget]") {
  StepBudget b = step_budget({});
  // python3: 32*(2*4096**2 + 2*4096*1024 + 3*4096*14336)
  CHECK(b.layer_weight_params == 6979321856.0);
  StepBudgetOptions one;
  one.world = 1;
  CHECK(step_budget(one).training[3].bytes == 0.0);  // 2(N-1)/N = 0: nothing to all-reduce
}

TEST_CASE("bounds: step budget rejects bad input naming the field", "[bounds][budget][errors]") {
  struct Case { void (*edit)(StepBudgetOptions&); std::string message; };
  std::vector<Case> cases = {
      {[](StepBudgetOptions& o) { o.seq_len = 0; }, "error: seq_len: expected an integer >= 1, got 0"},
      {[](StepBudgetOptions& o) { o.layers = -2; }, "error: layers: expected an integer >= 1, got -2"},
      {[](StepBudgetOptions& o) { o.hidden = 0; }, "error: hidden: expected an integer >= 1, got 0"},
      {[](StepBudgetOptions& o) { o.ffn = 0; }, "error: ffn: expected an integer >= 1, got 0"},
      {[](StepBudgetOptions& o) { o.params = 0; }, "error: params: expected a finite number > 0, got 0"},
      {[](StepBudgetOptions& o) { o.world = 0; }, "error: world: expected an integer >= 1, got 0"},
      {[](StepBudgetOptions& o) { o.peak_tflops = -1; }, "error: peak_tflops: expected a finite number > 0, got -1"},
      {[](StepBudgetOptions& o) { o.bandwidth_gbps = 0; }, "error: bandwidth_gbps: expected a finite number > 0, got 0"},
      {[](StepBudgetOptions& o) { o.params = 1e300; }, "error: params: too large: the optimizer bytes would overflow a 64-bit count"},
      {[](StepBudgetOptions& o) { o.seq_len = 10000000; }, "error: seq_len: too large: the attention FLOPs would overflow a 64-bit count"},
      {[](StepBudgetOptions& o) { o.hidden = 4000000000; }, "error: seq_len: too large: the attention FLOPs would overflow a 64-bit count"},
      {[](StepBudgetOptions& o) { o.kv_heads = 4000000000000000; }, "error: kv_heads: too large: the KV cache bytes would overflow a 64-bit count"},
      {[](StepBudgetOptions& o) { o.head_dim = 0; }, "error: head_dim: expected an integer >= 1, got 0"},
      {[](StepBudgetOptions& o) { o.params = std::nan(""); }, "error: params: expected a finite number > 0, got nan"},
  };
  for (const Case& c : cases) {
    StepBudgetOptions o;
    c.edit(o);
    CHECK_THROWS_WITH(step_budget(o), c.message);
  }
}
