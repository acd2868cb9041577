// A TOML input may start from another: `base = "deepseek-v3"` reads that
// preset (or a file, by a path relative to this one) first and lays this
// file's keys over it: tables merge key by key, any other value replaces
// the base's. So a what-if says only what it changes. Every value keeps
// the file:line:col it was written at, for errors.
#pragma once

#include <string>

#include <toml++/toml.h>

#include "core/presets.hpp"

namespace epsim {

// load_toml_file(path) with its `base` chain resolved (presets of `kind`);
// the returned table has no `base` key. InputError at the `base` key for a
// missing base, a base that is not a string, or a chain that loops.
toml::table load_toml_with_base(const std::string& path, PresetKind kind);

}  // namespace epsim
