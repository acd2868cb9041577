// Command-line overrides of TOML documents: `--set node.npus=16` replaces
// (or adds) one key of a loaded preset before it is read, so presets can be
// changed key by key without copying files.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

namespace epsim {

// Applies one "dotted.key=value" assignment. The value is read as TOML
// ("16", "1.5", "true", "[8, 16]", "\"56GBps\"") and, when that fails, as a
// bare string (so `--set routing.kind=zipf` needs no quotes). Missing tables
// on the path are created; the strict reader later rejects unknown keys.
// Throws InputError (source "--set ...") when the assignment is malformed
// or a path element is not a table.
void apply_override(toml::table& root, std::string_view assignment);

void apply_overrides(toml::table& root, const std::vector<std::string>& assignments);

// Whether `node` was set by apply_override (rather than read from a file).
bool is_override(const toml::node& node);

}  // namespace epsim
