// The SimGrid parallel tasks the replay starts: a roofline kernel on one
// NPU, and the rounds of a collective phase. Nothing else calls Exec::init.
#pragma once

#include <vector>

#include <simgrid/s4u/Exec.hpp>

#include "sim/replay/collectives.hpp"
#include "sim/platform/platform_facts.hpp"

namespace simgrid::s4u {
class Host;
}

namespace epsim::sim {

// max(flops / speed, hbm_bytes / HBM bandwidth) alone: the host twice, the
// flops on the first, the bytes over the loopback route (= the HBM link).
// `flops` are at host-speed scale (the caller converts from the dtype's peak).
simgrid::s4u::ExecPtr roofline_exec(simgrid::s4u::Host* host, double flops, double hbm_bytes);

// The same kernel on several NPUs with identical amounts as one parallel
// task: host i computes flops[i] and moves hbm_bytes over its own loopback.
// All parts progress at one rate, so it is exact only while the NPUs see
// identical contention (docs/simulator.md).
simgrid::s4u::ExecPtr fused_roofline_exec(const std::vector<simgrid::s4u::Host*>& hosts,
                                          const std::vector<double>& flops, double hbm_bytes);

// An activity not started yet and the route latency it must wait before it
// starts. The replay pays latencies itself (it sets the links' SimGrid
// latencies to 0 while it runs): that is what ptask_L07 does with a route's
// latency (no progress until it has passed), and it lets a pipeline stage
// pay its latency once rather than once per chunk.
struct PendingExec {
  simgrid::s4u::ExecPtr exec;
  double latency_s = 0;
  // An empty activity that only marks a time: a round's floor (its
  // kernel's copies) or a control phase; it carries no bytes.
  bool timer = false;
  // The NPUs whose compute or HBM it uses while it runs, ascending (none: a timer).
  std::vector<int> npus = {};
};

// The activities of one round of `phase`, every transfer carrying `share`
// of its bytes: one parallel task (latency: its largest route latency,
// nominal.latency_s), or one per transfer when phase.per_transfer (latency:
// its own route's); without `latency`, none. `nominal` is the round's
// round_cost at `share`, latency paid (RoundCosts::at). Each activity also
// holds `comm_compute_share` of its NPUs' compute for nominal.transfer_s,
// which slows kernels running beside it (the SMs/AI cores a communication
// kernel uses). A phase with a floor_s adds a timer that ends floor_s x the
// share after the latency, so the round lasts at least that (its kernel's
// copies); a control phase is that timer alone, from the start.
// With `carried` (solver_transfers() of the phase), the parallel task
// carries those bytes instead of the phase's transfers: the same sharing,
// far fewer SimGrid constraints. Latency and held compute still follow
// phase.transfers.
std::vector<PendingExec> round_execs(const CollectivePhase& phase, const PlatformFacts& platform,
                                     const std::vector<simgrid::s4u::Host*>& hosts, double share, bool latency,
                                     const RoundCost& nominal, const std::vector<Transfer>* carried = nullptr);

// The same without the floor's timer: the transfers' activities alone.
std::vector<PendingExec> round_transfer_execs(const CollectivePhase& phase, const PlatformFacts& platform,
                                              const std::vector<simgrid::s4u::Host*>& hosts, double share,
                                              bool latency, const RoundCost& nominal,
                                              const std::vector<Transfer>* carried = nullptr);

// What one parallel task for a round of `phase` must carry for SimGrid to
// share exactly as it would with all of phase.transfers. A link between
// two HBMs that `contended` leaves free and whose every transfer can leave
// is a constraint of that task alone; of all such links only the tightest
// (largest bytes / bandwidth) can ever limit its rate (the fair-bottleneck
// solver gives a constraint with one variable its whole remainder). So
// those transfers leave, their bytes stay on their HBMs as loopback
// transfers (src == dst), and one of them, crossing the tightest link,
// stays with that link's bytes (taken back from its HBMs' loopbacks).
// When no one leaving transfer can stand for the tightest link (its HBMs
// lack the room, or a link of its route is narrower), every leaving
// transfer crossing that link stays instead. Returns the phase's
// transfers unchanged when no transfer can leave.
std::vector<Transfer> solver_transfers(const CollectivePhase& phase, const PlatformFacts& platform,
                                       const std::vector<bool>& contended);

// The links one round of `phase` crosses, ascending, and the bytes each
// carries at share 1 (a round at `share` carries that share of them).
struct RoundLinkBytes {
  std::vector<int> links;
  std::vector<double> bytes;
};
RoundLinkBytes round_link_bytes(const CollectivePhase& phase, const PlatformFacts& platform);

}  // namespace epsim::sim
