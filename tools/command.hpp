// A subcommand of `epsim`: its CLI11 sub-app and what runs when it is chosen.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace epsim::tools {

struct Command {
  CLI::App* app = nullptr;
  // Returns the process exit code. May throw InputError (-> exit 2).
  std::function<int()> run;
};

// One function per subcommand, each in its own cmd_*.cpp.
Command add_bounds_command(CLI::App& epsim);    // cmd_bounds.cpp
Command add_platform_command(CLI::App& epsim);  // cmd_platform.cpp
Command add_workload_command(CLI::App& epsim);  // cmd_workload.cpp
Command add_run_command(CLI::App& epsim);       // cmd_run.cpp
Command add_sweep_command(CLI::App& epsim);     // cmd_sweep.cpp
Command add_validate_command(CLI::App& epsim);  // cmd_validate.cpp
Command add_collective_command(CLI::App& epsim);  // cmd_collective.cpp
Command add_plan_command(CLI::App& epsim);        // cmd_plan.cpp
Command add_serve_command(CLI::App& epsim);       // cmd_serve.cpp

}  // namespace epsim::tools
