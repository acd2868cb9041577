// JSON as epsim prints it: every number finite. nlohmann::json writes NaN
// and infinity as `null`, which would turn a computation that went wrong
// into a silently missing figure; a non-finite number is a bug in epsim
// (inputs are range-checked at the boundary), so it is an InternalError
// naming where in the document it sits.
#pragma once

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace epsim {
namespace detail {

// Whether `node` holds a non-finite number; `path` then gets its JSON pointer.
template <class Json>
bool find_non_finite(const Json& node, std::string& path) {
  if (node.is_number_float()) return !std::isfinite(node.template get<double>());
  if (node.is_array()) {
    for (std::size_t i = 0; i < node.size(); ++i) {
      if (find_non_finite(node[i], path)) {
        path = "/" + std::to_string(i) + path;
        return true;
      }
    }
  } else if (node.is_object()) {
    for (const auto& item : node.items()) {
      if (find_non_finite(item.value(), path)) {
        path = "/" + item.key() + path;
        return true;
      }
    }
  }
  return false;
}

}  // namespace detail

// Throws InternalError("<what>: non-finite number at /step/sim_s") for the
// first NaN or infinity, in document order.
template <class Json>
void require_finite(const Json& document, const std::string& what) {
  std::string path;
  if (detail::find_non_finite(document, path))
    throw InternalError(what + ": non-finite number at " + (path.empty() ? "/" : path));
}

// require_finite, then the document with `indent` (-1: one line) and a newline.
template <class Json>
std::string dump_checked(const Json& document, const std::string& what, int indent = 2) {
  require_finite(document, what);
  return document.dump(indent) + "\n";
}

}  // namespace epsim
