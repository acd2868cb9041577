// Finding cluster presets: a name such as "a2" means platforms/a2.toml in
// the data folder (core/presets.hpp); a path (anything with a '/' or ending
// in .toml) is used as is.
#pragma once

#include <string>
#include <vector>

namespace epsim::topology {

// Names of the cluster presets, sorted. Throws InputError when there are none.
std::vector<std::string> preset_names();

// The file for `file_or_preset`. Throws InputError ("no such platform file or
// preset", with a "did you mean" and the searched folder) when it names
// neither a file nor a preset.
std::string resolve_platform_file(const std::string& file_or_preset);

}  // namespace epsim::topology
