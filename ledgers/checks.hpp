// Input checks shared by the bounds ledgers: each failure names the options
// field that caused it by its key ("tokens", "dispatch_bytes"; an
// epsim::parameter_error, exit code 2); tools/ map keys to options.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

namespace epsim::ledgers {

// Throws InputError "<key>: expected an integer >= 1, got <value>" unless value >= 1.
void require_positive(std::int64_t value, const std::string& key);

// Throws InputError unless value is finite and > 0.
void require_positive(double value, const std::string& key);

// The product of `factors`, or InputError naming `key` when it would not
// fit in a signed 64-bit count (`what` says which count, e.g. "dispatch bytes").
std::int64_t checked_product(std::initializer_list<std::int64_t> factors,
                             const std::string& key, const std::string& what);

// Same as checked_product for a real-valued count (e.g. params x 26 bytes):
// InputError when it exceeds the largest signed 64-bit integer.
double checked_real(double value, const std::string& key, const std::string& what);

}  // namespace epsim::ledgers
