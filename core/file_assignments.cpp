// Reading a measurement file's key = value tables and telling their errors there.
#include "core/file_assignments.hpp"

#include <cstdint>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace epsim {

std::vector<FileAssignment> read_assignments(TableReader& t, const std::string& side) {
  std::vector<FileAssignment> out;
  for (const auto& [key, value] : t.raw()) {
    const toml::node* n = t.node(key.str());
    std::string text;
    const auto one_line = [&](const std::string& s) {
      for (const unsigned char c : s)
        if (c < 0x20 || c == 0x7f)
          t.fail(key.str(), "expected a value on one line, got a line break or control character");
      return s;
    };
    if (n->is_string()) {
      // TOML's basic strings read JSON's escapes, so "true" stays a string and a quote stays a quote.
      text = nlohmann::json(one_line(*n->value<std::string>())).dump();
    } else if (n->is_array()) {  // a list of names (memory.recompute's modules): JSON's array is TOML's
      nlohmann::json names = nlohmann::json::array();
      for (const toml::node& item : *n->as_array()) {
        if (!item.is_string()) t.fail(key.str(), "expected an array of strings, as after --set key=[\"a\", \"b\"]");
        names.push_back(one_line(*item.value<std::string>()));
      }
      text = names.dump();
    } else if (n->is_integer()) {
      text = std::to_string(*n->value<std::int64_t>());
    } else if (n->is_floating_point()) {
      text = fmt::format("{:.17g}", *n->value<double>());
    } else if (n->is_boolean()) {
      text = *n->value<bool>() ? "true" : "false";
    } else {
      t.fail(key.str(), "expected a string, number, boolean or array of strings, as after --set key=");
    }
    out.push_back({side, std::string(key.str()) + "=" + text, t.key_path(key.str()), location_of(*n)});
  }
  t.finish();
  return out;
}

std::vector<std::string> assignment_texts(const std::vector<FileAssignment>& assignments) {
  std::vector<std::string> out;
  for (const FileAssignment& a : assignments) out.push_back(a.side + a.assignment);
  return out;
}

void rethrow_at_assignment(const InputError& e, const std::vector<FileAssignment>& assignments) {
  const std::string& source = e.where().file;
  for (const FileAssignment& a : assignments) {
    if (source == "--set " + a.assignment || source == "--set " + a.side + a.assignment)
      throw InputError(a.at, a.key, e.problem());
  }
  throw e;
}

}  // namespace epsim
