// Validators that parse the option's text themselves, so that "abc", "1.5",
// "nan" and "inf" get the same one-line message as an out-of-range number.
#include "tools/option_checks.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "core/units.hpp"

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

// "a, b or c"
std::string words(const std::vector<std::string>& allowed) {
  std::string out;
  for (std::size_t i = 0; i < allowed.size(); ++i)
    out += (i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ") + allowed[i];
  return out;
}

// The items of one list value, empty ones included.
std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    items.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return items;
    start = comma + 1;
  }
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

CLI::Validator number_in(double min, double max) {
  return CLI::Validator(
      [min, max](std::string& s) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        if (!s.empty() && end == s.c_str() + s.size() && std::isfinite(v) && v >= min && v <= max) return "";
        return fmt::format("expected a number in [{:g}, {:g}], got {}", min, max, s);
      },
      fmt::format("NUMBER in [{:g}, {:g}]", min, max));
}

CLI::Validator physical_number(Physical kind, double unit_si) {
  const PhysicalRange r = physical_range(kind);
  return CLI::Validator(
      [kind, unit_si, r](std::string& s) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        if (!s.empty() && end == s.c_str() + s.size() && physical_range_problem(kind, v * unit_si).empty()) return "";
        return fmt::format("expected a number in [{:g}, {:g}] (the physical range {}), got {}", r.min / unit_si,
                           r.max / unit_si, describe_range(kind), s);
      },
      fmt::format("NUMBER in [{:g}, {:g}]", r.min / unit_si, r.max / unit_si));
}

double parse_size(const std::string& text) { return parse_quantity(text, Quantity::kBytes); }

CLI::Validator size_in(Physical kind) {
  return CLI::Validator(
      [kind](std::string& s) -> std::string {
        double bytes = 0;
        try {
          bytes = parse_size(s);
        } catch (const std::invalid_argument& e) {
          return e.what();
        }
        const std::string problem = physical_range_problem(kind, bytes);
        return problem.empty() ? "" : fmt::format("{}: {}", s, problem);
      },
      "SIZE");
}

CLI::Validator one_of(std::vector<std::string> allowed) {
  const std::string names = words(allowed);
  return CLI::Validator(
      [allowed = std::move(allowed), names](std::string& s) -> std::string {
        for (const std::string& a : allowed)
          if (s == a) return "";
        return fmt::format("expected {}, got \"{}\"", names, s);
      },
      names);
}

CLI::Validator list_of(CLI::Validator item) {
  return CLI::Validator(
      [item](std::string& s) -> std::string {
        const std::vector<std::string> items = split(s);
        for (std::size_t i = 0; i < items.size(); ++i) {
          if (items[i].empty())
            return fmt::format("item {} of \"{}\" is empty (items are separated by single commas)", i + 1, s);
          std::string text = items[i];
          const std::string problem = item(text);
          if (!problem.empty()) return problem;
        }
        return "";
      },
      "LIST");
}

std::vector<std::string> list_items(const std::vector<std::string>& values) {
  std::vector<std::string> items;
  for (const std::string& v : values)
    for (std::string& item : split(v)) items.push_back(std::move(item));
  return items;
}

}  // namespace epsim::tools
