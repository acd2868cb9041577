// The checks behind output_file.hpp: stat and access before, a temporary
// file beside the output, failbit and rename after.
#include "tools/output_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "core/error.hpp"
#include "core/presets.hpp"
#include "tools/interrupt.hpp"

namespace epsim::tools {

namespace {

namespace fs = std::filesystem;

std::string cannot_write(const std::string& path, int err) {
  return path + ": cannot write: " + std::strerror(err);
}

// The file an input names: the path itself when it exists, else the preset it names, else "".
std::string input_file(const std::string& input) {
  struct stat st {};
  if (::stat(input.c_str(), &st) == 0) return input;
  for (PresetKind kind : {PresetKind::kPlatform, PresetKind::kWorkload}) {
    try {
      return resolve_preset_file(kind, input);
    } catch (const std::exception&) {
    }
  }
  return "";
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  std::error_code ec;
  return fs::absolute(a, ec).lexically_normal() == fs::absolute(b, ec).lexically_normal();
}

}  // namespace

void check_output_path(const std::string& option, const std::string& path) {
  if (path.empty()) throw option_error(option, "expected a file name, got \"\"");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw option_error(option, path + ": is a directory");
    if (::access(path.c_str(), W_OK) != 0) throw option_error(option, cannot_write(path, errno));
    if (!S_ISREG(st.st_mode)) return;  // written in place: the folder needs no write access
  } else if (errno != ENOENT) {
    throw option_error(option, cannot_write(path, errno));
  }
  fs::path parent = fs::path(path).parent_path();
  if (parent.empty()) parent = ".";
  // The temporary file is created in the folder, so it must be writable even when the file is.
  if (::access(parent.c_str(), W_OK | X_OK) != 0) throw option_error(option, cannot_write(path, errno));
}

void refuse_input_as_output(const std::string& option, const std::string& path, const std::vector<NamedInput>& inputs) {
  for (const NamedInput& input : inputs) {
    if (input.path.empty()) continue;
    const std::string file = input_file(input.path);
    if (!file.empty() && same_file(file, path))
      throw option_error(option, path + ": is the input named by " + input.name + "; write the output elsewhere");
  }
}

OutputFile::OutputFile(std::string option, std::string path) : option_(std::move(option)), path_(std::move(path)) {
  check_output_path(option_, path_);
  struct stat st {};
  const bool exists = ::stat(path_.c_str(), &st) == 0;
  errno = 0;
  if (exists && !S_ISREG(st.st_mode)) {
    out_.open(path_);
  } else {
    const fs::path target(path_);
    std::string pattern = (target.parent_path() / ("." + target.filename().string() + ".epsim-XXXXXX")).string();
    const int fd = ::mkstemp(pattern.data());
    if (fd < 0) throw option_error(option_, cannot_write(path_, errno));
    // mkstemp's 0600 would outlive the rename: keep the earlier file's mode, else the umask's.
    mode_t mode = 0;
    if (exists) {
      mode = st.st_mode & 07777;
    } else {
      const mode_t mask = ::umask(0);
      ::umask(mask);
      mode = 0666 & ~mask;
    }
    ::fchmod(fd, mode);
    ::close(fd);
    temp_ = pattern;
    temp_slot_ = register_temp_file(temp_);
    out_.open(temp_, std::ios::trunc);
  }
  if (!out_) throw option_error(option_, cannot_write(path_, errno ? errno : EIO));
}

OutputFile::~OutputFile() {
  if (temp_.empty()) return;
  ::unlink(temp_.c_str());
  forget_temp_file(temp_slot_);
}

void OutputFile::close() {
  errno = 0;
  out_.flush();
  const bool flushed = static_cast<bool>(out_);
  const int flush_errno = errno;
  out_.close();
  if (!flushed || !out_) throw option_error(option_, cannot_write(path_, flush_errno ? flush_errno : (errno ? errno : EIO)));
  if (temp_.empty()) return;
  if (std::rename(temp_.c_str(), path_.c_str()) != 0) throw option_error(option_, cannot_write(path_, errno));
  forget_temp_file(temp_slot_);
  temp_.clear();
}

void write_output_file(const std::string& option, const std::string& path, const std::string& text) {
  OutputFile out(option, path);
  out.stream() << text;
  out.close();
}

void finish_stdout() {
  errno = 0;
  std::cout.flush();
  if (!std::cout) throw option_error("standard output", std::string("cannot write: ") + std::strerror(errno ? errno : EIO));
}

}  // namespace epsim::tools
