// The values a real machine can have, per physical quantity: the one table
// every input boundary (cluster TOML and --set, platform XML, measurement
// files, command-line options) checks against, so that a typo such as
// "1e-320GBps" or an efficiency of 1e-300 is an input error rather than an
// "inf s" report or a SimGrid deadlock. docs/platform.md ("Physical
// ranges") lists the same table.
#pragma once

#include <string>

#include "core/units.hpp"

namespace epsim {

struct PhysicalRange {
  double min;   // inclusive
  double max;   // inclusive
  const char* unit;  // SI unit the bounds are in, for messages ("" for a share)
};

// What a value measures. The first four are the kinds of unit strings
// (units.hpp); the others are read as plain numbers.
enum class Physical {
  kBandwidth,     // B/s: 1 kB/s .. 1 PB/s
  kTime,          // s: latencies and measured kernel times, 0 .. 1 s
  kFlopRate,      // FLOP/s: 1 MFLOP/s .. 1 EFLOP/s
  kMemoryBytes,   // B: memory capacities and buffers, 1 MB .. 1 PB
  kMessageBytes,  // B: bytes one rank sends in one collective, 1 B .. 1 PB
  kEfficiency,    // a share of a peak or line rate (every *_efficiency and [compute] key): 0.001 .. 1
};

PhysicalRange physical_range(Physical kind);

// The range a unit string of `kind` is checked against (kBytes: kMemoryBytes).
Physical physical_of(Quantity kind);
inline PhysicalRange physical_range(Quantity kind) { return physical_range(physical_of(kind)); }

// "" when `value` (SI) is finite and inside the range of `kind`, else a
// one-line reason such as "1e-311 B/s is outside the physical range
// [1000, 1e+15] B/s".
std::string physical_range_problem(Physical kind, double value);
inline std::string physical_range_problem(Quantity kind, double value) {
  return physical_range_problem(physical_of(kind), value);
}

// "[0.001, 1]" or "[1, 1e+15] B": the range as messages write it.
std::string describe_range(Physical kind);

}  // namespace epsim
