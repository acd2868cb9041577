// Formatting of input errors.
#include "core/error.hpp"

#include <fmt/format.h>

namespace epsim {

namespace {
std::string format_error(const SourceLocation& where, const std::string& key,
                         const std::string& problem) {
  std::string prefix;
  if (!where.file.empty()) {
    prefix = where.file;
    if (where.line > 0) prefix += fmt::format(":{}:{}", where.line, where.column);
    prefix += ": ";
  }
  std::string subject = key.empty() ? "" : key + ": ";
  return prefix + "error: " + subject + problem;
}
}  // namespace

InputError::InputError(SourceLocation where, std::string key, std::string problem)
    : std::runtime_error(format_error(where, key, problem)),
      where_(std::move(where)),
      key_(std::move(key)),
      problem_(std::move(problem)) {}

InputError parameter_error(const std::string& key, const std::string& problem) {
  return InputError(SourceLocation{}, key, problem);
}

InputError option_error(const std::string& option, const std::string& problem) {
  return InputError(SourceLocation{}, option, problem);
}

}  // namespace epsim
