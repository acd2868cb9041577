// Unit strings -> SI doubles, and the errors for bad ones.
#include <catch2/catch.hpp>

#include "core/units.hpp"

using epsim::parse_quantity;
using epsim::Quantity;

TEST_CASE("unit strings convert to SI", "[units]") {
  struct Row {
    const char* text;
    Quantity kind;
    double si;
  };
  const Row rows[] = {
      {"56GBps", Quantity::kBandwidth, 56e9},
      {"56GB/s", Quantity::kBandwidth, 56e9},
      {"200Gbps", Quantity::kBandwidth, 25e9},
      {"400 Gbps", Quantity::kBandwidth, 50e9},
      {"1.6TBps", Quantity::kBandwidth, 1.6e12},
      {"1GiBps", Quantity::kBandwidth, 1073741824.0},
      {"1.5us", Quantity::kTime, 1.5e-6},
      {"2ms", Quantity::kTime, 2e-3},
      {"1s", Quantity::kTime, 1.0},
      {"500ns", Quantity::kTime, 5e-7},
      {"376Tf", Quantity::kFlopRate, 376e12},
      {"989.5TFLOPS", Quantity::kFlopRate, 989.5e12},
      {"1.2Pf", Quantity::kFlopRate, 1.2e15},
      {"64GiB", Quantity::kBytes, 64.0 * 1073741824.0},
      {"80GB", Quantity::kBytes, 80e9},
      {"1e3B", Quantity::kBytes, 1000.0},
  };
  for (const Row& r : rows) {
    INFO(r.text);
    CHECK(parse_quantity(r.text, r.kind) == Approx(r.si).epsilon(1e-15));
  }
}

TEST_CASE("bad unit strings are rejected with a reason", "[units]") {
  CHECK_THROWS_WITH(parse_quantity("56", Quantity::kBandwidth), Catch::Contains("missing unit"));
  CHECK_THROWS_WITH(parse_quantity("56GHz", Quantity::kBandwidth), Catch::Contains("unknown unit \"GHz\""));
  CHECK_THROWS_WITH(parse_quantity("fast", Quantity::kTime), Catch::Contains("expected a time"));
  CHECK_THROWS_WITH(parse_quantity("1.5us", Quantity::kBandwidth), Catch::Contains("unknown unit"));
  CHECK_THROWS_WITH(parse_quantity("1e400GBps", Quantity::kBandwidth), Catch::Contains("not a finite"));
}
