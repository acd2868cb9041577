// Construction of the replay's parallel tasks (ptask_L07).
#include "sim/replay/activities.hpp"

#include <algorithm>
#include <map>

#include <simgrid/s4u/Host.hpp>

#include "sim/replay/ptask_entries.hpp"

namespace epsim::sim {

namespace s4u = simgrid::s4u;

s4u::ExecPtr roofline_exec(s4u::Host* host, double flops, double hbm_bytes) {
  // A one-host parallel task drops its bytes; the host twice keeps them.
  return s4u::Exec::init()->set_hosts({host, host})->set_flops_amounts({flops, 0.0})->set_bytes_amounts(
      {hbm_bytes, 0.0, 0.0, 0.0});
}

s4u::ExecPtr fused_roofline_exec(const std::vector<s4u::Host*>& hosts, const std::vector<double>& flops,
                                 double hbm_bytes) {
  const std::size_t n = hosts.size();
  std::vector<double> bytes(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i) bytes[i * n + i] = hbm_bytes;
  return s4u::Exec::init()->set_hosts(hosts)->set_flops_amounts(flops)->set_bytes_amounts(bytes);
}

std::vector<PendingExec> round_execs(const CollectivePhase& phase, const PlatformFacts& platform,
                                     const std::vector<s4u::Host*>& hosts, double share, bool latency) {
  const double scale = share * (phase.per_step ? 1.0 : static_cast<double>(phase.steps));
  const double transfer_s = round_cost(phase, platform, share).transfer_s;
  // Compute a communication kernel holds on NPU n over the round.
  auto held_flops = [&](int n) {
    return platform.npus[n].comm_compute_share * platform.npus[n].flops_bf16_per_s * transfer_s;
  };
  std::vector<PendingExec> out;
  if (phase.per_transfer) {
    std::map<int, double> sent, received;
    for (const Transfer& t : phase.transfers) {
      sent[t.src_npu] += t.bytes;
      received[t.dst_npu] += t.bytes;
    }
    for (const Transfer& t : phase.transfers) {
      // Half the held compute at each end, split by byte share, so that an
      // NPU's transfers together hold its share while they run at nominal rate.
      double src_flops = 0.5 * held_flops(t.src_npu) * t.bytes / sent[t.src_npu];
      double dst_flops = 0.5 * held_flops(t.dst_npu) * t.bytes / received[t.dst_npu];
      out.push_back({s4u::Exec::init()
                         ->set_hosts({hosts[t.src_npu], hosts[t.dst_npu]})
                         ->set_flops_amounts({src_flops, dst_flops})
                         ->set_bytes_amounts({0.0, t.bytes * scale, 0.0, 0.0}),
                     latency ? phase.setup_s + route_latency_s(platform, t.src_npu, t.dst_npu) : 0.0});
    }
    return out;
  }
  std::vector<int> npus;
  double latency_s = 0;
  for (const Transfer& t : phase.transfers) {
    npus.push_back(t.src_npu);
    npus.push_back(t.dst_npu);
    if (latency) latency_s = std::max(latency_s, route_latency_s(platform, t.src_npu, t.dst_npu));
  }
  std::sort(npus.begin(), npus.end());
  npus.erase(std::unique(npus.begin(), npus.end()), npus.end());
  const std::size_t n = npus.size();
  std::vector<s4u::Host*> ptask_hosts;
  std::vector<double> flops;
  for (int npu : npus) {
    ptask_hosts.push_back(hosts[npu]);
    flops.push_back(held_flops(npu));
  }
  std::vector<double> bytes(n * n, 0.0);
  auto slot = [&](int npu) { return static_cast<std::size_t>(std::lower_bound(npus.begin(), npus.end(), npu) - npus.begin()); };
  // The same bytes on every link with fewer entries: SimGrid's cost (ptask_entries.hpp).
  for (const Transfer& t : ptask_entries(phase.transfers, platform))
    bytes[slot(t.src_npu) * n + slot(t.dst_npu)] += t.bytes * scale;
  if (latency) latency_s += phase.setup_s;
  out.push_back(
      {s4u::Exec::init()->set_hosts(ptask_hosts)->set_flops_amounts(flops)->set_bytes_amounts(bytes), latency_s});
  return out;
}

void add_round_link_bytes(const CollectivePhase& phase, const PlatformFacts& platform, std::vector<double>& link_bytes,
                          double share) {
  const double scale = share * (phase.per_step ? 1.0 : static_cast<double>(phase.steps));
  for (const Transfer& t : phase.transfers) {
    auto [first, last] = platform.routes.links(t.src_npu, t.dst_npu);
    for (const int* l = first; l != last; ++l) link_bytes[*l] += t.bytes * scale;
  }
}

}  // namespace epsim::sim
