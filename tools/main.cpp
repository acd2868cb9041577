// epsim: the command-line front end. Turns errors into exit codes:
// 0 success, 1 a run that failed or a bug (InternalError: "epsim: internal
// error: ..."), 2 bad input (InputError, one line on stderr).
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/memory_limit.hpp"
#include "sim/report/scenario.hpp"
#include "tools/command.hpp"
#include "tools/interrupt.hpp"
#include "tools/option_checks.hpp"
#include "tools/output_file.hpp"

namespace {

// The option of the parsed command line whose value is `path`, or "" (a
// positional argument by its name: "platform", "spec").
std::string option_naming(const CLI::App& app, const std::string& path) {
  for (const CLI::Option* o : app.get_options()) {
    for (const std::string& value : o->results())
      if (value == path) return o->get_name();
  }
  for (const CLI::App* sub : app.get_subcommands()) {
    const std::string name = option_naming(*sub, path);
    if (!name.empty()) return name;
  }
  return "";
}

// The first option value of the parsed command line that is not UTF-8, as
// option_error would tell it; nullopt when every value is.
std::optional<epsim::InputError> non_utf8_value(const CLI::App& app) {
  for (const CLI::Option* o : app.get_options()) {
    for (const std::string& value : o->results()) {
      const std::string problem = epsim::tools::utf8_problem(value);
      if (!problem.empty()) return epsim::option_error(o->get_name(), problem);
    }
  }
  for (const CLI::App* sub : app.get_subcommands()) {
    if (auto e = non_utf8_value(*sub)) return e;
  }
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace epsim;
  CLI::App epsim_app{"epsim: a discrete-event simulator of MoE training on NPU/GPU clusters"};
  epsim_app.require_subcommand(1);
  epsim_app.set_version_flag("--version", std::string("epsim ") + sim::epsim_version());

  std::vector<tools::Command> commands = {
      tools::add_bounds_command(epsim_app),
      tools::add_workload_command(epsim_app),
      tools::add_platform_command(epsim_app),
      tools::add_run_command(epsim_app),
      tools::add_sweep_command(epsim_app),
      tools::add_validate_command(epsim_app),
      tools::add_collective_command(epsim_app),
      tools::add_plan_command(epsim_app),
      tools::add_serve_command(epsim_app),
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

  tools::install_interrupt_handlers();
  try {
    // The environment is checked once, before any work: a bad value is one
    // line naming the variable, not a verdict on every layout later.
    memory_limit_GiB();
    if (auto e = non_utf8_value(epsim_app)) throw *e;
    for (const tools::Command& c : commands) {
      if (!c.app->parsed()) continue;
      const int code = c.run();
      tools::finish_stdout();  // a report that never reached its reader is not a success
      return code;
    }
  } catch (const InputError& e) {
    // A file that cannot be read is told at the option that named it.
    const auto* file = dynamic_cast<const FileError*>(&e);
    const std::string option = file ? option_naming(epsim_app, file->path()) : "";
    const InputError told = option.empty() ? e : named_at(*file, {}, option);
    // Option errors carry no file: prefix the program name, as for CLI11's own errors.
    if (told.where().file.empty()) std::cerr << "epsim: ";
    std::cerr << told.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    // InternalError (a broken contract), a SimGrid failure, bad_alloc: none
    // is the user's input.
    std::cerr << "epsim: internal error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
