// Locked, durable appends of JSON lines, and tolerant reading.
#include "tools/sweep/results_store.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/json_output.hpp"

namespace epsim::sweep {

namespace {

// A results file that cannot be written is the --results option's problem
// (a full disk, a read-only folder): exit 2 at the first failed write.
[[noreturn]] void fail(const std::string& what, const std::string& path) {
  throw option_error("--results", path + ": " + what + ": " + std::strerror(errno));
}

// Holds a file descriptor and its lock for one scope.
class LockedFile {
 public:
  explicit LockedFile(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) fail("cannot open results file", path);
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) fail("cannot lock results file", path);
    }
  }
  ~LockedFile() {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
  LockedFile(const LockedFile&) = delete;
  LockedFile& operator=(const LockedFile&) = delete;

  bool ends_in_torn_line() const {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) fail("cannot stat results file", path_);
    if (st.st_size == 0) return false;
    char last = '\n';
    if (::pread(fd_, &last, 1, st.st_size - 1) != 1) fail("cannot read results file", path_);
    return last != '\n';
  }

  void write_all(const std::string& text) {
    std::size_t done = 0;
    while (done < text.size()) {
      ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail("cannot write results file", path_);
      done += static_cast<std::size_t>(n);
    }
    if (::fsync(fd_) != 0) fail("cannot flush results file", path_);
  }

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace

DriverLock::DriverLock(const std::string& results, const std::string& command) {
  const std::string lock = results + ".lock";
  fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) fail("cannot open the lock file " + lock, results);
  while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    if (err == EWOULDBLOCK)
      throw option_error("--results", results + ": another " + command + " is writing it (" + lock +
                                          " is locked); wait for it or choose another --results");
    errno = err;
    fail("cannot lock " + lock, results);
  }
}

DriverLock::~DriverLock() {
  if (fd_ >= 0) ::close(fd_);
}

void append_result(const std::string& path, const nlohmann::json& record) {
  LockedFile file(path);
  std::string line = dump_checked(record, "sweep record", -1);
  if (file.ends_in_torn_line()) line = "\n" + line;
  file.write_all(line);
}

std::vector<nlohmann::json> read_results(const std::string& path) {
  std::vector<nlohmann::json> records;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return records;
  check_regular_file(path);  // /dev/full or a FIFO would read without end
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (in.eof()) break;  // no trailing newline: torn by a kill mid-write
    if (line.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_object()) records.push_back(std::move(j));
  }
  return records;
}

std::map<std::string, nlohmann::json> latest_by_key(const std::vector<nlohmann::json>& records) {
  std::map<std::string, nlohmann::json> latest;
  for (const nlohmann::json& r : records) {
    if (r.contains("key") && r["key"].is_string()) latest[r["key"].get<std::string>()] = r;
  }
  return latest;
}

}  // namespace epsim::sweep
