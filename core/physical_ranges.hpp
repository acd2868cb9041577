// The values a real machine can have, per physical quantity: the one table
// every input boundary (cluster TOML, platform XML) checks against, so that
// a typo such as "1e-320GBps" is an input error rather than an "inf s"
// report. docs/platform.md ("Physical ranges") lists the same table.
#pragma once

#include <optional>
#include <string>

#include "core/units.hpp"

namespace epsim {

struct PhysicalRange {
  double min;   // inclusive
  double max;   // inclusive
  const char* unit;  // SI unit the bounds are in, for messages
};

// Bandwidth 1 kB/s .. 1 PB/s; time (latencies) 0 .. 1 s; FLOP rate
// 1 MFLOP/s .. 1 EFLOP/s; bytes (memory capacity) 1 MB .. 1 PB.
PhysicalRange physical_range(Quantity kind);

// "" when `value` (SI) is finite and inside the range of `kind`, else a
// one-line reason such as "1e-311 B/s is outside the physical range
// [1e+03, 1e+15] B/s".
std::string physical_range_problem(Quantity kind, double value);

}  // namespace epsim
