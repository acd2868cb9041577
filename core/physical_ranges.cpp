// The physical-range table (see physical_ranges.hpp for why it exists).
#include "core/physical_ranges.hpp"

#include <cmath>

#include <fmt/format.h>

namespace epsim {

PhysicalRange physical_range(Quantity kind) {
  switch (kind) {
    case Quantity::kBandwidth: return {1e3, 1e15, "B/s"};
    case Quantity::kTime: return {0, 1, "s"};
    case Quantity::kFlopRate: return {1e6, 1e18, "FLOP/s"};
    case Quantity::kBytes: return {1e6, 1e15, "B"};
  }
  return {0, 0, ""};
}

std::string physical_range_problem(Quantity kind, double value) {
  const PhysicalRange r = physical_range(kind);
  if (std::isfinite(value) && value >= r.min && value <= r.max) return "";
  return fmt::format("{:g} {} is outside the physical range [{:g}, {:g}] {}", value, r.unit, r.min, r.max,
                     r.unit);
}

}  // namespace epsim
