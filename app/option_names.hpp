// The names command-line options and sweep specs give the replay's choices,
// each mapped to its enum once, for every command (run, sweep, collective,
// validate, plan): parsing, help texts and refusals read these tables.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "sim/replay/collective_bench.hpp"
#include "sim/replay/collectives.hpp"
#include "sim/replay/replay.hpp"
#include "workloads/workload_spec.hpp"

namespace epsim::app {

template <class E>
struct Named {
  const char* name;
  E value;
};

inline constexpr Named<sim::Schedule> kScheduleNames[] = {{"serial", sim::Schedule::kSerial},
                                                          {"overlap", sim::Schedule::kOverlap}};
inline constexpr Named<sim::AlltoallAlgorithm> kAlltoallNames[] = {
    {"direct", sim::AlltoallAlgorithm::kDirect},
    {"hierarchical", sim::AlltoallAlgorithm::kHierarchical},
    {"low-latency", sim::AlltoallAlgorithm::kLowLatency}};
inline constexpr Named<sim::Fidelity> kFidelityNames[] = {{"per-flow", sim::Fidelity::kPerFlow},
                                                          {"aggregated", sim::Fidelity::kAggregated}};
// Group collectives as users choose them: mesh is what hierarchical becomes
// on a full-mesh node fabric (sim::resolve), never asked for by name.
inline constexpr Named<sim::AllReduceAlgorithm> kAllReduceNames[] = {
    {"ring", sim::AllReduceAlgorithm::kRing}, {"hierarchical", sim::AllReduceAlgorithm::kHierarchical}};

// `epsim collective --op`: nccl-tests' names (sim::to_string).
inline constexpr Named<sim::CollectiveOp> kCollectiveOpNames[] = {
    {"alltoall", sim::CollectiveOp::kAllToAll},
    {"alltoallv", sim::CollectiveOp::kAllToAllv},
    {"allreduce", sim::CollectiveOp::kAllReduce},
    {"reducescatter", sim::CollectiveOp::kReduceScatter},
    {"allgather", sim::CollectiveOp::kAllGather}};

// `epsim collective --routing`: routing.kind's values (workloads::to_string).
inline constexpr Named<workloads::RoutingKind> kRoutingKindNames[] = {{"uniform", workloads::RoutingKind::kUniform},
                                                                      {"zipf", workloads::RoutingKind::kZipf},
                                                                      {"hot", workloads::RoutingKind::kHot},
                                                                      {"trace", workloads::RoutingKind::kTrace}};

// Whether a run may replay less than every rank and micro-batch (docs/simulator.md, "Exact reductions").
enum class Exactness {
  kAuto,  // the exact reductions wherever they apply
  kFull,  // every rank and micro-batch replayed
};
inline constexpr Named<Exactness> kExactnessNames[] = {{"auto", Exactness::kAuto}, {"full", Exactness::kFull}};

// A table's names, in order (for the command line's checks).
template <class E, std::size_t N>
std::vector<std::string> name_list(const Named<E> (&table)[N]) {
  std::vector<std::string> out;
  for (const Named<E>& n : table) out.push_back(n.name);
  return out;
}

// "a, b or c" of a table's names.
template <class E, std::size_t N>
std::string names_of(const Named<E> (&table)[N]) {
  std::string out;
  for (std::size_t i = 0; i < N; ++i) out += std::string(i == 0 ? "" : i + 1 == N ? " or " : ", ") + table[i].name;
  return out;
}

// The value `name` stands for; an InputError naming `option` ("--schedule")
// and the accepted names otherwise (an empty name included).
template <class E, std::size_t N>
E parse_named(const Named<E> (&table)[N], const std::string& name, const std::string& option) {
  for (const Named<E>& n : table)
    if (name == n.name) return n.value;
  throw option_error(option, "expected " + names_of(table) + ", got \"" + name + "\"");
}

// The same, unset for "" (the option not given: the platform's or the replay's default).
template <class E, std::size_t N>
std::optional<E> parse_named_or_default(const Named<E> (&table)[N], const std::string& name,
                                        const std::string& option) {
  if (name.empty()) return std::nullopt;
  return parse_named(table, name, option);
}

// A value's name in its table.
template <class E, std::size_t N>
const char* name_of(const Named<E> (&table)[N], E value) {
  for (const Named<E>& n : table)
    if (n.value == value) return n.name;
  return "?";
}

}  // namespace epsim::app
