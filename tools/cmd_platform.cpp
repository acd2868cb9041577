// `epsim platform`: look at a cluster before simulating on it.
//   epsim platform show FILE|PRESET [--set k=v]... [--json]
//   epsim platform xml FILE|PRESET [--set k=v]... [-o out.xml]
//   epsim platform check PLATFORM [--set k=v]...   (preset, cluster TOML or SimGrid XML:
//                                                   the verdict `run` and `sweep` give it)
//   epsim platform list
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "app/platform_job.hpp"
#include "core/json_output.hpp"
#include "core/error.hpp"
#include "topology/platform_xml.hpp"
#include "topology/topology_report.hpp"
#include "tools/command.hpp"
#include "tools/option_checks.hpp"
#include "tools/output_file.hpp"

namespace epsim::tools {

namespace {

struct PlatformState {
  std::string platform;
  std::vector<std::string> overrides;
  std::string stack;
  std::string output;
  bool json = false;
  CLI::App* show = nullptr;
  CLI::App* xml = nullptr;
  CLI::App* check = nullptr;
  CLI::App* list = nullptr;
};

void add_stack_option(CLI::App* app, PlatformState& s) {
  app->add_option("--stack", s.stack, "software stack in place of the platform's own: a preset in stacks/ or a stack "
                                      "TOML (docs/stacks.md)")
      ->check(file_name());
}

void add_platform_argument(CLI::App* app, PlatformState& s) {
  app->add_option("platform", s.platform, "a platform TOML file, or a preset name from platforms/")
      ->required();
  app->add_option("--set", s.overrides, "override one key, e.g. --set node.count=16 (repeatable)");
}

int run_show(const PlatformState& s) {
  const topology::TopologyReport report = app::platform_report({s.platform, s.overrides, s.stack});
  if (s.json) std::cout << dump_checked(topology::report_json(report), "platform report");
  else std::cout << topology::format_report(report);
  return 0;
}

int run_xml(const PlatformState& s) {
  const bool to_stdout = s.output.empty() || s.output == "-";
  if (!to_stdout) {
    check_output_path("--output", s.output);
    refuse_input_as_output("--output", s.output, {{"platform", s.platform}});
  }
  const app::PlatformXml xml = app::platform_xml({s.platform, s.overrides, s.stack});
  const topology::PlatformPlan& plan = xml.plan;
  if (to_stdout) {
    topology::write_platform_xml(plan, xml.name, std::cout);
    return 0;
  }
  OutputFile out("--output", s.output);
  topology::write_platform_xml(plan, xml.name, out.stream());
  out.close();
  std::cerr << "wrote " << s.output << ": " << plan.host_count << " NPU hosts, " << plan.link_count
            << " links, " << plan.route_count << " routes\n";
  return 0;
}

int run_check(const PlatformState& s) {
  const sim::PlatformShape p = app::check_platform({s.platform, s.overrides, s.stack});
  std::cout << fmt::format("{}: {} NPU hosts ({} nodes x {} NPUs), node0.npu0 .. node{}.npu{}, follows the platform "
                           "contract\n",
                           p.source, p.nodes * p.npus_per_node, p.nodes, p.npus_per_node, p.nodes - 1,
                           p.npus_per_node - 1);
  return 0;
}

}  // namespace

Command add_platform_command(CLI::App& epsim) {
  auto state = std::make_shared<PlatformState>();
  CLI::App* app =
      epsim.add_subcommand("platform", "show a cluster, write its SimGrid XML, check a platform");
  app->require_subcommand(1);

  state->show =
      app->add_subcommand("show", "NPUs, links, routes per class of NPU pairs, bisection, diameter");
  add_platform_argument(state->show, *state);
  add_stack_option(state->show, *state);
  state->show->add_flag("--json", state->json, "print JSON (SI units) instead of text");

  state->xml = app->add_subcommand("xml", "write the SimGrid platform XML the simulator builds");
  add_platform_argument(state->xml, *state);
  state->xml->add_option("-o,--output", state->output, "output file (default: standard output)")->check(file_name());

  state->check = app->add_subcommand(
      "check", "check a platform (preset, TOML or SimGrid XML) as run and sweep do, without simulating");
  state->check->add_option("platform", state->platform, "a preset name, a platform TOML file or a SimGrid XML file")
      ->required();
  state->check->add_option("--set", state->overrides, "override one key of a TOML platform (repeatable)");
  add_stack_option(state->check, *state);

  state->list = app->add_subcommand("list", "list the presets in platforms/");

  return Command{app, [state]() {
                   if (state->show->parsed()) return run_show(*state);
                   if (state->xml->parsed()) return run_xml(*state);
                   if (state->check->parsed()) return run_check(*state);
                   for (const std::string& name : app::platform_presets()) std::cout << name << "\n";
                   return 0;
                 }};
}

}  // namespace epsim::tools
