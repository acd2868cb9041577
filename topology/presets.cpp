// Locating presets by name in platforms/.
#include "topology/presets.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "core/error.hpp"
#include "core/toml_reader.hpp"

namespace epsim::topology {

namespace fs = std::filesystem;

std::string platforms_dir() {
  if (const char* dir = std::getenv("EPSIM_PLATFORMS_DIR")) return dir;
  return EPSIM_PLATFORMS_DIR;
}

std::vector<std::string> preset_names() {
  return toml_stems_in(platforms_dir());
}

std::string resolve_platform_file(const std::string& file_or_preset) {
  bool looks_like_path =
      file_or_preset.find('/') != std::string::npos || fs::path(file_or_preset).extension() == ".toml";
  if (looks_like_path || fs::exists(file_or_preset)) {
    if (!fs::exists(file_or_preset)) {
      throw InputError(SourceLocation{file_or_preset}, "", "cannot open file");
    }
    return file_or_preset;
  }
  fs::path preset = fs::path(platforms_dir()) / (file_or_preset + ".toml");
  if (fs::exists(preset)) {
    // Messages read "platforms/a2.toml:14:8: ..." when run from the project.
    std::error_code ec;
    fs::path relative = fs::relative(preset, fs::current_path(), ec);
    bool inside = !ec && !relative.empty() && *relative.begin() != "..";
    return inside ? relative.string() : preset.string();
  }
  std::vector<std::string> names = preset_names();
  std::string hint = closest_match(file_or_preset, names);
  std::string known;
  for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
  throw InputError(SourceLocation{"command line"}, "platform",
                   "unknown preset \"" + file_or_preset + "\"" +
                       (hint.empty() ? "" : " (did you mean \"" + hint + "\"?)") + "; presets: " + known);
}

}  // namespace epsim::topology
