// Applying --set overrides to a TOML tree.
#include "core/overrides.hpp"

#include "core/error.hpp"

namespace epsim {

namespace {

std::vector<std::string> split_key(std::string_view key) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = key.find('.', start);
    parts.emplace_back(key.substr(start, dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return parts;
}

// Every value an override parses carries a source path starting with this.
constexpr std::string_view kOverridePrefix = "--set ";

}  // namespace

void apply_override(toml::table& root, std::string_view assignment) {
  const std::string source = std::string(kOverridePrefix) + std::string(assignment);
  std::size_t eq = assignment.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    throw InputError(SourceLocation{source}, "", "expected key=value, e.g. --set node.npus=16");
  }
  std::string key(assignment.substr(0, eq));
  std::string value(assignment.substr(eq + 1));
  std::vector<std::string> parts = split_key(key);
  for (const std::string& p : parts) {
    if (p.empty()) throw InputError(SourceLocation{source}, key, "empty key path element");
  }

  toml::table parsed;
  try {
    parsed = toml::parse("v = " + value, source);
  } catch (const toml::parse_error&) {
    // A bare word: quote it, so it still carries the "--set" source path.
    std::string quoted;
    for (char c : value) {
      if (c == '"' || c == '\\') quoted += '\\';
      quoted += c;
    }
    try {
      parsed = toml::parse("v = \"" + quoted + "\"", source);
    } catch (const toml::parse_error& e) {
      throw InputError(SourceLocation{source}, key,
                       "cannot read value: " + std::string(e.description()));
    }
  }

  toml::table* table = &root;
  std::string walked;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    walked += (walked.empty() ? "" : ".") + parts[i];
    toml::node* next = table->get(parts[i]);
    if (!next) {
      table->insert(parts[i], toml::table{});
      next = table->get(parts[i]);
    }
    if (!next->is_table()) {
      throw InputError(SourceLocation{source}, walked, "is not a table, cannot set " + key);
    }
    table = next->as_table();
  }
  table->insert_or_assign(parts.back(), std::move(*parsed.get("v")));
}

bool is_override(const toml::node& node) {
  const auto& path = node.source().path;
  return path && std::string_view(*path).substr(0, kOverridePrefix.size()) == kOverridePrefix;
}

void apply_overrides(toml::table& root, const std::vector<std::string>& assignments) {
  for (const std::string& a : assignments) apply_override(root, a);
}

}  // namespace epsim
