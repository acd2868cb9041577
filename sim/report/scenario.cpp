// The version string, from the CMake project version (EPSIM_VERSION).
#include "sim/report/scenario.hpp"

namespace epsim::sim {

const char* epsim_version() { return EPSIM_VERSION; }

}  // namespace epsim::sim
