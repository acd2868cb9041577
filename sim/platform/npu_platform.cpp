// NPU discovery and the platform-contract check: the one check every
// platform (built from a cluster or loaded from XML) goes through.
#include "sim/platform/npu_platform.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include "core/error.hpp"
#include "core/physical_ranges.hpp"
#include "core/units.hpp"
#include "topology/cluster_spec.hpp"

namespace epsim::sim {

namespace s4u = simgrid::s4u;

namespace {

struct Context {
  std::string path;
  [[noreturn]] void fail(const std::string& subject, const std::string& problem) const {
    throw InputError({path, 0, 0}, subject, problem);
  }
};

// A property value: a plain number (SI) or, when `kind` is given, a unit
// string such as "1.6TBps". Returns `fallback` when the property is absent.
double number_property(const Context& ctx, const s4u::Host* host, const char* key, std::optional<Quantity> kind,
                       double fallback) {
  const char* text = host->get_property(key);
  if (text == nullptr) return fallback;
  const std::string subject = fmt::format("host {} property {}", host->get_name(), key);
  char* end = nullptr;
  double value = std::strtod(text, &end);
  if (end == text || *end != '\0') {
    if (!kind) ctx.fail(subject, fmt::format("expected a plain number, got \"{}\"", text));
    try {
      value = parse_quantity(text, *kind);
    } catch (const std::invalid_argument& e) {
      ctx.fail(subject, e.what());
    }
  }
  if (!std::isfinite(value) || value < 0)
    ctx.fail(subject, fmt::format("expected a finite number >= 0, got \"{}\"", text));
  if (kind) {
    const std::string out_of_range = physical_range_problem(*kind, value);
    if (!out_of_range.empty()) ctx.fail(subject, fmt::format("{}, got \"{}\"", out_of_range, text));
  }
  return value;
}

// A link's facts, its bandwidth and latency inside their physical ranges.
LinkFacts link_facts(const Context& ctx, const s4u::Link* link) {
  LinkFacts f;
  f.name = link->get_name();
  f.bandwidth_Bps = link->get_bandwidth();
  f.latency_s = link->get_latency();
  f.shared = link->get_sharing_policy() != s4u::Link::SharingPolicy::FATPIPE;
  if (!(f.bandwidth_Bps > 0)) ctx.fail("link " + f.name, "bandwidth must be > 0");
  for (auto [kind, what, value] : {std::tuple{Quantity::kBandwidth, "bandwidth", f.bandwidth_Bps},
                                   std::tuple{Quantity::kTime, "latency", f.latency_s}}) {
    const std::string out_of_range = physical_range_problem(kind, value);
    if (!out_of_range.empty()) ctx.fail("link " + f.name, fmt::format("{} {}", what, out_of_range));
  }
  return f;
}

// Reads the decimal index starting at `at` (advanced past its digits):
// false unless it has 1 to 9 digits and no leading zero.
bool index_at(const std::string& name, std::size_t& at, int& out) {
  const std::size_t start = at;
  out = 0;
  while (at < name.size() && name[at] >= '0' && name[at] <= '9') {
    if (at - start == 9) return false;
    out = out * 10 + (name[at++] - '0');
  }
  return at > start && !(name[start] == '0' && at - start > 1);
}

// "node{N}.npu{I}" -> (N, I); false for any other name ("node01.npu0"
// included). Parsed by hand: <regex> trips -Werror under the sanitizer build.
bool parse_npu_name(const std::string& name, int& node, int& local) {
  if (name.compare(0, 4, "node") != 0) return false;
  std::size_t at = 4;
  if (!index_at(name, at, node) || name.compare(at, 4, ".npu") != 0) return false;
  at += 4;
  return index_at(name, at, local) && at == name.size();
}

bool close(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b)); }

