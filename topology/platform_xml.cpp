// SimGrid XML output: one <zone routing="Full"> per plan zone, links
// before child zones, routes last (the order SimGrid's parser requires).
#include "topology/platform_xml.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

namespace epsim::topology {

namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// SimGrid unit strings, exact to the last digit.
std::string bandwidth(double Bps) { return fmt::format("{:.17g}Bps", Bps); }
std::string latency(double s) { return fmt::format("{:.17g}s", s); }

void write_link(const LinkSpec& l, const std::string& pad, std::ostream& out) {
  fmt::print(out, "{}<link id=\"{}\" bandwidth=\"{}\" latency=\"{}\"{}/>\n", pad, escape(l.name),
             bandwidth(l.bandwidth_Bps), latency(l.latency_s),
             l.sharing == LinkSharing::kSplitDuplex ? " sharing_policy=\"SPLITDUPLEX\"" : "");
}

void write_route(const PlanRoute& r, const std::string& pad, std::ostream& out) {
  bool zone_route = !r.gw_src.empty();
  if (zone_route) {
    fmt::print(out, "{}<zoneRoute src=\"{}\" dst=\"{}\" gw_src=\"{}\" gw_dst=\"{}\"{}>\n", pad, escape(r.src),
               escape(r.dst), escape(r.gw_src), escape(r.gw_dst), r.symmetrical ? "" : " symmetrical=\"NO\"");
  } else {
    fmt::print(out, "{}<route src=\"{}\" dst=\"{}\"{}>\n", pad, escape(r.src), escape(r.dst),
               r.symmetrical ? "" : " symmetrical=\"NO\"");
  }
  for (const PlanLinkUse& u : r.links) {
    fmt::print(out, "{}  <link_ctn id=\"{}\"{}/>\n", pad, escape(u.link),
               u.direction.empty() ? "" : " direction=\"" + u.direction + "\"");
  }
  fmt::print(out, "{}</{}>\n", pad, zone_route ? "zoneRoute" : "route");
}

void write_zone(const PlanZone& z, int depth, std::ostream& out) {
  std::string pad(static_cast<std::size_t>(2 * depth), ' ');
  std::string in = pad + "  ";
  fmt::print(out, "{}<zone id=\"{}\" routing=\"Full\">\n", pad, escape(z.name));
  for (const PlanHost& h : z.hosts) {
    fmt::print(out, "{}<host id=\"{}\" speed=\"{:.17g}f\">\n", in, escape(h.name), h.speed_flops);
    for (const auto& [k, v] : h.properties) {
      fmt::print(out, "{}  <prop id=\"{}\" value=\"{}\"/>\n", in, escape(k), escape(v));
    }
    fmt::print(out, "{}</host>\n", in);
  }
  for (const std::string& r : z.routers) fmt::print(out, "{}<router id=\"{}\"/>\n", in, escape(r));
  if (z.children.empty()) {
    for (const LinkSpec& l : z.links) write_link(l, in, out);
  } else if (!z.links.empty()) {
    // SimGrid's parser takes a <link> before a <zone> as the start of a
    // leaf zone, and routes in child zones may use these links: declare them
    // first, in a routing-less zone of their own.
    fmt::print(out, "{}<zone id=\"{}.links\" routing=\"None\">\n", in, escape(z.name));
    for (const LinkSpec& l : z.links) write_link(l, in + "  ", out);
    fmt::print(out, "{}</zone>\n", in);
  }
  for (const PlanZone& c : z.children) write_zone(c, depth + 1, out);
  for (const PlanRoute& r : z.routes) write_route(r, in, out);
  fmt::print(out, "{}</zone>\n", pad);
}

}  // namespace

void write_platform_xml(const PlatformPlan& plan, const std::string& title, std::ostream& out) {
  out << "<?xml version='1.0'?>\n"
      << "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
      << "<!-- " << escape(title) << ": written by `epsim platform xml`.\n"
      << "     Naming contract: docs/platform.md. " << plan.host_count << " NPU hosts, " << plan.link_count
      << " links, " << plan.route_count << " routes. -->\n"
      << "<platform version=\"4.1\">\n";
  write_zone(plan.root, 1, out);
  out << "</platform>\n";
}

}  // namespace epsim::topology
