#include "core/memory_limit.hpp"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "core/error.hpp"

namespace epsim {

double memory_limit_GiB() {
  const char* text = std::getenv("EPSIM_MEMORY_LIMIT_GIB");
  if (text == nullptr) return kDefaultMemoryLimitGiB;
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(v > 0) || !std::isfinite(v))
    throw InputError({"EPSIM_MEMORY_LIMIT_GIB", 0, 0}, "",
                     fmt::format("expected a positive number of GiB, got \"{}\"", text));
  return v;
}

std::string memory_limit_clause() {
  return fmt::format("above the limit of {:g} GiB (EPSIM_MEMORY_LIMIT_GIB raises it)", memory_limit_GiB());
}

}  // namespace epsim