// The dispatch/combine kernels' costs (the cluster's [kernels]): times and
// copy rates within the physical ranges, absent ones at their defaults.
KernelCosts kernel_properties(const Context& ctx, const s4u::Host* host, const std::string& subject) {
  KernelCosts k;
  const std::pair<const char*, double*> times[] = {
      {"kernel_launch", &k.launch_s},
      {"kernel_dispatch_peer_cost", &k.dispatch_peer_s},
      {"kernel_combine_peer_cost", &k.combine_peer_s},
      {"low_latency_launch", &k.low_latency_launch_s},
      {"low_latency_peer_cost", &k.low_latency_peer_s},
      {"collective_launch", &k.collective_launch_s},
      {"collective_peer_cost", &k.collective_peer_s},
  };
  for (const auto& [key, value] : times) {
    *value = number_property(ctx, host, key, Quantity::kTime, 0);
    if (!(*value >= 0)) ctx.fail(subject, fmt::format("property {} must be >= 0, got {:g}", key, *value));
  }
  for (auto [key, value] : {std::pair{"kernel_dispatch_copy_rate", &k.dispatch_copy_Bps},
                            std::pair{"kernel_combine_copy_rate", &k.combine_copy_Bps}})
    *value = number_property(ctx, host, key, Quantity::kBandwidth, 0);
  if (const char* m = host->get_property("kernel_messages")) {
    if (std::string(m) != "rank" && std::string(m) != "selection")
      ctx.fail(subject, fmt::format("property kernel_messages must be \"rank\" or \"selection\", got \"{}\"", m));
    k.per_selection = std::string(m) == "selection";
  }
  if (const char* d = host->get_property("dispatch_kernel")) {
    const auto& names = topology::kDispatchKernelNames;
    const auto it = std::find_if(names.begin(), names.end(), [d](const char* n) { return std::string(n) == d; });
    if (it == names.end())
      ctx.fail(subject, fmt::format("property dispatch_kernel must be one of {}, got \"{}\"", fmt::join(names, ", "), d));
    k.dispatch = static_cast<topology::DispatchKernel>(it - names.begin());
  }
  const double package = number_property(ctx, host, "kernel_package_npus", std::nullopt, 1);
  if (!(package >= 1 && package <= 64 && package == std::floor(package)))
    ctx.fail(subject, fmt::format("property kernel_package_npus must be an integer in [1, 64], got {:g}", package));
  k.package_npus = static_cast<int>(package);
  return k;
}

}  // namespace

