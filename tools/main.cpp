// epsim: the command-line front end. Turns errors into exit codes:
// 0 success, 1 a run that failed or a bug (InternalError: "epsim: internal
// error: ..."), 2 bad input (InputError, one line on stderr).
#include <iostream>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/error.hpp"
#include "tools/command.hpp"
#include "tools/output_file.hpp"

int main(int argc, char** argv) {
  using namespace epsim;
  CLI::App epsim_app{"epsim: a discrete-event simulator of MoE training on NPU/GPU clusters"};
  epsim_app.require_subcommand(1);
  epsim_app.set_version_flag("--version", "epsim 0.1.0");

  std::vector<tools::Command> commands = {
      tools::add_bounds_command(epsim_app),
      tools::add_workload_command(epsim_app),
      tools::add_platform_command(epsim_app),
      tools::add_run_command(epsim_app),
      tools::add_sweep_command(epsim_app),
      tools::add_validate_command(epsim_app),
      tools::add_collective_command(epsim_app),
  };

  try {
    epsim_app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return epsim_app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return epsim_app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return epsim_app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "epsim: error: " << e.what() << "\n";
    return kExitBadInput;
  }

  try {
    for (const tools::Command& c : commands) {
      if (!c.app->parsed()) continue;
      const int code = c.run();
      tools::finish_stdout();  // a report that never reached its reader is not a success
      return code;
    }
  } catch (const InputError& e) {
    // Option errors carry no file: prefix the program name, as for CLI11's own errors.
    if (e.where().file.empty()) std::cerr << "epsim: ";
    std::cerr << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    // InternalError (a broken contract), a SimGrid failure, bad_alloc: none
    // is the user's input.
    std::cerr << "epsim: internal error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
