// The results file of a sweep: one JSON object per line, appended under an
// exclusive lock and flushed to disk, so that many processes (local workers
// or Slurm array tasks on several nodes) can append at once and a process
// killed at any moment never loses a finished line nor leaves a torn one
// that hides the next.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace epsim::sweep {

// Appends `record` as one line: flock(LOCK_EX), a newline first if the file
// ends in a torn line, one write(), fsync(). Throws InputError naming
// --results on any I/O failure (a full disk: at the first write).
void append_result(const std::string& path, const nlohmann::json& record);

// All complete, parsable lines of the file (none if it does not exist); a
// torn or unparsable line is skipped. FileError when the path exists but is
// not a regular file (/dev/full reads without end).
std::vector<nlohmann::json> read_results(const std::string& path);

// The one sweep (or plan) driver that writes `results`: an exclusive,
// non-blocking flock on "<results>.lock" (beside it, kept: removing it would
// let two drivers lock two files), held while the object lives and not
// inherited by the workers (O_CLOEXEC), which append under their own
// per-record lock. Throws option_error("--results", "<results>: another
// <command> is writing it (<lock> is locked); wait for it or choose another --results").
class DriverLock {
 public:
  explicit DriverLock(const std::string& results, const std::string& command = "sweep");
  ~DriverLock();
  DriverLock(const DriverLock&) = delete;
  DriverLock& operator=(const DriverLock&) = delete;

 private:
  int fd_ = -1;
};

// The last record of each point key ("key" field), in file order of last write.
std::map<std::string, nlohmann::json> latest_by_key(const std::vector<nlohmann::json>& records);

}  // namespace epsim::sweep
