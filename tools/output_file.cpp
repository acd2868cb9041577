// The checks behind output_file.hpp: stat and access before, failbit after.
#include "tools/output_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "core/error.hpp"

namespace epsim::tools {

namespace {

std::string cannot_write(const std::string& path, int err) {
  return path + ": cannot write: " + std::strerror(err);
}

}  // namespace

void check_output_path(const std::string& option, const std::string& path) {
  if (path.empty()) throw option_error(option, "expected a file name, got \"\"");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw option_error(option, path + ": is a directory");
    if (::access(path.c_str(), W_OK) != 0) throw option_error(option, cannot_write(path, errno));
    return;
  }
  if (errno != ENOENT) throw option_error(option, cannot_write(path, errno));
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (parent.empty()) parent = ".";
  if (::access(parent.c_str(), W_OK | X_OK) != 0) throw option_error(option, cannot_write(path, errno));
}

OutputFile::OutputFile(std::string option, std::string path) : option_(std::move(option)), path_(std::move(path)) {
  check_output_path(option_, path_);
  errno = 0;
  out_.open(path_);
  if (!out_) throw option_error(option_, cannot_write(path_, errno ? errno : EIO));
}

void OutputFile::close() {
  errno = 0;
  out_.flush();
  const bool flushed = static_cast<bool>(out_);
  const int flush_errno = errno;
  out_.close();
  if (!flushed || !out_) throw option_error(option_, cannot_write(path_, flush_errno ? flush_errno : (errno ? errno : EIO)));
}

void finish_stdout() {
  errno = 0;
  std::cout.flush();
  if (!std::cout) throw option_error("standard output", std::string("cannot write: ") + std::strerror(errno ? errno : EIO));
}

}  // namespace epsim::tools
