// The regular-file check and the bounded read of input files.
#include "core/input_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include <fmt/format.h>

namespace epsim {

namespace {

const char* file_kind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a file";
}

InputFileLog* active_log = nullptr;

}  // namespace

InputFileLog::InputFileLog() : outer_(active_log) { active_log = this; }

InputFileLog::~InputFileLog() { active_log = outer_; }

FileError::FileError(std::string path, std::string problem)
    : InputError(SourceLocation{std::move(path)}, "", std::move(problem)) {}

InputError named_at(const FileError& e, SourceLocation where, const std::string& key) {
  return InputError(std::move(where), key, e.path() + ": " + e.problem());
}

void check_regular_file(const std::string& path) {
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) throw FileError(path, "cannot open file");
  if (S_ISDIR(st.st_mode)) throw FileError(path, "is a directory");
  if (!S_ISREG(st.st_mode)) throw FileError(path, fmt::format("not a regular file ({})", file_kind(st.st_mode)));
  if (::access(path.c_str(), R_OK) != 0) throw FileError(path, "cannot open file");
}

std::string read_input_file(const std::string& path) {
  check_regular_file(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FileError(path, "cannot open file");
  // A bounded read, not the stat size: the file may grow while it is read.
  std::string text;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk), in.gcount() > 0) {
    text.append(chunk, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxInputFileBytes)
      throw FileError(path, fmt::format("file is larger than the input limit of {} MiB", kMaxInputFileBytes >> 20));
  }
  if (in.bad()) throw FileError(path, "cannot read file");
  if (active_log) active_log->files_.emplace_back(path, text);
  return text;
}

}  // namespace epsim