LoadedPlatform discover_platform(const s4u::Engine& engine, const std::string& platform_path) {
  const Context ctx{platform_path};
  std::map<std::pair<int, int>, s4u::Host*> by_position;
  for (s4u::Host* host : engine.get_all_hosts()) {
    int node = 0, local = 0;
    if (parse_npu_name(host->get_name(), node, local)) by_position[{node, local}] = host;
  }
  if (by_position.empty()) ctx.fail("hosts", "no NPU host named node{N}.npu{I} (N, I from 0)");

  LoadedPlatform out;
  PlatformFacts& facts = out.facts;
  facts.nodes = by_position.rbegin()->first.first + 1;
  for (const auto& [pos, host] : by_position) facts.npus_per_node = std::max(facts.npus_per_node, pos.second + 1);
  for (int n = 0; n < facts.nodes; ++n) {
    for (int i = 0; i < facts.npus_per_node; ++i) {
      if (by_position.count({n, i}) == 0)
        ctx.fail("hosts", fmt::format("missing host node{}.npu{}: NPUs must form a full grid of {} nodes x {} NPUs",
                                      n, i, facts.nodes, facts.npus_per_node));
    }
  }

  std::map<const s4u::Link*, int> link_index;
  auto index_of = [&](const s4u::Link* link) {
    auto [it, inserted] = link_index.emplace(link, static_cast<int>(facts.links.size()));
    if (inserted) facts.links.push_back(link_facts(ctx, link));
    return it->second;
  };

  for (const auto& [pos, host] : by_position) {
    NpuFacts npu;
    npu.name = host->get_name();
    npu.node = pos.first;
    npu.local = pos.second;
    const std::string subject = "host " + npu.name;
    npu.flops_bf16_per_s = host->get_speed();
    if (!(npu.flops_bf16_per_s > 0)) ctx.fail(subject, "speed (the bf16 peak) must be > 0");
    const std::string speed_out_of_range = physical_range_problem(Quantity::kFlopRate, npu.flops_bf16_per_s);
    if (!speed_out_of_range.empty()) ctx.fail(subject, "speed (the bf16 peak) " + speed_out_of_range);
    double bf16 = number_property(ctx, host, "flops_bf16", Quantity::kFlopRate, npu.flops_bf16_per_s);
    if (!close(bf16, npu.flops_bf16_per_s))
      ctx.fail(subject, fmt::format("property flops_bf16 ({:g}) must equal the host speed ({:g} FLOP/s)", bf16,
                                    npu.flops_bf16_per_s));
    // Absent FP8/INT8 peaks stay 0: kernels in those dtypes need the workload's fallback (compute_precision.hpp).
    npu.flops_int8_per_s = number_property(ctx, host, "flops_int8", Quantity::kFlopRate, 0);
    npu.flops_fp8_per_s = number_property(ctx, host, "flops_fp8", Quantity::kFlopRate, 0);
    npu.flops_fp32_per_s = number_property(ctx, host, "flops_fp32", Quantity::kFlopRate, npu.flops_bf16_per_s);
    if (!(npu.flops_fp32_per_s > 0)) ctx.fail(subject, "FLOP rates must be > 0");
    npu.hbm_bandwidth_Bps = number_property(ctx, host, "hbm_bandwidth", Quantity::kBandwidth, -1);
    if (!(npu.hbm_bandwidth_Bps > 0)) ctx.fail(subject, "property hbm_bandwidth (B/s) is required and must be > 0");
    npu.hbm_capacity_bytes = number_property(ctx, host, "hbm_capacity", Quantity::kBytes, 0);
    npu.comm_compute_share = number_property(ctx, host, "comm_compute_share", std::nullopt, 0);
    if (npu.comm_compute_share >= topology::kCommComputeShareLimit)
      ctx.fail(subject, fmt::format("property comm_compute_share must be in [0, 1), got {:g}", npu.comm_compute_share));
    for (auto [key, share] : {std::pair{"low_latency_nic_share", &npu.low_latency_nic_share},
                              std::pair{"low_latency_node_share", &npu.low_latency_node_share}}) {
      *share = number_property(ctx, host, key, std::nullopt, 1);
      if (!(*share > 0)) ctx.fail(subject, fmt::format("property {} must be > 0, got {:g}", key, *share));
    }
    npu.kernels = kernel_properties(ctx, host, subject);
    for (auto [key, expected] : {std::pair<const char*, int>{"node", npu.node}, {"local", npu.local}}) {
      const char* text = host->get_property(key);
      if (text != nullptr && std::string(text) != std::to_string(expected))
        ctx.fail(subject, fmt::format("property {} is \"{}\" but the name says {}", key, text, expected));
    }

    const s4u::Link* hbm = engine.link_by_name_or_null(npu.name + ".hbm");
    if (hbm == nullptr) ctx.fail(subject, "missing its HBM link " + npu.name + ".hbm");
    npu.hbm_link = index_of(hbm);
    const LinkFacts& hbm_facts = facts.links[npu.hbm_link];
    if (!close(hbm_facts.bandwidth_Bps, npu.hbm_bandwidth_Bps))
      ctx.fail("link " + hbm_facts.name, fmt::format("bandwidth {:g} B/s differs from the host's hbm_bandwidth {:g} B/s",
                                                     hbm_facts.bandwidth_Bps, npu.hbm_bandwidth_Bps));
    if (hbm_facts.latency_s != 0) ctx.fail("link " + hbm_facts.name, "an HBM link must have latency 0");
    facts.npus.push_back(npu);
    out.hosts.push_back(host);
  }

  // Routes are fetched when first used; loopbacks are checked now. The
  // resolver outlives this function, so it holds copies and a shared link index.
  auto state = std::make_shared<std::map<const s4u::Link*, int>>(std::move(link_index));
  auto shared_index = [state, &facts, &ctx](const s4u::Link* l) {
    auto [it, inserted] = state->emplace(l, static_cast<int>(facts.links.size()));
    if (inserted) facts.links.push_back(link_facts(ctx, l));
    return it->second;
  };
  // Every link of the platform gets its index now, in the engine's (name)
  // order, so that link indices do not depend on which routes were used.
  for (const s4u::Link* l : engine.get_all_links()) shared_index(l);
  const std::vector<s4u::Host*> hosts = out.hosts;
  std::vector<std::string> names;
  std::vector<int> hbm;
  for (const NpuFacts& npu : facts.npus) {
    names.push_back(npu.name);
    hbm.push_back(npu.hbm_link);
  }
  RouteTable::Resolver resolve = [ctx, hosts, names, hbm, state](int s, int d, std::vector<int>& ids,
                                                                 double& latency_s) {
    std::vector<s4u::Link*> links;
    const std::string subject = fmt::format("route {} -> {}", names[s], names[d]);
    try {
      hosts[s]->route_to(hosts[d], links, &latency_s);
    } catch (const std::exception& e) {
      ctx.fail(subject, e.what());
    }
    for (const s4u::Link* l : links) {
      auto it = state->find(l);
      if (it == state->end()) ctx.fail(subject, "uses a link the platform does not list");
      ids.push_back(it->second);
    }
    if (s == d) {
      if (ids.size() != 1 || ids[0] != hbm[s])
        ctx.fail(subject, "the loopback route of an NPU must be exactly its HBM link " + names[s] + ".hbm");
    } else if (ids.size() < 3 || ids.front() != hbm[s] || ids.back() != hbm[d]) {
      ctx.fail(subject, "a route between NPUs must start with the source's HBM link and end with the destination's");
    }
  };
  const int n = static_cast<int>(out.hosts.size());
  facts.routes = RouteTable(n, resolve);
  for (int s = 0; s < n; ++s) facts.routes.links(s, s);
  return out;
}

void check_all_routes(const PlatformFacts& facts) {
  const int n = facts.routes.npus();
  for (int s = 0; s < n; ++s) {
    for (int d = 0; d < n; ++d) facts.routes.links(s, d);
  }
}

}  // namespace epsim::sim
