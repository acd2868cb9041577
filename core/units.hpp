// Unit strings ("56GBps", "200Gbps", "1.5us", "376Tf", "64GiB") exist only
// at the input boundary; everything inside epsim is an SI double.
#pragma once

#include <string>
#include <string_view>

namespace epsim {

enum class Quantity {
  kBandwidth,  // -> bytes per second. "Bps" counts bytes, "bps" bits (SimGrid's convention); "GB/s" = "GBps".
  kTime,       // -> seconds. "s", "ms", "us", "ns", "ps".
  kFlopRate,   // -> FLOP per second. "Tf", "TFLOPS", "Tflops", "f".
  kBytes,      // -> bytes. "B", "KB".."PB" (powers of 1000), "KiB".."PiB" (powers of 1024).
};

// What the user should write, for error messages: "a bandwidth such as \"56GBps\" or \"200Gbps\"".
std::string describe(Quantity kind);

// Parses "<number><unit>" (one optional space between). Throws
// std::invalid_argument with a one-line reason (no location: callers add it)
// when the unit is missing or not of `kind`, or the number is not finite.
double parse_quantity(std::string_view text, Quantity kind);

}  // namespace epsim
