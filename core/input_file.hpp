// Input files as a whole: the one regular-file check every reader goes
// through (TOML, XML, trace CSV, measurement files, sweep results), and the
// error it raises, which whoever named the file re-tells at its key
// (`base`, `routing.trace`, `platform`, a command-line option).
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace epsim {

// The largest input file epsim reads (TOML, XML, trace CSV): 64 MiB, far
// above any real platform or trace, so a wrong path fails fast.
inline constexpr std::size_t kMaxInputFileBytes = std::size_t{64} << 20;

// A file that cannot be read as a whole: missing, unreadable, a folder, not
// a regular file, too large, or a preset name that names none. what() is
// "<path>: error: <problem>"; named_at() tells it at the key that named it.
class FileError : public InputError {
 public:
  FileError(std::string path, std::string problem);
  const std::string& path() const { return where().file; }
};

// The same problem told where the file was named:
//   "workload.toml:3:8: error: base: ../: is a directory"
//   "epsim: error: --platform: tests: is a directory" (an option: no file in `where`)
InputError named_at(const FileError& e, SourceLocation where, const std::string& key);

// Throws FileError unless `path` is a regular file this process can read:
// "cannot open file", "is a directory", or "not a regular file (a FIFO)".
// Uses stat, never open, so a FIFO without a writer or /dev/zero is refused
// at once rather than blocking or read without end.
void check_regular_file(const std::string& path);

// The whole text of an input file (check_regular_file first, then a read
// bounded by kMaxInputFileBytes); FileError for either.
std::string read_input_file(const std::string& path);

// Every input file read_input_file reads while one lives, with its text, in
// the order read: what a result depends on (a plan's results file is keyed
// by its inputs' contents, tools/plan_results.hpp). One is active at a
// time; a nested one hears the reads until it ends, then the outer again.
class InputFileLog {
 public:
  InputFileLog();
  ~InputFileLog();
  InputFileLog(const InputFileLog&) = delete;
  InputFileLog& operator=(const InputFileLog&) = delete;
  const std::vector<std::pair<std::string, std::string>>& files() const { return files_; }  // (path, text)

 private:
  friend std::string read_input_file(const std::string& path);
  std::vector<std::pair<std::string, std::string>> files_;
  InputFileLog* outer_ = nullptr;
};

}  // namespace epsim
