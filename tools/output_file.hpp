// Output files of the commands, checked before any work starts and written
// beside their place, then renamed over it when complete: a path that
// cannot be written, a directory given as a file, an output that names one
// of the command's inputs, or a full disk (/dev/full) is one line naming the
// option, exit 2; an error or a signal before the rename leaves the earlier
// file as it was (docs/outputs.md; STYLE.md "Files a user owns").
#pragma once

#include <fstream>
#include <ostream>
#include <string>
#include <vector>

namespace epsim::tools {

// Throws option_error(option, ...) unless `path` can be written: "expected a
// file name" (""), "is a directory", or "cannot write: <reason>" (missing or
// read-only folder). Does not create or truncate the file (a sweep's
// --results is appended to).
void check_output_path(const std::string& option, const std::string& path);

// An input of the command, by what named it ("--workload", "spec", "the
// end-to-end file's platform") and its path or preset name.
struct NamedInput {
  std::string name;
  std::string path;
};

// Throws option_error(option, "<path>: is the input named by <name>; ...")
// when `path` is one of `inputs`: the same file (st_dev and st_ino, so links
// and ./ spellings count) or the same path. Preset names are resolved first;
// an input that does not exist is left to its reader.
void refuse_input_as_output(const std::string& option, const std::string& path, const std::vector<NamedInput>& inputs);

// A file written by `option`: checked at construction, written to a
// temporary file beside `path` ("<folder>/.<name>.epsim-XXXXXX"), and
// renamed over `path` by close(). A path that exists and is not a regular
// file (/dev/full, /dev/stdout, a FIFO) is written in place. Destroyed
// without close() (an error, an exception), it removes its temporary file
// and `path` stays as it was; a SIGINT or SIGTERM removes it too
// (tools/interrupt.hpp).
class OutputFile {
 public:
  OutputFile(std::string option, std::string path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  std::ostream& stream() { return out_; }
  // Flushes, closes and renames; throws option_error(option, "<path>: cannot write: ...") on any failure.
  void close();

 private:
  std::string option_;
  std::string path_;
  std::string temp_;  // "" when written in place
  int temp_slot_ = -1;
  std::ofstream out_;
};

// The whole of `text` into `path` through an OutputFile.
void write_output_file(const std::string& option, const std::string& path, const std::string& text);

// Flushes standard output; throws option_error("standard output", ...) when
// it could not be written (a closed pipe, /dev/full).
void finish_stdout();

}  // namespace epsim::tools
