// The plan's tables, JSON and sweep spec.
#include "app/plan_report.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "workloads/memory_fit.hpp"

namespace epsim::app {

namespace {

std::string time_text(double s) {
  if (s >= 1) return fmt::format("{:.4f} s", s);
  return fmt::format("{:.3f} ms", 1e3 * s);
}

std::string gb(double bytes) { return fmt::format("{:.1f}", bytes / 1e9); }

std::vector<const PlanCandidate*> simulated(const PlanResult& r) {
  std::vector<const PlanCandidate*> out;
  for (const PlanCandidate& c : r.candidates)
    if (c.status == PlanStatus::kSimulated) out.push_back(&c);
  return out;
}

// How many of the layouts that passed the checks each bound decides.
std::pair<long long, long long> bound_counts(const PlanResult& r) {
  long long compute = 0, comm = 0;
  for (const PlanCandidate& c : r.candidates)
    if (c.bound_s > 0) ++(c.bound_by_comm() ? comm : compute);
  return {compute, comm};
}

std::string rate(double Bps) { return Bps > 0 ? fmt::format("{:.1f} GB/s", Bps / 1e9) : "not bounded"; }

// The bound's formula, its rates, and which of its two terms decides how many layouts.
std::string bound_line(const PlanResult& r) {
  const auto [compute, comm] = bound_counts(r);
  return fmt::format(
      "  bound      max(compute: model FLOPs at the peak x the stack's best shares, plus the pipeline's fill and "
      "drain; communication: a node's all-to-all bytes to other nodes / its NICs' {}, a rank's all-to-all and TP "
      "bytes in / its links' {}, plus the same fill and drain): communication decides {} layouts, compute {}\n",
      rate(r.node_out_Bps), rate(r.rank_in_Bps), comm, compute);
}

std::string header(const PlanResult& r) {
  std::string out = fmt::format(
      "epsim plan: {} on {} ({} NPUs, {} node{} of {}; {} GB HBM and {:.1f} TFLOP/s peak per NPU), global batch {} x "
      "{} tokens\n",
      r.workload, r.platform, r.npus, r.npus / r.npus_per_node, r.npus == r.npus_per_node ? "" : "s", r.npus_per_node, gb(r.hbm_bytes), r.peak_flops / 1e12,
      r.global_batch, r.sequence_length);
  const long long checked = static_cast<long long>(r.candidates.size());
  out += fmt::format("  layouts    {} considered, {} fail a cheap check, {} checked as `epsim run` would, {} simulated{}\n",
                     r.considered, r.considered - checked, checked, r.simulated(),
                     r.reused() > 0 ? fmt::format(" ({} of them found by an earlier plan, --results)", r.reused()) : "");
  out += bound_line(r);
  if (r.pruned.empty()) return out + "  pruned     none\n";
  bool first = true;
  for (const auto& [reason, count] : r.pruned) {
    out += fmt::format("  {:<10} {:>7}  {}\n", first ? "pruned" : "", count, reason);
    first = false;
  }
  return out;
}

std::string row(const PlanResult& r, const PlanCandidate& c, std::size_t rank, std::size_t width) {
  const PlanStep& s = *c.step;
  return fmt::format("{:>4}{:1} {:<{}} {:>12} {:>12} {:>12} {:>13.1f} {:>5.1f} % {:>14} {:>12} {:>12}\n", rank,
                     c.own ? "*" : "", c.layout.name(), width, time_text(s.step_s), time_text(s.replay_bound_s),
                     time_text(c.bound_s), s.tokens_per_s_per_npu, 100 * s.mfu, gb(c.memory_bytes) + "/" + gb(r.hbm_bytes),
                     time_text(s.exposed_comm_s), time_text(s.bubble_s));
}

// Where the workload's own layout stands, one line.
std::string own_line(const std::vector<const PlanCandidate*>& rows, const PlanResult& r) {
  if (!r.own_missing.empty()) return fmt::format("* the workload's own layout, {}: {}\n", r.own_name, r.own_missing);
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i]->own && i == 0)
      return fmt::format("* the workload's own layout: #1 of {} simulated, the fastest found\n", rows.size());
    else if (rows[i]->own)
      return fmt::format("* the workload's own layout: #{} of {} simulated, {:+.2f} % step time against #1\n", i + 1,
                         rows.size(), 100 * (rows[i]->step->step_s / rows[0]->step->step_s - 1));
  return fmt::format("* the workload's own layout, {}: failed to simulate\n", r.own_name);
}

