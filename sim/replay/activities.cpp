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

std::vector<Transfer> solver_transfers(const CollectivePhase& phase, const PlatformFacts& platform,
                                       const std::vector<bool>& contended) {
  const std::vector<Transfer>& transfers = phase.transfers;
  const std::size_t count = transfers.size();
  // Interior links of transfer k, interior[at[k]] .. interior[at[k + 1]]:
  // its route runs HBM, interior links, HBM (the platform contract). Copied:
  // the route table's pointers are valid only until the next route is fetched.
  std::vector<int> interior;
  std::vector<std::size_t> at = {0};
  std::vector<char> leaves(count, 0);
  for (std::size_t k = 0; k < count; ++k) {
    const Transfer& t = transfers[k];
    auto [first, last] = platform.routes.links(t.src_npu, t.dst_npu);
    if (last - first >= 3 && *first == platform.npus[t.src_npu].hbm_link &&
        *(last - 1) == platform.npus[t.dst_npu].hbm_link) {
      leaves[k] = 1;
      for (const int* l = first + 1; l != last - 1; ++l) {
        interior.push_back(*l);
        leaves[k] = leaves[k] && !contended[*l] && platform.links[*l].shared;
      }
    }
    at.push_back(interior.size());
  }
  auto links_of = [&](std::size_t k) { return std::make_pair(interior.begin() + at[k], interior.begin() + at[k + 1]); };
  // Per-link and per-NPU figures over the links and NPUs the round touches
  // only: the platform's every link, zeroed per call, costs more than a
  // round on large platforms. Each gets a compact slot from a table per
  // thread, reset on the way out.
  thread_local std::vector<int> link_slot, npu_slot;
  link_slot.resize(std::max(link_slot.size(), platform.links.size()), -1);
  npu_slot.resize(std::max(npu_slot.size(), platform.npus.size()), -1);
  std::vector<int> links, npus;  // by slot
  auto slot_in = [](std::vector<int>& table, std::vector<int>& ids, int id) {
    int& slot = table[static_cast<std::size_t>(id)];
    if (slot < 0) {
      slot = static_cast<int>(ids.size());
      ids.push_back(id);
    }
    return static_cast<std::size_t>(slot);
  };
  for (int l : interior) slot_in(link_slot, links, l);
  for (const Transfer& t : transfers) {
    slot_in(npu_slot, npus, t.src_npu);
    slot_in(npu_slot, npus, t.dst_npu);
  }
  struct Reset {
    const std::vector<int>& links;
    const std::vector<int>& npus;
    ~Reset() {
      for (int l : links) link_slot[static_cast<std::size_t>(l)] = -1;
      for (int n : npus) npu_slot[static_cast<std::size_t>(n)] = -1;
    }
  } reset{links, npus};
  auto link_index = [&](int l) { return static_cast<std::size_t>(link_slot[static_cast<std::size_t>(l)]); };
  auto npu_index = [&](int n) { return static_cast<std::size_t>(npu_slot[static_cast<std::size_t>(n)]); };
  // A link a staying transfer crosses keeps every transfer crossing it
  // (leaving would change that link's bytes): repeat until none changes.
  std::vector<char> pinned(links.size(), 0);
  for (std::size_t k = 0; k < count; ++k)
    if (!leaves[k])
      for (auto [l, end] = links_of(k); l != end; ++l) pinned[link_index(*l)] = 1;
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t k = 0; k < count; ++k) {
      if (!leaves[k]) continue;
      auto [first, last] = links_of(k);
      if (std::none_of(first, last, [&](int l) { return pinned[link_index(l)] != 0; })) continue;
      leaves[k] = 0;
      changed = true;
      for (auto l = first; l != last; ++l) pinned[link_index(*l)] = 1;
    }
  }
  // Bytes on each link the leaving transfers alone cross, and on each HBM.
  if (std::find(leaves.begin(), leaves.end(), 1) == leaves.end()) return transfers;
  std::vector<double> link_bytes(links.size(), 0.0);
  std::vector<double> hbm_bytes(npus.size(), 0.0);
  for (std::size_t k = 0; k < count; ++k) {
    if (!leaves[k]) continue;
    for (auto [l, end] = links_of(k); l != end; ++l) link_bytes[link_index(*l)] += transfers[k].bytes;
    hbm_bytes[npu_index(transfers[k].src_npu)] += transfers[k].bytes;
    hbm_bytes[npu_index(transfers[k].dst_npu)] += transfers[k].bytes;
  }
  // The tightest link (largest bytes / bandwidth; the lowest id on ties, and
  // link 0 when no link carries bytes, as a pass over every link would find).
  std::vector<int> ascending = links;
  std::sort(ascending.begin(), ascending.end());
  auto load_of = [&](int l) {
    return link_bytes[link_index(l)] / platform.links[static_cast<std::size_t>(l)].bandwidth_Bps;
  };
  int tightest = 0;
  double tightest_load = link_slot[0] >= 0 ? load_of(0) : 0.0;
  for (int l : ascending)
    if (l != 0 && load_of(l) > tightest_load) {
      tightest = l;
      tightest_load = load_of(l);
    }
  const double bytes = link_slot[static_cast<std::size_t>(tightest)] >= 0 ? link_bytes[link_index(tightest)] : 0.0;
  // The stand-in: a leaving transfer over the tightest link whose other
  // links are no narrower (so it binds nowhere else first) and whose HBMs'
  // loopbacks hold the bytes it takes back.
  const double capacity_Bps = platform.links[static_cast<std::size_t>(tightest)].bandwidth_Bps;
  std::size_t stand_in = count;
  for (std::size_t k = 0; k < count && stand_in == count; ++k) {
    auto [first, last] = links_of(k);
    if (!leaves[k] || std::find(first, last, tightest) == last) continue;
    const bool fits = hbm_bytes[npu_index(transfers[k].src_npu)] >= bytes &&
                      hbm_bytes[npu_index(transfers[k].dst_npu)] >= bytes &&
                      std::all_of(first, last, [&](int l) { return platform.links[l].bandwidth_Bps >= capacity_Bps; });
    if (fits) stand_in = k;
  }
  std::vector<Transfer> out;
  for (std::size_t k = 0; k < count; ++k)
    if (!leaves[k]) out.push_back(transfers[k]);
  if (stand_in < count) {
    const Transfer& s = transfers[stand_in];
    out.push_back({s.src_npu, s.dst_npu, bytes});
    hbm_bytes[npu_index(s.src_npu)] -= bytes;
    hbm_bytes[npu_index(s.dst_npu)] -= bytes;
  } else {
    // No one transfer can stand for the tightest link (skewed traffic: its
    // bytes come from many senders): every leaving transfer crossing it
    // stays as it is. The tightest link keeps its bytes, and the other
    // private links carry less than they did, so stay no tighter.
    for (std::size_t k = 0; k < count; ++k) {
      auto [first, last] = links_of(k);
      if (!leaves[k] || std::find(first, last, tightest) == last) continue;
      out.push_back(transfers[k]);
      hbm_bytes[npu_index(transfers[k].src_npu)] -= transfers[k].bytes;
      hbm_bytes[npu_index(transfers[k].dst_npu)] -= transfers[k].bytes;
    }
  }
  std::sort(npus.begin(), npus.end());
  for (int n : npus)
    if (hbm_bytes[npu_index(n)] > 0) out.push_back({n, n, hbm_bytes[npu_index(n)]});
  return out;
}

