// Input checks shared by the bounds ledgers.
#include "ledgers/checks.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/checked_math.hpp"
#include "core/error.hpp"

namespace epsim::ledgers {

void require_positive(std::int64_t value, const std::string& key) {
  if (value < 1) throw parameter_error(key, fmt::format("expected an integer >= 1, got {}", value));
}

void require_positive(double value, const std::string& key) {
  if (!std::isfinite(value) || value <= 0.0) {
    throw parameter_error(key, fmt::format("expected a finite number > 0, got {}", value));
  }
}

std::int64_t checked_product(std::initializer_list<std::int64_t> factors,
                             const std::string& key, const std::string& what) {
  std::int64_t product = 1;
  for (std::int64_t f : factors) {
    std::optional<std::int64_t> next = checked_mul(product, f);
    if (!next) {
      throw parameter_error(key, fmt::format("too large: the {} would overflow a 64-bit count", what));
    }
    product = *next;
  }
  return product;
}

double checked_real(double value, const std::string& key, const std::string& what) {
  // 2^63 as a double; a count at or above it has no int64 equivalent.
  constexpr double kLimit = 9223372036854775808.0;
  if (!std::isfinite(value) || value >= kLimit) {
    throw parameter_error(key, fmt::format("too large: the {} would overflow a 64-bit count", what));
  }
  return value;
}

}  // namespace epsim::ledgers
