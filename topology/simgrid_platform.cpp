// The one topology file that includes SimGrid: engine configuration, the
// C++ zone builder for a PlatformPlan, and checked loading of platform XML.
#include "topology/simgrid_platform.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <unordered_map>

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <xbt/log.h>

#include "core/error.hpp"
#include "topology/names.hpp"

namespace sg4 = simgrid::s4u;

namespace epsim::topology {

namespace {

using NetPoint = simgrid::kernel::routing::NetPoint;

// Name -> element maps filled while building, so routes find their ends.
struct Built {
  std::unordered_map<std::string, NetPoint*> points;
  std::unordered_map<std::string, const sg4::Link*> links;
};

sg4::LinkInRoute link_in_route(const Built& built, const PlanLinkUse& use) {
  const sg4::Link* link = built.links.at(use.link);
  if (use.direction == "UP") return sg4::LinkInRoute(link, sg4::LinkInRoute::Direction::UP);
  if (use.direction == "DOWN") return sg4::LinkInRoute(link, sg4::LinkInRoute::Direction::DOWN);
  return sg4::LinkInRoute(link);
}

sg4::NetZone* build_zone(const PlanZone& plan, sg4::NetZone* parent, Built& built) {
  sg4::NetZone* zone = sg4::create_full_zone(plan.name);
  if (parent) zone->set_parent(parent);
  built.points[plan.name] = zone->get_netpoint();
  for (const PlanHost& h : plan.hosts) {
    std::unordered_map<std::string, std::string> props(h.properties.begin(), h.properties.end());
    sg4::Host* host = zone->create_host(h.name, h.speed_flops)->set_properties(props)->seal();
    built.points[h.name] = host->get_netpoint();
  }
  for (const std::string& r : plan.routers) built.points[r] = zone->create_router(r);
  for (const LinkSpec& l : plan.links) {
    if (l.sharing == LinkSharing::kSplitDuplex) {
      built.links[l.name] =
          zone->create_split_duplex_link(l.name, l.bandwidth_Bps)->set_latency(l.latency_s)->seal();
    } else {
      built.links[l.name] = zone->create_link(l.name, l.bandwidth_Bps)->set_latency(l.latency_s)->seal();
    }
  }
  for (const PlanZone& child : plan.children) build_zone(child, zone, built);
  for (const PlanRoute& r : plan.routes) {
    std::vector<sg4::LinkInRoute> links;
    links.reserve(r.links.size());
    for (const PlanLinkUse& u : r.links) links.push_back(link_in_route(built, u));
    NetPoint* gw_src = r.gw_src.empty() ? nullptr : built.points.at(r.gw_src);
    NetPoint* gw_dst = r.gw_dst.empty() ? nullptr : built.points.at(r.gw_dst);
    zone->add_route(built.points.at(r.src), built.points.at(r.dst), gw_src, gw_dst, links, r.symmetrical);
  }
  return zone->seal();
}

double number_property(const sg4::Host* host, const char* key, bool required, const std::string& source) {
  const char* text = host->get_property(key);
  if (!text) {
    if (!required) return 0;
    throw InputError(SourceLocation{source}, host->get_name(),
                     std::string("missing host property \"") + key + "\"");
  }
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || errno != 0 || !(v >= 0)) {
    throw InputError(
        SourceLocation{source}, host->get_name(),
        std::string("host property \"") + key + "\" must be a number >= 0 in SI units, got \"" + text + "\"");
  }
  return v;
}

// A decimal index without leading zeros, < 10^9.
bool parse_index(const std::string& text, int& out) {
  if (text.empty() || text.size() > 9 || (text.size() > 1 && text[0] == '0')) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  out = std::stoi(text);
  return true;
}

// "node3.npu5" -> (3, 5); false for any other name.
bool parse_npu_name(const std::string& name, int& node, int& local) {
  const std::string prefix = "node", middle = ".npu";
  if (name.compare(0, prefix.size(), prefix) != 0) return false;
  std::size_t dot = name.find(middle, prefix.size());
  if (dot == std::string::npos) return false;
  return parse_index(name.substr(prefix.size(), dot - prefix.size()), node) &&
         parse_index(name.substr(dot + middle.size()), local);
}

// Runs SimGrid's parser on `path` in a child process: returns "" when it
// loads, else SimGrid's last words (xbt_die aborts cannot be caught in-process).
std::string probe_in_child(const std::string& path) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return "";
  pid_t pid = fork();
  if (pid < 0) {
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return "";
  }
  if (pid == 0) {
    close(pipe_fds[0]);
    dup2(pipe_fds[1], STDERR_FILENO);
    xbt_log_control_set("root.thres:critical");
    try {
      sg4::Engine::get_instance()->load_platform(path);
    } catch (const std::exception& e) {
      std::string msg = std::string(e.what()) + "\n";
      ssize_t ignored = write(STDERR_FILENO, msg.data(), msg.size());
      (void)ignored;
      _exit(1);
    }
    _exit(0);
  }
  close(pipe_fds[1]);
  std::string output;
  char buffer[4096];
  ssize_t n = 0;
  while ((n = read(pipe_fds[0], buffer, sizeof buffer)) > 0)
    output.append(buffer, static_cast<std::size_t>(n));
  close(pipe_fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  // Keep the last non-empty line: SimGrid's own message, without backtraces.
  std::string last;
  std::size_t start = 0;
  while (start < output.size()) {
    std::size_t end = output.find('\n', start);
    if (end == std::string::npos) end = output.size();
    std::string line = output.substr(start, end - start);
    if (line.find_first_not_of(" \t") != std::string::npos && line.rfind("Backtrace", 0) != 0) last = line;
    start = end + 1;
  }
  // Drop xbt_die's "[0.000000] ./src/file.cpp:529: [root/CRITICAL] " prefix.
  if (!last.empty() && last.front() == '[') {
    std::size_t category_end = last.find("] ", last.find(": ["));
    if (last.find(": [") != std::string::npos && category_end != std::string::npos) {
      last = last.substr(category_end + 2);
    }
  }
  return last.empty() ? "SimGrid could not load the file" : last;
}

}  // namespace