std::string table(const PlanResult& r, int top) {
  const std::vector<const PlanCandidate*> rows = simulated(r);
  if (rows.empty()) return "no layout could be simulated: each was pruned for the reasons above\n" + own_line(rows, r);
  std::size_t width = 6;
  for (const PlanCandidate* c : rows) width = std::max(width, c->layout.name().size());
  std::string out = fmt::format("{:>4}  {:<{}} {:>12} {:>12} {:>12} {:>13} {:>7} {:>14} {:>12} {:>12}\n", "rank",
                                "layout", width, "step", "bound", "plan bound", "tokens/s/NPU", "MFU", "memory/HBM GB",
                                "exposed", "bubble");
  const std::size_t shown = std::min(rows.size(), static_cast<std::size_t>(std::max(1, top)));
  for (std::size_t i = 0; i < shown; ++i) out += row(r, *rows[i], i + 1, width);
  if (rows.size() > shown) out += fmt::format("      ({} more simulated; --top to list them)\n", rows.size() - shown);
  for (std::size_t i = shown; i < rows.size(); ++i)
    if (rows[i]->own) out += row(r, *rows[i], i + 1, width);
  return out + own_line(rows, r);
}

// The keys two layouts differ in: "ep 8 vs 16, recompute none vs full".
std::string differing_keys(const PlanLayout& a, const PlanLayout& b) {
  std::vector<std::string> parts;
  const auto cmp = [&](const char* key, const std::string& x, const std::string& y) {
    if (x != y) parts.push_back(fmt::format("{} {} vs {}", key, x, y));
  };
  cmp("tp", std::to_string(a.tp), std::to_string(b.tp));
  cmp("pp", std::to_string(a.pp), std::to_string(b.pp));
  cmp("vpp", std::to_string(a.vpp), std::to_string(b.vpp));
  cmp("ep", std::to_string(a.ep), std::to_string(b.ep));
  cmp("etp", std::to_string(a.etp), std::to_string(b.etp));
  cmp("dp", std::to_string(a.dp), std::to_string(b.dp));
  cmp("micro_batch", std::to_string(a.micro_batch), std::to_string(b.micro_batch));
  cmp("schedule", workloads::to_string(a.schedule), workloads::to_string(b.schedule));
  cmp("recompute", a.recompute_name(), b.recompute_name());
  cmp("zero_stage", std::to_string(a.zero_stage), std::to_string(b.zero_stage));
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
  return out;
}

nlohmann::ordered_json layout_json(const PlanLayout& l) {
  return {{"tp", l.tp},
          {"pp", l.pp},
          {"vpp", l.vpp},
          {"ep", l.ep},
          {"etp", l.etp},
          {"dp", l.dp},
          {"micro_batch", l.micro_batch},
          {"micro_batches", l.micro_batches()},
          {"global_batch", l.global_batch},
          {"schedule", workloads::to_string(l.schedule)},
          {"recompute", l.recompute_name()},
          {"zero_stage", l.zero_stage}};
}

}  // namespace

std::string explain_best(const PlanResult& r) {
  const std::vector<const PlanCandidate*> rows = simulated(r);
  if (rows.size() < 2) return "";
  const PlanCandidate& a = *rows[0];
  const PlanCandidate& b = *rows[1];
  // Mean time per rank that differs: each phase, then what is not compute.
  std::vector<std::pair<std::string, double>> diffs;
  const auto phase_s = [](const PlanStep& s, const std::string& name) {
    for (const auto& [n, t] : s.phases)
      if (n == name) return t;
    return 0.0;
  };
  std::vector<std::string> names;
  for (const auto& [n, t] : a.step->phases) names.push_back(n);
  for (const auto& [n, t] : b.step->phases)
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  for (const std::string& n : names) diffs.emplace_back(n, phase_s(*b.step, n) - phase_s(*a.step, n));
  diffs.emplace_back("exposed communication", b.step->exposed_comm_s - a.step->exposed_comm_s);
  diffs.emplace_back("pipeline bubble", b.step->bubble_s - a.step->bubble_s);
  std::stable_sort(diffs.begin(), diffs.end(),
                   [](const auto& x, const auto& y) { return std::abs(x.second) > std::abs(y.second); });
  const double gap = b.step->step_s - a.step->step_s;
  if (gap <= 1e-9 * b.step->step_s)
    return fmt::format("#1 and #2 take the same time ({}); they differ in {}, and are ranked by layout\n",
                       time_text(a.step->step_s), differing_keys(a.layout, b.layout));
  std::string out = fmt::format("why #1 beats #2: {} faster ({:.2f} %); they differ in {}; mean time per rank",
                                time_text(gap), 100 * gap / b.step->step_s, differing_keys(a.layout, b.layout));
  for (std::size_t i = 0; i < diffs.size() && i < 3; ++i)
    out += fmt::format("{} {} {} {}", i == 0 ? ":" : ";", diffs[i].first, time_text(std::abs(diffs[i].second)),
                       diffs[i].second >= 0 ? "less" : "more");
  return out + " in #1\n";
}

