// Fewer (source, destination) entries for one parallel task with the same
// bytes on every link. SimGrid's ptask_L07 builds a parallel task by adding
// each entry's bytes to each link of its route, and finds the link's
// element by a linear search over the task's elements (one per host, then
// one per link): an all-to-all of n NPUs costs ~n^2 x route length x n
// comparisons (1024 NPUs: ~5 s of the 9 s it took). The task's sharing only
// sees the per-link sums, so any entries with the same sums on the same
// links give SimGrid the same system and the same times.
#pragma once

#include <vector>

#include "sim/platform/platform_facts.hpp"
#include "sim/replay/collectives.hpp"

namespace epsim::sim {

// Entries carrying exactly the per-link bytes of `transfers` (equal to
// 1e-12 relative on every link, and no bytes on any other link). Where
// routes split into a part that depends only on the source and a part that
// depends only on the destination (one switch; one rail of a rail-optimised
// network), a transfer can move to another (source, destination) pair
// without changing any link's sum, so the transfers of such a group are
// re-paired north-west-corner style: at most sources + destinations - 1
// entries instead of sources x destinations. The groups tried: all
// transfers, else the transfers whose routes have the same links but for
// the two at each end (HBM, then port or NIC): one rail, or one pair of
// leaves of a leaf/spine network. A group whose re-pairing would change a link's sum, or would pair
// an NPU with itself, keeps its transfers as they are. Transfer order is
// deterministic.
std::vector<Transfer> ptask_entries(const std::vector<Transfer>& transfers, const PlatformFacts& platform);

}  // namespace epsim::sim
