// The one memory limit every estimate is held against: what a run may
// allocate for its platform, traffic matrices and replay before epsim
// refuses it up front (docs/simulator.md, "Memory limit").
#pragma once

#include <string>

namespace epsim {

inline constexpr double kDefaultMemoryLimitGiB = 4;
inline constexpr double kBytesPerGiB = 1073741824.0;

// EPSIM_MEMORY_LIMIT_GIB when set (a positive number of GiB), else
// kDefaultMemoryLimitGiB; a malformed value is an InputError naming it.
double memory_limit_GiB();

// "above the limit of 4 GiB (EPSIM_MEMORY_LIMIT_GIB raises it)"
std::string memory_limit_clause();

}  // namespace epsim
