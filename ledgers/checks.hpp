// Input checks shared by the bounds ledgers: each failure names the
// command-line option that caused it (epsim::option_error, exit code 2).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

namespace epsim::ledgers {

// Throws InputError "<option>: expected an integer >= 1, got <value>" unless value >= 1.
void require_positive(std::int64_t value, const std::string& option);

// Throws InputError unless value is finite and > 0.
void require_positive(double value, const std::string& option);

// The product of `factors`, or InputError naming `option` when it would not
// fit in a signed 64-bit count (`what` says which count, e.g. "dispatch bytes").
std::int64_t checked_product(std::initializer_list<std::int64_t> factors,
                             const std::string& option, const std::string& what);

// Same as checked_product for a real-valued count (e.g. params x 26 bytes):
// InputError when it exceeds the largest signed 64-bit integer.
double checked_real(double value, const std::string& option, const std::string& what);

}  // namespace epsim::ledgers
