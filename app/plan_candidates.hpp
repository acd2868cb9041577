// The layouts `epsim plan` considers for one model on one cluster: every
// combination of TP, PP, VPP, EP, ETP, DP, micro-batch size, schedule,
// recomputation and ZeRO stage whose sizes divide the NPUs and the batch
// (docs/plan.md, "What it enumerates"). Plain arithmetic: whether a layout
// is valid and fits is the workload loader's and check_job's verdict
// (plan_search.hpp); this only skips what is cheaply, certainly invalid.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "workloads/memory_fit.hpp"
#include "workloads/workload_edits.hpp"
#include "workloads/workload_spec.hpp"

namespace epsim::app {

// One layout, as the workload's [parallel] and [memory] keys say it.
struct PlanLayout {
  int tp = 1;
  int pp = 1;
  int vpp = 1;
  int ep = 1;
  int etp = 1;
  int dp = 1;
  std::int64_t micro_batch = 1;
  std::int64_t global_batch = 1;
  workloads::PipelineSchedule schedule = workloads::PipelineSchedule::kOneFOneB;  // 1f1b, interleaved or dualpipe
  workloads::Recompute recompute = workloads::Recompute::kNone;
  workloads::RecomputeModules modules;  // the workload's own module list (kModules); never enumerated
  int zero_stage = 0;

  std::string recompute_name() const { return workloads::recompute_name(recompute, modules); }

  std::int64_t micro_batches() const { return global_batch / (micro_batch * dp); }
  // The edits that make a workload this layout: every key above but the derived micro-batches.
  workloads::WorkloadEdits edits() const;
  // "TP1 PP8 VPP2 EP32 DP32 mb1 interleaved recompute=full ZeRO-1": one line, unique per layout.
  std::string name() const;
  // The order layouts are listed in when nothing else decides (a stable key).
  bool operator<(const PlanLayout& o) const;
};

// What the search spans: the cluster's NPUs, the model's sizes the cheap
// checks need, and the values each dimension may take.
struct PlanSpace {
  int npus = 0;            // NPUs the layout fills: tp x dp x pp
  int npus_per_node = 0;   // EP groups fill whole nodes; TP stays inside one
  std::int64_t global_batch = 0;  // sequences per step
  int layers = 0;
  int experts = 0;
  std::vector<int> tp = {1, 2, 4, 8};
  std::vector<int> vpp = {2, 4};  // model chunks per stage of the interleaved schedule
  std::vector<std::int64_t> micro_batch = {1, 2, 4};
  std::vector<workloads::PipelineSchedule> schedules = {workloads::PipelineSchedule::kOneFOneB,
                                                        workloads::PipelineSchedule::kInterleaved,
                                                        workloads::PipelineSchedule::kDualPipe};
  std::vector<workloads::Recompute> recompute = {workloads::Recompute::kNone, workloads::Recompute::kSelective,
                                                 workloads::Recompute::kFull};
  std::vector<int> zero_stage = {0, 1};
};

// The layouts that pass the cheap checks, sorted (PlanLayout::operator<), and
// how many were skipped, by the key at fault ("parallel.tp", ...).
struct Enumeration {
  std::vector<PlanLayout> layouts;
  std::map<std::string, long long> skipped;
  long long considered = 0;  // layouts + every skipped one
};

// Cheap checks, each certain to fail the loader or describing a layout the
// search leaves out on purpose (docs/plan.md): tp x dp x pp = npus; TP
// divides a node; PP x VPP at most the layers; EP divides the experts, is
// a whole number of nodes and divides a stage's TP x DP ranks; ETP 1 (the
// loader refuses more); the global batch a multiple of micro_batch x dp
// into at most workloads::kMaxMicroBatches; DualPipe an even PP and an even number
// of micro-batches >= 2 PP; interleaved micro-batches a multiple of PP.
Enumeration enumerate_layouts(const PlanSpace& space);

}  // namespace epsim::app
