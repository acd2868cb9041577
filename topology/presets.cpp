// Cluster presets through the one preset lookup in core/.
#include "topology/presets.hpp"

#include "core/presets.hpp"

namespace epsim::topology {

std::vector<std::string> preset_names() { return epsim::preset_names(PresetKind::kPlatform); }

std::string resolve_platform_file(const std::string& file_or_preset) {
  return resolve_preset_file(PresetKind::kPlatform, file_or_preset);
}

}  // namespace epsim::topology
