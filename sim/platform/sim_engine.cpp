// Engine construction: configuration through argv so that it is applied
// before any platform exists, and SimGrid's refusals turned into InputError.
// Extra settings pass an allow-list first: SimGrid aborts, hangs or crashes on
// many values (an unknown name prints its whole help; a 1 KiB stack segfaults;
// a negative precision never converges), so it only sees values it can take.
#include "sim/platform/sim_engine.hpp"

#include <dlfcn.h>

#include <cmath>
#include <cstdlib>
#include <exception>
#include <string_view>

#include <fmt/format.h>
#include <simgrid/s4u/Engine.hpp>

#include "core/error.hpp"

namespace epsim::sim {

namespace {

// One setting a user may pass: its name, the values it takes, what it does.
struct AllowedSetting {
  const char* name;
  enum Kind { kPrecision, kStackSize, kFactory } kind;
  const char* what;
};

// Keep docs/simulator.md ("SimGrid settings") in step with this table.
constexpr AllowedSetting kAllowed[] = {
    {"maxmin/precision", AllowedSetting::kPrecision, "tolerance of the bandwidth-sharing solver"},
    {"surf/precision", AllowedSetting::kPrecision, "tolerance on activity completion times"},
    {"contexts/factory", AllowedSetting::kFactory, "how actors are switched: thread, ucontext or raw"},
    {"contexts/stack-size", AllowedSetting::kStackSize, "actor stack size in KiB"},
};

// Fixed by the platform contract (docs/simulator.md): changing them would
// make every bound and golden number wrong, so they are refused by name.
constexpr const char* kContractSettings[] = {"host/model", "network/model", "cpu/model", "network/TCP-gamma"};

bool parse_double(const std::string& s, double& out) {
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size();
}

bool parse_long(const std::string& s, long& out) {
  char* end = nullptr;
  out = std::strtol(s.c_str(), &end, 10);
  return !s.empty() && end == s.c_str() + s.size();
}

std::string value_refusal(const AllowedSetting& a, const std::string& value) {
  switch (a.kind) {
    case AllowedSetting::kPrecision: {
      double v = 0;
      if (!parse_double(value, v) || !std::isfinite(v) || v <= 0 || v > 1e-2)
        return fmt::format("{}: expected a number in (0, 1e-2], got \"{}\"", a.name, value);
      return "";
    }
    case AllowedSetting::kStackSize: {
      long v = 0;
      if (!parse_long(value, v) || v < 256 || v > 1048576)
        return fmt::format("{}: expected KiB in [256, 1048576], got \"{}\"", a.name, value);
      return "";
    }
    case AllowedSetting::kFactory:
      if (value != "thread" && value != "ucontext" && value != "raw")
        return fmt::format("{}: expected thread, ucontext or raw, got \"{}\"", a.name, value);
      return "";
  }
  return "";
}

// Whether the next engine's solver keeps SimGrid's selective update (set by
// SimEngine before it builds the engine, read when ptask_L07 builds its
// solver) and whether a solver was built without it.
bool keep_selective_update = false;
bool selective_update_dropped = false;

}  // namespace

bool solver_without_selective_update() { return selective_update_dropped; }

}  // namespace epsim::sim

// SimGrid's lmm::System::build(std::string_view solver, bool selective_update),
// called through the PLT by ptask_L07's set-up, so this definition in the
// executable takes its place (sim/CMakeLists.txt names the symbol,
// EPSIM_SOLVER_FACTORY, and exports it).
// ptask_L07 asks for selective update, whose bookkeeping (a depth-first
// walk marking every constraint reachable from a changed variable: quadratic
// in a fused kernel's 512 constraints) only the max-min and BMF solvers
// read. The fair-bottleneck solver ptask_L07 runs re-solves every variable
// at every event and ignores it, and the modified-action set it feeds is
// read only by lazily updated models, which ptask_L07 is not. So the same
// solver without it gives the same rates, bit for bit (tested), at a
// quarter less replay time (docs/performance.md). Any other solver is
// built as asked.
extern "C" void* epsim_lmm_system_build(std::string_view solver, bool selective_update) __asm__(
    EPSIM_SOLVER_FACTORY);
extern "C" void* epsim_lmm_system_build(std::string_view solver, bool selective_update) {
  using Build = void* (*)(std::string_view, bool);
  static const auto simgrid_build = reinterpret_cast<Build>(dlsym(RTLD_NEXT, EPSIM_SOLVER_FACTORY));
  // Only SimGrid calls this, so its own definition is there to be found.
  if (simgrid_build == nullptr)
    throw epsim::InternalError("SimGrid's lmm::System::build is not in the libraries after epsim");
  if (solver != "fairbottleneck") return simgrid_build(solver, selective_update);
  epsim::sim::selective_update_dropped = selective_update && !epsim::sim::keep_selective_update;
  return simgrid_build(solver, selective_update && !epsim::sim::selective_update_dropped);
}

namespace epsim::sim {

std::string engine_setting_refusal(const std::string& setting) {
  const std::size_t colon = setting.find(':');
  if (colon == std::string::npos) return fmt::format("expected name:value, got \"{}\"", setting);
  const std::string name = setting.substr(0, colon);
  const std::string value = setting.substr(colon + 1);
  for (const char* fixed : kContractSettings) {
    if (name == fixed)
      return name + ": fixed by the platform contract (host/model ptask_L07, network/TCP-gamma 0); the bounds "
                    "assume it";
  }
  for (const AllowedSetting& a : kAllowed) {
    if (name == a.name) return value_refusal(a, value);
  }
  std::string names;
  for (const AllowedSetting& a : kAllowed) names += std::string(names.empty() ? "" : ", ") + a.name;
  return fmt::format("{}: not a setting epsim passes to SimGrid; allowed: {}", name, names);
}

SimEngine::SimEngine(std::string source, const EngineOptions& options) : source_(std::move(source)) {
  keep_selective_update = options.keep_selective_update;
  std::vector<std::string> args = {"epsim"};
  if (!options.simgrid_logs) args.emplace_back("--log=root.thresh:critical");
  args.emplace_back("--cfg=host/model:ptask_L07");
  args.emplace_back("--cfg=network/TCP-gamma:0");
#ifdef EPSIM_SANITIZE_BUILD
  // AddressSanitizer does not follow SimGrid's own stack switching: an
  // exception thrown after the engine ran prints a false-positive warning
  // on stderr. Threads give every actor a stack ASan knows (same results).
  args.emplace_back("--cfg=contexts/factory:thread");
#endif
  for (const std::string& c : options.extra_config) {
    const std::string why = engine_setting_refusal(c);
    if (!why.empty()) throw InputError({"SimGrid configuration", 0, 0}, "", why);
    args.push_back("--cfg=" + c);
  }
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
