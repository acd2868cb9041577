// Engine construction: configuration through argv so that it is applied
// before any platform exists, and SimGrid's refusals turned into InputError.
#include "sim/platform/sim_engine.hpp"

#include <exception>

#include <simgrid/s4u/Engine.hpp>

#include "core/error.hpp"

namespace epsim::sim {

SimEngine::SimEngine(std::string source, const EngineOptions& options) : source_(std::move(source)) {
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
    // SimGrid follows its message with every config key it knows: keep the first line.
    const std::string what = e.what();
    throw InputError({}, "SimGrid configuration", what.substr(0, what.find('\n')));
  }
}

SimEngine::~SimEngine() = default;

}  // namespace epsim::sim
