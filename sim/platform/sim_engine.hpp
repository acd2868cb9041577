// The one SimGrid engine a process may have, configured as the platform
// contract requires (ptask_L07, TCP-gamma 0) with SimGrid's logs silenced.
// This is the only place that configures SimGrid; platform_loader.hpp puts
// a platform into it.
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
  bool keep_selective_update = false;     // tests: SimGrid's solver as it builds itself (sim_engine.cpp)
};

// Why SimGrid must not see `setting` ("name:value"), or "" when it may: only
// the allow-listed settings (docs/simulator.md) with values in range pass;
// the contract's own (host/model, network/TCP-gamma...) are refused by name.
std::string engine_setting_refusal(const std::string& setting);

// Whether this process's engine solves without SimGrid's selective update
// (sim_engine.cpp says why the answers are the same).
bool solver_without_selective_update();

class SimEngine {
 public:
  // Constructs and configures the engine, with no platform yet; `source`
  // names the platform in messages. A bad extra_config entry throws
  // InputError. SimGrid allows one engine per process: construct at most one.
  explicit SimEngine(std::string source, const EngineOptions& options = {});
  ~SimEngine();
  SimEngine(const SimEngine&) = delete;
  SimEngine& operator=(const SimEngine&) = delete;

  simgrid::s4u::Engine& engine() { return *engine_; }
  const std::string& source() const { return source_; }

 private:
  std::string source_;
  std::unique_ptr<simgrid::s4u::Engine> engine_;
};

}  // namespace epsim::sim
