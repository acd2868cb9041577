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
Command add_bounds_command(CLI::App& epsim);

}  // namespace epsim::tools
