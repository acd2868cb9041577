// Locating the data folder and the presets in it.
#include "core/presets.hpp"

#include <cstdlib>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/toml_reader.hpp"

namespace epsim {

namespace fs = std::filesystem;

namespace {

constexpr const char* kDataDirHint = "set EPSIM_DATA_DIR to a folder holding platforms/ and workloads/presets/";

const char* kind_name(PresetKind kind) {
  switch (kind) {
    case PresetKind::kPlatform: return "platform";
    case PresetKind::kWorkload: return "workload";
    case PresetKind::kStack: return "stack";
  }
  return "?";
}

const char* kind_subdir(PresetKind kind) {
  switch (kind) {
    case PresetKind::kPlatform: return "platforms";
    case PresetKind::kWorkload: return "workloads/presets";
    case PresetKind::kStack: return "stacks";
  }
  return "?";
}

// `path` relative to the working directory when it lies inside it, else as is.
std::string display_path(const fs::path& path) {
  std::error_code ec;
  fs::path relative = fs::relative(path, fs::current_path(), ec);
  bool inside = !ec && !relative.empty() && *relative.begin() != "..";
  return inside ? relative.string() : path.string();
}

std::optional<fs::path> executable_path() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return std::nullopt;
  return exe;
}

bool is_inside(const fs::path& path, const fs::path& dir) {
  std::error_code ec;
  fs::path d = fs::weakly_canonical(dir, ec);
  if (ec) return false;
  fs::path relative = path.lexically_relative(d);
  return !relative.empty() && *relative.begin() != "..";
}

}  // namespace

std::string data_dir() {
  if (const char* dir = std::getenv("EPSIM_DATA_DIR")) return dir;
  const std::optional<fs::path> exe = executable_path();
  const fs::path installed =
      exe ? (exe->parent_path().parent_path() / "share" / "epsim").lexically_normal() : "<executable>/../share/epsim";
  if (exe && fs::is_directory(installed)) return installed.string();
  if (exe && is_inside(*exe, EPSIM_BUILD_TREE)) return EPSIM_SOURCE_TREE;
  throw InputError(SourceLocation{}, "",
                   fmt::format("no data folder with presets: EPSIM_DATA_DIR is not set and {} does not exist ({})",
                               installed.string(), kDataDirHint));
}

std::string preset_dir(PresetKind kind) { return (fs::path(data_dir()) / kind_subdir(kind)).string(); }

std::vector<std::string> preset_names(PresetKind kind) {
  const std::string dir = preset_dir(kind);
  std::vector<std::string> names = toml_stems_in(dir);
  if (names.empty()) {
    throw InputError(SourceLocation{}, "",
                     fmt::format("no {} presets (*.toml) in {}{}", kind_name(kind), display_path(dir),
                                 std::getenv("EPSIM_DATA_DIR") ? " (EPSIM_DATA_DIR)" : std::string("; ") + kDataDirHint));
  }
  return names;
}

std::string resolve_preset_file(PresetKind kind, const std::string& file_or_preset) {
  bool looks_like_path =
      file_or_preset.find('/') != std::string::npos || fs::path(file_or_preset).extension() == ".toml";
  if (looks_like_path || fs::exists(file_or_preset)) {
    if (!fs::exists(file_or_preset)) throw FileError(file_or_preset, "cannot open file");
    return file_or_preset;
  }
  const fs::path dir = preset_dir(kind);
  const fs::path preset = dir / (file_or_preset + ".toml");
  if (fs::exists(preset)) return display_path(preset);
  std::vector<std::string> names = preset_names(kind);
  std::string hint = closest_match(file_or_preset, names);
  throw FileError(file_or_preset,
                  fmt::format("no such {} file or preset{}, the presets in {} are {}", kind_name(kind),
                              hint.empty() ? "" : " (did you mean \"" + hint + "\"?)", display_path(dir),
                              fmt::join(names, ", ")));
}

}  // namespace epsim
