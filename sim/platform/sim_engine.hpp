// The one SimGrid engine a process may have, configured as the platform
// contract requires (ptask_L07, TCP-gamma 0), logs silenced, platform loaded
// with SimGrid's errors re-thrown as InputError naming the file.
#pragma once

#include <functional>
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

// Builds a platform into the engine just configured (e.g. topology's
// build_platform(spec)); called once, before any actor exists.
using PlatformBuilder = std::function<void()>;

class SimEngine {
 public:
  // Loads a platform XML file. Throws InputError when it does not load.
  // SimGrid allows one engine per process: construct at most one SimEngine per process.
  SimEngine(const std::string& platform_path, const EngineOptions& options = {});
  // Builds the platform with `build`; `source` names it in messages. An
  // InputError from `build` passes through; other exceptions become one.
  SimEngine(const std::string& source, const PlatformBuilder& build, const EngineOptions& options = {});
  ~SimEngine();
  SimEngine(const SimEngine&) = delete;
  SimEngine& operator=(const SimEngine&) = delete;

  simgrid::s4u::Engine& engine() { return *engine_; }
  const std::string& source() const { return source_; }

 private:
  void configure(const EngineOptions& options);

  std::string source_;
  std::unique_ptr<simgrid::s4u::Engine> engine_;
};

}  // namespace epsim::sim
