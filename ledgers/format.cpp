// Number formatting shared by the bounds reports.
#include "ledgers/format.hpp"

#include <cmath>

#include <fmt/format.h>

namespace epsim::ledgers {

namespace {
// Inserts a comma every three digits of the integer part of a plain
// "-1234567.89" string.
std::string insert_commas(const std::string& plain) {
  std::size_t begin = (!plain.empty() && plain[0] == '-') ? 1 : 0;
  std::size_t end = plain.find('.');
  if (end == std::string::npos) end = plain.size();
  std::string out = plain.substr(0, begin);
  for (std::size_t i = begin; i < end; ++i) {
    out += plain[i];
    std::size_t left = end - i - 1;
    if (left > 0 && left % 3 == 0) out += ',';
  }
  return out + plain.substr(end);
}
}  // namespace

std::string fixed(double value, int decimals) { return fmt::format("{:.{}f}", value, decimals); }

std::string grouped(double value, int decimals) { return insert_commas(fixed(value, decimals)); }

std::string grouped(std::int64_t value) { return insert_commas(fmt::format("{}", value)); }

std::string human_1024(double bytes) {
  static const char* const kUnits[] = {"B", "KB", "MB", "GB", "TB"};
  double n = bytes;
  for (const char* unit : kUnits) {
    if (std::fabs(n) < 1024.0 || std::string(unit) == "TB") return grouped(n, 1) + " " + unit;
    n /= 1024.0;
  }
  return grouped(n, 1) + " TB";  // not reached: the loop returns at "TB"
}

std::string duration_text(double time_s) {
  if (time_s < 1e-3) return fixed(time_s * 1e6, 1) + " us";
  return fixed(time_s * 1e3, 3) + " ms";
}

}  // namespace epsim::ledgers
