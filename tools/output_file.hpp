// Output files of the commands, checked before any work starts and checked
// again when written: a path that cannot be written, a directory given as a
// file or a full disk (/dev/full) is one line naming the option, exit 2 —
// never "written" with exit 0.
#pragma once

#include <fstream>
#include <ostream>
#include <string>

namespace epsim::tools {

// Throws option_error(option, ...) unless `path` can be written: "is a
// directory", or "cannot write: <reason>" (missing or read-only folder).
// Does not create or truncate the file (a sweep's --results is appended to).
void check_output_path(const std::string& option, const std::string& path);

// A file written by `option`: checked and opened at construction, and
// close() says whether every byte reached it.
class OutputFile {
 public:
  OutputFile(std::string option, std::string path);
  std::ostream& stream() { return out_; }
  // Flushes and closes; throws option_error(option, "<path>: cannot write: ...") on any failure.
  void close();

 private:
  std::string option_;
  std::string path_;
  std::ofstream out_;
};

// Flushes standard output; throws option_error("standard output", ...) when
// it could not be written (a closed pipe, /dev/full).
void finish_stdout();

}  // namespace epsim::tools
