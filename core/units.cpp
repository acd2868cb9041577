// Parsing of unit strings into SI doubles.
#include "core/units.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace epsim {

namespace {

// Decimal (k, M, G, T, P) and binary (Ki, Mi, Gi, Ti, Pi) prefixes; "K" is
// accepted for kilo because "KB" is common. Returns the prefix length consumed.
std::size_t parse_prefix(std::string_view unit, double& scale) {
  struct Prefix {
    const char* text;
    double scale;
  };
  static const Prefix prefixes[] = {
      {"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0},
      {"Ti", 1099511627776.0}, {"Pi", 1125899906842624.0},
      {"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15},
  };
  for (const Prefix& p : prefixes) {
    std::string_view t(p.text);
    if (unit.size() > t.size() && unit.substr(0, t.size()) == t) {
      scale = p.scale;
      return t.size();
    }
  }
  scale = 1.0;
  return 0;
}

bool parse_bandwidth_unit(std::string_view unit, double& scale) {
  std::size_t n = parse_prefix(unit, scale);
  std::string_view base = unit.substr(n);
  if (base == "Bps" || base == "B/s") return true;
  if (base == "bps" || base == "b/s") {
    scale /= 8.0;
    return true;
  }
  return false;
}

bool parse_time_unit(std::string_view unit, double& scale) {
  if (unit == "s") scale = 1.0;
  else if (unit == "ms") scale = 1e-3;
  else if (unit == "us") scale = 1e-6;
  else if (unit == "ns") scale = 1e-9;
  else if (unit == "ps") scale = 1e-12;
  else return false;
  return true;
}

bool parse_flop_rate_unit(std::string_view unit, double& scale) {
  std::size_t n = parse_prefix(unit, scale);
  std::string_view base = unit.substr(n);
  return base == "f" || base == "flops" || base == "FLOPS" || base == "F";
}

bool parse_bytes_unit(std::string_view unit, double& scale) {
  std::size_t n = parse_prefix(unit, scale);
  return unit.substr(n) == "B";
}

}  // namespace

std::string describe(Quantity kind) {
  switch (kind) {
    case Quantity::kBandwidth: return "a bandwidth such as \"56GBps\" (bytes/s) or \"200Gbps\" (bits/s)";
    case Quantity::kTime: return "a time such as \"1.5us\", \"2ms\" or \"1s\"";
    case Quantity::kFlopRate: return "a FLOP rate such as \"376Tf\" or \"989TFLOPS\"";
    case Quantity::kBytes: return "a size such as \"64GiB\" or \"80GB\"";
  }
  return "a quantity";
}

double parse_quantity(std::string_view text, Quantity kind) {
  std::string s(text);
  const char* begin = s.c_str();
  char* end = nullptr;
  double value = std::strtod(begin, &end);
  if (end == begin) {
    throw std::invalid_argument("expected " + describe(kind) + ", got \"" + s + "\"");
  }
  std::string_view unit(end);
  if (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  if (unit.empty()) {
    throw std::invalid_argument("missing unit in \"" + s + "\": expected " + describe(kind));
  }
  double scale = 1.0;
  bool ok = false;
  switch (kind) {
    case Quantity::kBandwidth: ok = parse_bandwidth_unit(unit, scale); break;
    case Quantity::kTime: ok = parse_time_unit(unit, scale); break;
    case Quantity::kFlopRate: ok = parse_flop_rate_unit(unit, scale); break;
    case Quantity::kBytes: ok = parse_bytes_unit(unit, scale); break;
  }
  if (!ok) {
    throw std::invalid_argument("unknown unit \"" + std::string(unit) + "\" in \"" + s +
                                "\": expected " + describe(kind));
  }
  double si = value * scale;
  if (!std::isfinite(si)) {
    throw std::invalid_argument("\"" + s + "\" is not a finite number");
  }
  return si;
}

}  // namespace epsim
