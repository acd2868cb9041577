// The physical-range table (see physical_ranges.hpp for why it exists).
#include "core/physical_ranges.hpp"

#include <cmath>

#include <fmt/format.h>

namespace epsim {

PhysicalRange physical_range(Physical kind) {
  switch (kind) {
    case Physical::kBandwidth: return {1e3, 1e15, "B/s"};
    case Physical::kTime: return {0, 1, "s"};
    case Physical::kFlopRate: return {1e6, 1e18, "FLOP/s"};
    case Physical::kMemoryBytes: return {1e6, 1e15, "B"};
    case Physical::kMessageBytes: return {1, 1e15, "B"};
    // Below 0.1 % of a peak no kernel or link is worth modelling, and the
    // rescaled amounts (FLOPs / efficiency) stay far from SimGrid's precision.
    case Physical::kEfficiency: return {1e-3, 1, ""};
  }
  return {0, 0, ""};
}

Physical physical_of(Quantity kind) {
  switch (kind) {
    case Quantity::kBandwidth: return Physical::kBandwidth;
    case Quantity::kTime: return Physical::kTime;
    case Quantity::kFlopRate: return Physical::kFlopRate;
    case Quantity::kBytes: return Physical::kMemoryBytes;
  }
  return Physical::kBandwidth;
}

std::string describe_range(Physical kind) {
  const PhysicalRange r = physical_range(kind);
  return fmt::format("[{:g}, {:g}]{}{}", r.min, r.max, *r.unit ? " " : "", r.unit);
}

std::string physical_range_problem(Physical kind, double value) {
  const PhysicalRange r = physical_range(kind);
  if (std::isfinite(value) && value >= r.min && value <= r.max) return "";
  return fmt::format("{:g}{}{} is outside the physical range {}", value, *r.unit ? " " : "", r.unit,
                     describe_range(kind));
}

}  // namespace epsim
