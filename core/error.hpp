// The one error type for bad input: it names where (file, line:column) and
// which key, so the user can fix the input without reading code.
#pragma once

#include <stdexcept>
#include <string>

namespace epsim {

// Where a bad value came from. `file` is a path, "--set" or "command line";
// line and column are 1-based and 0 when unknown (e.g. a command-line option).
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
};

// Thrown for any input the user can fix. what() is one line:
//   "platforms/a2.toml:14:13: error: node.npus: expected an integer >= 1, got 0"
// Library code throws it; only tools/ mains turn it into exit code 2.
class InputError : public std::runtime_error {
 public:
  InputError(SourceLocation where, std::string key, std::string problem);

  const SourceLocation& where() const { return where_; }
  const std::string& key() const { return key_; }
  const std::string& problem() const { return problem_; }

 private:
  SourceLocation where_;
  std::string key_;
  std::string problem_;
};

// An error in a named parameter that came with no file, e.g. a field of an
// options struct: "error: topk: must be <= experts (256), got 300". Library
// code names the parameter by its key; tools/ map keys to the options that
// set them.
InputError parameter_error(const std::string& key, const std::string& problem);

// An error in a command-line option, for tools/ only (library code never
// names options): "error: --topk: must be <= experts (256), got 300".
InputError option_error(const std::string& option, const std::string& problem);

// A broken internal contract: a bug in epsim, not something the user can fix
// (e.g. a task graph from our own builder that violates the replay's
// preconditions). tools/ mains report it as "epsim: internal error: ..." with
// exit code 1.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// The exit code tools use for bad input.
inline constexpr int kExitBadInput = 2;

}  // namespace epsim
