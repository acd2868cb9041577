// Number formatting shared by the bounds reports, matching the seeds'
// Python format specs so printed figures can be compared digit for digit.
#pragma once

#include <cstdint>
#include <string>

namespace epsim::ledgers {

// Python f"{value:.{decimals}f}".
std::string fixed(double value, int decimals);

// Python f"{value:,.{decimals}f}": thousands separated by commas.
std::string grouped(double value, int decimals);

// Python f"{value:,}" for an integer.
std::string grouped(std::int64_t value);

// Seed 001's human(): 1024-based units B, KB, MB, GB, TB with one decimal and
// thousands commas ("493.9 MB", "1,234.5 TB").
std::string human_1024(double bytes);

// Seed 002's time column: below 1 ms as "165.2 us", else "90.575 ms".
std::string duration_text(double time_s);

}  // namespace epsim::ledgers
