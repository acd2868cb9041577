// Validators that parse the option's text themselves, so that "abc", "1.5",
// "nan" and "inf" get the same one-line message as an out-of-range number.
#include "tools/option_checks.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

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

// The text on one line: control characters as \n, \t or \xNN.
std::string escaped(const std::string& s) {
  std::string out;
  for (const unsigned char c : s) {
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
    else out += static_cast<char>(c);
  }
  return out;
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

namespace {

bool is_utf8(const std::string& s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    int follow = 0;
    unsigned min = 0;
    unsigned code = 0;
    if (c < 0x80) { ++i; continue; }
    if ((c & 0xE0) == 0xC0) { follow = 1; code = c & 0x1F; min = 0x80; }
    else if ((c & 0xF0) == 0xE0) { follow = 2; code = c & 0x0F; min = 0x800; }
    else if ((c & 0xF8) == 0xF0) { follow = 3; code = c & 0x07; min = 0x10000; }
    else return false;
    if (i + static_cast<std::size_t>(follow) >= s.size()) return false;
    for (int k = 1; k <= follow; ++k) {
      const unsigned char f = static_cast<unsigned char>(s[i + k]);
      if ((f & 0xC0) != 0x80) return false;
      code = (code << 6) | (f & 0x3F);
    }
    if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return false;
    i += static_cast<std::size_t>(follow) + 1;
  }
  return true;
}

// Bytes above 0x7f as \xNN too: the text of a value that is not UTF-8.
std::string escaped_bytes(const std::string& s) {
  std::string out;
  for (const unsigned char c : s) {
    if (c >= 0x80) out += fmt::format("\\x{:02x}", c);
    else out += escaped(std::string(1, static_cast<char>(c)));
  }
  return out;
}

}  // namespace

std::string utf8_problem(const std::string& value) {
  if (is_utf8(value)) return "";
  return fmt::format("\"{}\" is not UTF-8 text (reports are UTF-8 JSON); rename the file or give it another way",
                     escaped_bytes(value));
}

CLI::Validator file_name() {
  return CLI::Validator(
      [](std::string& s) -> std::string { return s.empty() ? "expected a file name, got \"\"" : ""; }, "FILE");
}

namespace {

// Digits only, between `min` and `max` of them.
bool digits(const std::string& s, std::size_t min, std::size_t max) {
  return s.size() >= min && s.size() <= max &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

// M[:S[:S]] or D-H[:M[:S]]: the first field any number of digits, the others one or two.
bool is_slurm_time(const std::string& s) {
  std::string rest = s;
  const std::size_t dash = s.find('-');
  if (dash != std::string::npos) {
    if (!digits(s.substr(0, dash), 1, 9)) return false;
    rest = s.substr(dash + 1);
  }
  std::vector<std::string> fields;
  std::size_t start = 0;
  for (std::size_t colon; (colon = rest.find(':', start)) != std::string::npos; start = colon + 1)
    fields.push_back(rest.substr(start, colon - start));
  fields.push_back(rest.substr(start));
  if (fields.size() > 3) return false;
  if (!digits(fields[0], 1, dash == std::string::npos ? 9 : 2)) return false;
  for (std::size_t i = 1; i < fields.size(); ++i)
    if (!digits(fields[i], 1, 2)) return false;
  return true;
}

}  // namespace

CLI::Validator slurm_name() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        const bool ok = !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) {
          return std::isalnum(c) || c == '.' || c == '_' || c == '-';
        });
        if (ok) return "";
        return fmt::format("expected a Slurm name (letters, digits, '.', '_', '-'), got \"{}\"", escaped(s));
      },
      "NAME");
}

CLI::Validator slurm_time() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        // sbatch --time: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S (std::regex is avoided:
        // GCC 12 warns inside it under the sanitizers).
        if (is_slurm_time(s)) return "";
        return fmt::format("expected a Slurm time (MINUTES, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS), got \"{}\"",
                           escaped(s));
      },
      "TIME");
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
