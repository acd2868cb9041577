// The links a folded graph's EP groups share with the groups it leaves out
// (workloads/replica_fold.hpp). Where several groups' own traffic crosses
// one link (a spine, a leaf's backplane), the kept group must see its
// share of that link: its bandwidth over the number of groups using it,
// which gives the kept group's activities exactly the rates the identical
// activities of every group would get there (docs/simulator.md, "Exact
// reductions"; the gradient sync, which spans groups, is the exception
// documented there).
#pragma once

#include <vector>

#include "sim/platform/npu_platform.hpp"
#include "sim/platform/placement.hpp"
#include "sim/replay/replay.hpp"
#include "sim/platform/platform_facts.hpp"
#include "workloads/task_graph.hpp"

namespace epsim::sim {

// Per link of `platform`, how many of a stage's EP groups send their own
// traffic over it (dispatch, combine, pipeline transfers, TP all-reduces:
// every collective but the gradient sync): the kept group's routes and the
// same routes shifted to each left-out group's NPUs. All 0 or 1 for an
// unfolded graph, or when the groups share no link.
std::vector<int> replica_link_users(const PlatformFacts& platform, const Placement& placement,
                                    const workloads::TaskGraph& graph);

// Per link, whether the kept group's activities can load it: its own
// traffic's routes, and the routes of every gradient-sync transfer (planned
// with `all_reduce`) with a kept rank at either end. All true for an
// unfolded graph.
std::vector<char> kept_links(const PlatformFacts& platform, const Placement& placement,
                             const workloads::TaskGraph& graph, AllReduceAlgorithm all_reduce);

// Drops from a gradient sync's plan every transfer between two phantom
// ranks' NPUs whose route touches no kept link: such a link carries the
// sync alone, as its twin in the kept group does beside the kept group's
// own traffic (the groups are identical and the sync treats them alike),
// so it never binds before its twin and the round's rate is the same
// without it. What is left grows with the kept group, not with the job.
void drop_phantom_transfers(CollectivePlan& plan, const Placement& placement, const PlatformFacts& platform,
                            const std::vector<char>& kept);

// What share_replica_links did: links scaled to the kept group's share, and
// links the groups share that the gradient sync crosses too, left whole.
// The second kind is exact only while it does not saturate: there the kept
// group's traffic meets the whole sync but none of the other groups' traffic.
struct SharedLinks {
  int scaled = 0;
  std::vector<int> unscaled;  // link indices
};

// Divides the bandwidth of every shared link (not FATPIPE) that k > 1
// groups use (replica_link_users) by k, in SimGrid and in platform.facts,
// for the rest of the process's engine, except links a gradient sync of the
// graph crosses (planned with `resolved` options' all_reduce): a sync round
// carries every group's bytes, so it needs the whole link.
SharedLinks share_replica_links(LoadedPlatform& platform, const Placement& placement,
                                const workloads::TaskGraph& graph, const ReplayOptions& resolved);

}  // namespace epsim::sim