void configure_engine(bool verbose) {
  if (!verbose) xbt_log_control_set("root.thres:critical");
  sg4::Engine::set_config("host/model:ptask_L07");
  sg4::Engine::set_config("network/TCP-gamma:0");
}

std::vector<NpuHost> build_platform(const PlatformPlan& plan) {
  Built built;
  build_zone(plan.root, nullptr, built);
  sg4::Engine::get_instance()->seal_platform();
  return find_npu_hosts("built platform");
}

std::vector<NpuHost> build_platform(const ClusterSpec& spec) {
  return build_platform(make_platform_plan(TopologyGraph(spec)));
}

std::vector<NpuHost> load_platform_xml(const std::string& path) {
  if (access(path.c_str(), R_OK) != 0) throw InputError(SourceLocation{path}, "", "cannot open file");
  std::string failure = probe_in_child(path);
  if (failure.find("in prolog") != std::string::npos) {
    failure += " (SimGrid requires the line <!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">)";
  }
  if (!failure.empty()) {
    throw InputError(SourceLocation{path}, "", "not a valid SimGrid platform: " + failure);
  }
  try {
    sg4::Engine::get_instance()->load_platform(path);
  } catch (const std::exception& e) {
    throw InputError(SourceLocation{path}, "", std::string("not a valid SimGrid platform: ") + e.what());
  }
  return find_npu_hosts(path);
}

std::vector<NpuHost> check_platform_xml(const std::string& path) {
  int argc = 1;
  char name[] = "epsim";
  char* argv[] = {name, nullptr};
  sg4::Engine engine(&argc, argv);
  configure_engine();
  return load_platform_xml(path);
}

std::vector<NpuHost> find_npu_hosts(const std::string& source) {
  std::vector<NpuHost> npus;
  for (sg4::Host* host : sg4::Engine::get_instance()->get_all_hosts()) {
    const std::string& name = host->get_name();
    int node = 0, local = 0;
    if (!parse_npu_name(name, node, local)) continue;
    NpuHost h;
    h.name = name;
    h.node = node;
    h.local = local;
    h.flops_bf16 = number_property(host, "flops_bf16", true, source);
    h.flops_fp8 = number_property(host, "flops_fp8", false, source);
    h.flops_int8 = number_property(host, "flops_int8", false, source);
    if (h.flops_fp8 == 0 && h.flops_int8 == 0) {
      throw InputError(SourceLocation{source}, name,
                       "missing host property \"flops_fp8\" (or \"flops_int8\")");
    }
    h.hbm_bandwidth_Bps = number_property(host, "hbm_bandwidth", true, source);
    h.hbm_capacity_bytes = number_property(host, "hbm_capacity", true, source);
    h.comm_compute_share = number_property(host, "comm_compute_share", false, source);
    if (number_property(host, "node", true, source) != h.node ||
        number_property(host, "local", true, source) != h.local) {
      throw InputError(SourceLocation{source}, name,
                       "host properties \"node\"/\"local\" disagree with the host name");
    }
    // The roofline relies on the loopback being exactly the HBM link.
    std::vector<sg4::Link*> links;
    double latency = 0;
    host->route_to(host, links, &latency);
    if (links.size() != 1 || links[0]->get_name() != name + ".hbm") {
      throw InputError(SourceLocation{source}, name,
                       "the route from an NPU to itself must be exactly its link \"" + name + ".hbm\"");
    }
    if (links[0]->get_latency() != 0) {
      throw InputError(SourceLocation{source}, name + ".hbm", "an HBM link must have latency 0");
    }
    npus.push_back(h);
  }
  if (npus.empty()) {
    throw InputError(SourceLocation{source}, "",
                     "no NPU host found (NPU hosts are named nodeN.npuI, see docs/platform.md)");
  }
  std::sort(npus.begin(), npus.end(), [](const NpuHost& a, const NpuHost& b) {
    return std::tie(a.node, a.local) < std::tie(b.node, b.local);
  });
  return npus;
}

}  // namespace epsim::topology