std::string format_plan(const std::vector<PlanResult>& results, int top) {
  std::string out;
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (i > 0) out += "\n";
    out += header(results[i]) + table(results[i], top) + explain_best(results[i]);
  }
  if (results.size() < 2) return out;
  out += "\nbest layout per platform\n";
  std::size_t width = 8;
  for (const PlanResult& r : results) width = std::max(width, r.platform.size());
  for (const PlanResult& r : results) {
    const std::vector<const PlanCandidate*> rows = simulated(r);
    if (rows.empty()) {
      out += fmt::format("  {:<{}}  no layout simulated\n", r.platform, width);
      continue;
    }
    const PlanCandidate& c = *rows[0];
    out += fmt::format("  {:<{}}  {:<60} {:>12} {:>10.1f} tokens/s/NPU {:>5.1f} % MFU {:>6}/{} GB\n", r.platform, width,
                       c.layout.name(), time_text(c.step->step_s), c.step->tokens_per_s_per_npu, 100 * c.step->mfu,
                       gb(c.memory_bytes), gb(r.hbm_bytes));
  }
  return out;
}

std::string format_plan_json(const std::vector<PlanResult>& results) {
  nlohmann::ordered_json j;
  j["platforms"] = nlohmann::ordered_json::array();
  for (const PlanResult& r : results) {
    nlohmann::ordered_json p;
    p["platform"] = r.platform;
    p["workload"] = r.workload;
    p["npus"] = r.npus;
    p["npus_per_node"] = r.npus_per_node;
    p["hbm_bytes"] = r.hbm_bytes;
    p["peak_flops"] = r.peak_flops;
    p["node_out_Bps"] = r.node_out_Bps;
    p["rank_in_Bps"] = r.rank_in_Bps;
    p["global_batch"] = r.global_batch;
    p["sequence_length"] = r.sequence_length;
    p["considered"] = r.considered;
    p["checked"] = r.candidates.size();
    p["simulated"] = r.simulated();
    p["reused"] = r.reused();
    const auto [compute, comm] = bound_counts(r);
    p["bound_by"] = {{"compute", compute}, {"communication", comm}};
    p["pruned"] = nlohmann::ordered_json::object();
    for (const auto& [reason, count] : r.pruned) p["pruned"][reason] = count;
    p["own_layout"] = {{"name", r.own_name}, {"missing", r.own_missing}};
    p["candidates"] = nlohmann::ordered_json::array();
    for (const PlanCandidate& c : r.candidates) {
      nlohmann::ordered_json cj{{"name", c.layout.name()},
                                {"layout", layout_json(c.layout)},
                                {"status", to_string(c.status)},
                                {"key", c.key},
                                {"bound_s", c.bound_s},
                                {"compute_bound_s", c.compute_bound_s},
                                {"comm_bound_s", c.comm_bound_s},
                                {"memory_bytes", c.memory_bytes},
                                {"own", c.own},
                                {"reused", c.reused && c.status == PlanStatus::kSimulated}};
      if (c.step)
        cj["step"] = {{"step_s", c.step->step_s},
                      {"replay_bound_s", c.step->replay_bound_s},
                      {"tokens_per_s_per_npu", c.step->tokens_per_s_per_npu},
                      {"mfu", c.step->mfu},
                      {"exposed_comm_s", c.step->exposed_comm_s},
                      {"bubble_s", c.step->bubble_s}};
      p["candidates"].push_back(cj);
    }
    p["why_best"] = explain_best(r);
    j["platforms"].push_back(p);
  }
  return j.dump(2) + "\n";
}

std::vector<const PlanCandidate*> plan_sweep_layouts(const PlanResult& r) {
  std::vector<const PlanCandidate*> rows;
  for (const PlanCandidate& c : r.candidates)
    if (c.status == PlanStatus::kSimulated || c.status == PlanStatus::kBound || c.status == PlanStatus::kNotSimulated)
      rows.push_back(&c);
  return rows;
}

std::size_t plan_sweep_points(const PlanResult& r) { return plan_sweep_layouts(r).size(); }

}  // namespace epsim::app
