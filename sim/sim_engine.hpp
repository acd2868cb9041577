// The one SimGrid engine a process may have, configured as the platform
// contract requires (ptask_L07, TCP-gamma 0), logs silenced, platform loaded
// with SimGrid's errors re-thrown as InputError naming the file.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace simgrid::s4u {
class Engine;
}

namespace epsim::sim {

struct EngineOptions {
  bool simgrid_logs = false;              // true: keep SimGrid's own log output (default: critical only)
  std::vector<std::string> extra_config;  // "name:value" pairs, e.g. "contexts/factory:thread"
};

class SimEngine {
 public:
  // Throws InputError when the platform file does not load. SimGrid allows
  // one engine per process: construct at most one SimEngine per process.
  SimEngine(const std::string& platform_path, const EngineOptions& options = {});
  ~SimEngine();
  SimEngine(const SimEngine&) = delete;
  SimEngine& operator=(const SimEngine&) = delete;

  simgrid::s4u::Engine& engine() { return *engine_; }
  const std::string& platform_path() const { return platform_path_; }

 private:
  std::string platform_path_;
  std::unique_ptr<simgrid::s4u::Engine> engine_;
};

}  // namespace epsim::sim
