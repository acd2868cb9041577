// The plan's layout space and its cheap checks.
#include "app/plan_candidates.hpp"

#include <algorithm>
#include <optional>
#include <string_view>
#include <tuple>

#include <fmt/format.h>

#include "workloads/layout_rules.hpp"
#include "workloads/memory_fit.hpp"
#include "workloads/parallel_layout.hpp"

namespace epsim::app {

namespace {

using workloads::PipelineSchedule;

std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

// A schedule and its model chunks per stage: 1f1b and dualpipe hold one
// (DualPipe's two slices are its own), interleaved each of space.vpp.
std::vector<std::pair<PipelineSchedule, int>> schedule_chunks(const PlanSpace& space) {
  std::vector<std::pair<PipelineSchedule, int>> out;
  for (const PipelineSchedule s : space.schedules) {
    if (s == PipelineSchedule::kInterleaved)
      for (int v : space.vpp) out.emplace_back(s, v);
    else
      out.emplace_back(s, 1);
  }
  return out;
}

// The key a cheap check blames, or nothing when the layout passes them.
// Two checks are the plan's own (a whole dp; no pipeline schedule on one
// stage); the others are the loader's rules (workloads/layout_rules.hpp,
// parallel_layout.hpp), each blamed on the dimension the plan varies: an
// EP group that does not fill nodes on ep (the loader, which is given
// ranks_per_node, names that), a schedule's batch on the batch.
std::optional<std::string> cheap_refusal(const PlanSpace& space, const PlanLayout& l) {
  if (space.npus % (l.tp * l.pp) != 0) return "parallel.pp";  // dp would not be whole
  if (workloads::check_tp_within_node(l.tp, space.npus_per_node, false)) return "parallel.tp";
  if (workloads::check_stage_split(space.layers, l.pp, l.vpp, 0, 0)) return "parallel.pp";
  // Another schedule on one stage is 1f1b's.
  if (l.schedule != PipelineSchedule::kOneFOneB && l.pp < 2) return "parallel.schedule";
  if (workloads::check_ep_fills_nodes(l.ep, space.npus_per_node)) return "parallel.ep";
  if (workloads::check_ep_divides_stage(workloads::ParallelLayout{l.tp, l.pp, l.dp, l.ep, l.etp}))
    return "parallel.ep";
  if (workloads::check_global_batch(l.global_batch, l.micro_batch, l.dp)) return "parallel.global_batch";
  if (workloads::check_schedule_batch(l.schedule, l.pp, l.micro_batches())) return "parallel.global_batch";
  return std::nullopt;
}

// Schedules and recomputations by name, as layouts have always been listed.
auto key_of(const PlanLayout& l) {
  return std::make_tuple(l.pp, l.tp, l.ep, l.dp, l.etp, std::string_view(workloads::to_string(l.schedule)), l.vpp,
                         l.micro_batch, l.recompute_name(), l.zero_stage,
                         l.global_batch);
}

}  // namespace

workloads::WorkloadEdits PlanLayout::edits() const {
  using workloads::Edit;
  workloads::WorkloadEdits e;
  e.tp = Edit<int>{tp, ""};
  e.pp = Edit<int>{pp, ""};
  e.vpp = Edit<int>{vpp, ""};
  e.ep = Edit<int>{ep, ""};
  e.etp = Edit<int>{etp, ""};
  e.dp = Edit<int>{dp, ""};
  e.micro_batch = Edit<std::int64_t>{micro_batch, ""};
  e.global_batch = Edit<std::int64_t>{global_batch, ""};
  e.schedule = Edit<PipelineSchedule>{schedule, ""};
  e.recompute = Edit<workloads::Recompute>{recompute, ""};
  e.zero_stage = Edit<int>{zero_stage, ""};
  return e;
}

std::string PlanLayout::name() const {
  std::string out = fmt::format("TP{} PP{}", tp, pp);
  if (vpp > 1) out += fmt::format(" VPP{}", vpp);
  out += fmt::format(" EP{}", ep);
  if (etp > 1) out += fmt::format(" ETP{}", etp);
  out += fmt::format(" DP{} mb{} {} rc-{} ZeRO-{}", dp, micro_batch, workloads::to_string(schedule),
                     recompute_name(), zero_stage);
  return out;
}

bool PlanLayout::operator<(const PlanLayout& o) const { return key_of(*this) < key_of(o); }

Enumeration enumerate_layouts(const PlanSpace& space) {
  Enumeration out;
  for (int tp : space.tp)
    for (int pp : divisors(space.npus))
      for (const auto& [schedule, vpp] : schedule_chunks(space))
        for (int ep : divisors(space.experts))
          for (std::int64_t mb : space.micro_batch)
            for (const workloads::Recompute recompute : space.recompute)
              for (int zero : space.zero_stage) {
                PlanLayout l;
                l.tp = tp;
                l.pp = pp;
                l.vpp = vpp;
                l.ep = ep;
                l.dp = std::max(1, space.npus / (tp * pp));
                l.micro_batch = mb;
                l.global_batch = space.global_batch;
                l.schedule = schedule;
                l.recompute = recompute;
                l.zero_stage = zero;
                ++out.considered;
                if (const auto key = cheap_refusal(space, l))
                  ++out.skipped[*key];
                else
                  out.layouts.push_back(l);
              }
  std::sort(out.layouts.begin(), out.layouts.end());
  return out;
}

}  // namespace epsim::app
