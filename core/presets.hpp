// Finding the bundled presets, for every kind in one place. The data folder
// holds platforms/ (cluster presets), workloads/presets/ (workload
// presets) and stacks/ (software stacks), the same layout as the source tree, so a source checkout is
// itself a data folder.
#pragma once

#include <string>
#include <vector>

namespace epsim {

enum class PresetKind { kPlatform, kWorkload, kStack };

// The data folder, the first of:
//   1. $EPSIM_DATA_DIR, when set (a folder holding platforms/ and workloads/presets/);
//   2. <executable>/../share/epsim, when it exists (an installed copy);
//   3. the source tree, when the executable sits in the build tree it was
//      built in (so a copy moved elsewhere never reads a stale checkout).
// Throws InputError naming what was searched when none applies.
std::string data_dir();

// The folder holding presets of `kind` inside data_dir().
std::string preset_dir(PresetKind kind);

// The preset names of `kind` (stems of *.toml), sorted. Throws InputError
// naming the searched folder when it holds none.
std::vector<std::string> preset_names(PresetKind kind);

// The file for `file_or_preset`: an existing file, or a path-looking name
// (with a '/' or ending in .toml), is used as is; otherwise it names a preset,
// returned relative to the working directory when it lies inside it (so
// messages read "platforms/a2.toml:14:8: ..." from the project root).
// Throws FileError (core/input_file.hpp) for a missing file, or an unknown preset (with a
// "did you mean" and the searched folder).
std::string resolve_preset_file(PresetKind kind, const std::string& file_or_preset);

}  // namespace epsim
