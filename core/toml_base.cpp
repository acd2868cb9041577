// Resolving `base` chains of TOML inputs.
#include "core/toml_base.hpp"

#include <filesystem>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/toml_reader.hpp"

namespace epsim {

namespace fs = std::filesystem;

namespace {

constexpr int kMaxBaseDepth = 8;

// Moves `from`'s keys into `into`: moved nodes keep their source region
// (toml++ drops it on copies), so errors still name the derived file.
void overlay(toml::table& into, toml::table& from) {
  for (auto&& [key, value] : from) {
    toml::table* existing = into.get_as<toml::table>(key);
    if (existing && value.is_table()) {
      overlay(*existing, *value.as_table());
      continue;
    }
    value.visit([&, k = key](auto&& concrete) { into.insert_or_assign(k, std::move(concrete)); });
  }
}

std::string base_file(const std::string& of, const std::string& name, PresetKind kind) {
  const bool path_like = name.find('/') != std::string::npos || fs::path(name).extension() == ".toml";
  if (!path_like || fs::path(name).is_absolute()) return resolve_preset_file(kind, name);
  return resolve_preset_file(kind, (fs::path(of).parent_path() / name).lexically_normal().string());
}

toml::table load_chain(const std::string& path, PresetKind kind, std::vector<std::string>& chain) {
  toml::table table = load_toml_file(path);
  const toml::node* base = table.get("base");
  if (!base) return table;
  const SourceLocation at = location_of(*base);
  const auto* name = base->as_string();
  if (!name) throw InputError(at, "base", "expected a preset name or a path relative to this file (a string)");
  std::string file;
  try {
    file = base_file(path, name->get(), kind);
  } catch (const FileError& e) {
    throw named_at(e, at, "base");
  } catch (const InputError& e) {  // no data folder to find presets in
    throw InputError(at, "base", e.problem());
  }
  std::error_code ec;
  const std::string id = fs::weakly_canonical(file, ec).string();
  for (const std::string& seen : chain) {
    if (seen == id) throw InputError(at, "base", fmt::format("{} is already in this file's base chain (a loop)", file));
  }
  if (static_cast<int>(chain.size()) >= kMaxBaseDepth)
    throw InputError(at, "base", fmt::format("more than {} files in the base chain", kMaxBaseDepth));
  chain.push_back(id);
  toml::table merged;
  try {
    merged = load_chain(file, kind, chain);
  } catch (const FileError& e) {
    if (e.path() != file) throw;
    throw named_at(e, at, "base");  // a folder, a FIFO, too large: told at the key that named it
  }
  table.erase("base");
  overlay(merged, table);
  return merged;
}

}  // namespace

toml::table load_toml_with_base(const std::string& path, PresetKind kind) {
  std::error_code ec;
  std::vector<std::string> chain{fs::weakly_canonical(path, ec).string()};
  return load_chain(path, kind, chain);
}

}  // namespace epsim