namespace {

// An activity with nothing to do: started once `at_s` has passed, it ends at once.
PendingExec timer(s4u::Host* host, double at_s) {
  return {s4u::Exec::init()->set_hosts({host, host})->set_flops_amounts({0.0, 0.0})->set_bytes_amounts(
              {0.0, 0.0, 0.0, 0.0}),
          at_s, true};
}

}  // namespace

std::vector<PendingExec> round_execs(const CollectivePhase& phase, const PlatformFacts& platform,
                                     const std::vector<s4u::Host*>& hosts, double share, bool latency,
                                     const RoundCost& nominal, const std::vector<Transfer>* carried) {
  if (phase.control) return {timer(hosts.front(), phase.floor_s)};
  std::vector<PendingExec> out = round_transfer_execs(phase, platform, hosts, share, latency, nominal, carried);
  const double scale = share * (phase.per_step ? 1.0 : static_cast<double>(phase.steps));
  if (phase.floor_s > 0 && !phase.transfers.empty())
    out.push_back(timer(hosts[static_cast<std::size_t>(phase.transfers.front().src_npu)],
                        (latency ? nominal.latency_s : 0.0) + phase.floor_s * scale));
  return out;
}

std::vector<PendingExec> round_transfer_execs(const CollectivePhase& phase, const PlatformFacts& platform,
                                              const std::vector<s4u::Host*>& hosts, double share, bool latency,
                                              const RoundCost& nominal, const std::vector<Transfer>* carried) {
  const double scale = share * (phase.per_step ? 1.0 : static_cast<double>(phase.steps));
  const double transfer_s = nominal.transfer_s;
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
                     latency ? phase.setup_s + route_latency_s(platform, t.src_npu, t.dst_npu) : 0.0, false,
                     {std::min(t.src_npu, t.dst_npu), std::max(t.src_npu, t.dst_npu)}});
    }
    return out;
  }
  std::vector<int> slot_of(platform.npus.size(), -1);  // NPU -> its host's index in the parallel task
  for (const Transfer& t : phase.transfers) slot_of[t.src_npu] = slot_of[t.dst_npu] = 0;
  std::vector<int> npus;  // ascending
  for (std::size_t npu = 0; npu < slot_of.size(); ++npu)
    if (slot_of[npu] == 0) {
      slot_of[npu] = static_cast<int>(npus.size());
      npus.push_back(static_cast<int>(npu));
    }
  const std::size_t n = npus.size();
  std::vector<s4u::Host*> ptask_hosts;
  std::vector<double> flops;
  for (int npu : npus) {
    ptask_hosts.push_back(hosts[npu]);
    flops.push_back(held_flops(npu));
  }
  std::vector<double> bytes(n * n, 0.0);
  auto slot = [&](int npu) { return static_cast<std::size_t>(slot_of[npu]); };
  // The same sharing with fewer entries: the solver transfers (a stand-in
  // and HBM loopbacks, already about one entry per NPU) or the phase's
  // transfers re-paired with the same bytes on every link (ptask_entries.hpp).
  // Loopbacks (HBM only) need no re-pairing.
  std::vector<Transfer> between;
  for (const Transfer& t : carried ? *carried : phase.transfers) {
    if (t.src_npu == t.dst_npu)
      bytes[slot(t.src_npu) * n + slot(t.dst_npu)] += t.bytes * scale;
    else
      between.push_back(t);
  }
  for (const Transfer& t : ptask_entries(between, platform))
    bytes[slot(t.src_npu) * n + slot(t.dst_npu)] += t.bytes * scale;
  out.push_back({s4u::Exec::init()->set_hosts(ptask_hosts)->set_flops_amounts(flops)->set_bytes_amounts(bytes),
                 latency ? nominal.latency_s : 0.0, false, std::move(npus)});
  return out;
}

RoundLinkBytes round_link_bytes(const CollectivePhase& phase, const PlatformFacts& platform) {
  const double scale = phase.per_step ? 1.0 : static_cast<double>(phase.steps);
  std::vector<double> link_bytes(platform.links.size(), 0.0);
  std::vector<char> crossed(platform.links.size(), 0);
  RoundLinkBytes out;
  for (const Transfer& t : phase.transfers) {
    auto [first, last] = platform.routes.links(t.src_npu, t.dst_npu);
    for (const int* l = first; l != last; ++l) {
      if (!crossed[*l]) out.links.push_back(*l);
      crossed[*l] = 1;
      link_bytes[*l] += t.bytes * scale;
    }
  }
  std::sort(out.links.begin(), out.links.end());
  for (int l : out.links) out.bytes.push_back(link_bytes[l]);
  return out;
}

}  // namespace epsim::sim
