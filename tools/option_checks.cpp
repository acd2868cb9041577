// Validators that parse the option's text themselves, so that "abc", "1.5",
// "nan" and "inf" get the same one-line message as an out-of-range number.
#include "tools/option_checks.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>

#include <fmt/format.h>

namespace epsim::tools {

namespace {

std::optional<long long> parse_integer(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

CLI::Validator integer_in(long long min, long long max) {
  return CLI::Validator(
      [min, max](std::string& s) -> std::string {
        const std::optional<long long> v = parse_integer(s);
        if (v && *v >= min && *v <= max) return "";
        return fmt::format("expected an integer in [{}, {}], got {}", min, max, s);
      },
      fmt::format("INT in [{}, {}]", min, max));
}

CLI::Validator integer_at_least(long long min) {
  return CLI::Validator(
      [min](std::string& s) -> std::string {
        const std::optional<long long> v = parse_integer(s);
        if (v && *v >= min) return "";
        return fmt::format("expected an integer >= {}, got {}", min, s);
      },
      fmt::format("INT >= {}", min));
}

CLI::Validator positive_number() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        if (!s.empty() && end == s.c_str() + s.size() && std::isfinite(v) && v > 0) return "";
        return fmt::format("expected a finite number > 0, got {}", s);
      },
      "NUMBER > 0");
}

}  // namespace epsim::tools
