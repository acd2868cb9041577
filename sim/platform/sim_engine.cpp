// Engine construction: configuration through argv so that it is applied
// before the platform loads, and SimGrid failures turned into InputError.
#include "sim/platform/sim_engine.hpp"

#include <exception>

#include <simgrid/s4u/Engine.hpp>

#include "core/error.hpp"

namespace epsim::sim {

void SimEngine::configure(const EngineOptions& options) {
  std::vector<std::string> args = {"epsim"};
  if (!options.simgrid_logs) args.emplace_back("--log=root.thresh:critical");
  args.emplace_back("--cfg=host/model:ptask_L07");
  args.emplace_back("--cfg=network/TCP-gamma:0");
  for (const std::string& c : options.extra_config) args.push_back("--cfg=" + c);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  try {
    engine_ = std::make_unique<simgrid::s4u::Engine>(&argc, argv.data());
  } catch (const std::exception& e) {
    throw InputError({"SimGrid configuration", 0, 0}, "", e.what());
  }
}

SimEngine::SimEngine(const std::string& platform_path, const EngineOptions& options) : source_(platform_path) {
  configure(options);
  try {
    engine_->load_platform(platform_path);
  } catch (const std::exception& e) {
    throw InputError({platform_path, 0, 0}, "", std::string("SimGrid could not load the platform: ") + e.what());
  }
}

SimEngine::SimEngine(const std::string& source, const PlatformBuilder& build, const EngineOptions& options)
    : source_(source) {
  configure(options);
  try {
    build();
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError({source, 0, 0}, "", std::string("SimGrid could not build the platform: ") + e.what());
  }
}

SimEngine::~SimEngine() = default;

}  // namespace epsim::sim
