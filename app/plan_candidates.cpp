// The plan's layout space and its cheap checks.
#include "app/plan_candidates.hpp"

#include <algorithm>
#include <optional>
#include <tuple>

#include <fmt/format.h>

namespace epsim::app {

namespace {

std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

// A schedule and its model chunks per stage: 1f1b and dualpipe hold one
// (DualPipe's two slices are its own), interleaved each of space.vpp.
std::vector<std::pair<std::string, int>> schedule_chunks(const PlanSpace& space) {
  std::vector<std::pair<std::string, int>> out;
  for (const std::string& s : space.schedules) {
    if (s == "interleaved")
      for (int v : space.vpp) out.emplace_back(s, v);
    else
      out.emplace_back(s, 1);
  }
  return out;
}

// The key a cheap check blames, or nothing when the layout passes them.
std::optional<std::string> cheap_refusal(const PlanSpace& space, const PlanLayout& l) {
  if (space.npus % (l.tp * l.pp) != 0) return "parallel.pp";  // dp would not be whole
  if (space.npus_per_node % l.tp != 0) return "parallel.tp";
  if (l.pp * l.vpp > space.layers) return "parallel.pp";
  if (l.schedule != "1f1b" && l.pp < 2) return "parallel.schedule";  // the same as 1f1b on one stage
  if (l.ep % space.npus_per_node != 0) return "parallel.ep";          // EP groups fill whole nodes
  if ((l.tp * l.dp) % (l.etp * l.ep) != 0) return "parallel.ep";
  if (l.global_batch % (l.micro_batch * l.dp) != 0 || l.micro_batches() > space.max_micro_batches)
    return "parallel.global_batch";
  const std::int64_t m = l.micro_batches();
  if (l.schedule == "dualpipe" && (l.pp % 2 != 0 || m % 2 != 0 || m < 2 * l.pp)) return "parallel.global_batch";
  if (l.schedule == "interleaved" && m % l.pp != 0) return "parallel.global_batch";
  return std::nullopt;
}

auto key_of(const PlanLayout& l) {
  return std::tie(l.pp, l.tp, l.ep, l.dp, l.etp, l.schedule, l.vpp, l.micro_batch, l.recompute, l.zero_stage,
                  l.global_batch);
}

}  // namespace

std::vector<std::string> PlanLayout::overrides() const {
  return {fmt::format("parallel.tp={}", tp),
          fmt::format("parallel.pp={}", pp),
          fmt::format("parallel.vpp={}", vpp),
          fmt::format("parallel.ep={}", ep),
          fmt::format("parallel.etp={}", etp),
          fmt::format("parallel.dp={}", dp),
          fmt::format("parallel.micro_batch={}", micro_batch),
          fmt::format("parallel.global_batch={}", global_batch),
          fmt::format("parallel.schedule=\"{}\"", schedule),
          fmt::format("memory.recompute=\"{}\"", recompute),
          fmt::format("memory.zero_stage={}", zero_stage)};
}

std::string PlanLayout::name() const {
  std::string out = fmt::format("TP{} PP{}", tp, pp);
  if (vpp > 1) out += fmt::format(" VPP{}", vpp);
  out += fmt::format(" EP{}", ep);
  if (etp > 1) out += fmt::format(" ETP{}", etp);
  out += fmt::format(" DP{} mb{} {} rc-{} ZeRO-{}", dp, micro_batch, schedule, recompute, zero_stage);
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
            for (const std::string& recompute : space.recompute)
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
