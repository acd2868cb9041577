// Finding cluster presets: a name such as "a2" means platforms/a2.toml; a
// path (anything with a '/' or ending in .toml) is used as is.
#pragma once

#include <string>
#include <vector>

namespace epsim::topology {

// The directory holding the presets (EPSIM_PLATFORMS_DIR overrides the
// compiled-in source path, for installed binaries).
std::string platforms_dir();

// Names of the presets in platforms_dir(), sorted.
std::vector<std::string> preset_names();

// The file for `file_or_preset`. Throws InputError ("unknown preset", with a
// "did you mean") when it names neither a file nor a preset.
std::string resolve_platform_file(const std::string& file_or_preset);

}  // namespace epsim::topology
