// The report as a human table and as JSON, with fixed formatting so that
// identical inputs give byte-identical output.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/json_output.hpp"

#include "sim/report/report.hpp"

namespace epsim::sim {

namespace {

// Model chunks a pipeline stage holds: vpp, or DualPipe's two (slices s and pp-1-s).
int stage_chunks(const Scenario& sc) { return sc.pipeline_schedule == "dualpipe" ? 2 : sc.vpp; }

// A duration with a unit picked by magnitude.
std::string time_text(double s) {
  // A difference of equal sums can land a rounding error below zero: print
  // what rounds to 0.0000 us as zero, not "-0.0000 us".
  if (std::fabs(s) < 5e-11) s = 0;
  const double a = std::fabs(s);
  if (a >= 1) return fmt::format("{:.4f} s", s);
  if (a >= 1e-3) return fmt::format("{:.4f} ms", s * 1e3);
  return fmt::format("{:.4f} us", s * 1e6);
}

std::string bytes_text(double b) {
  if (b >= 1e9) return fmt::format("{:.3f} GB", b / 1e9);
  if (b >= 1e6) return fmt::format("{:.3f} MB", b / 1e6);
  return fmt::format("{:.3f} kB", b / 1e3);
}

// The bubble share of a pipeline schedule's closed form (Narayanan et al.
// 2021, eq. 1 and its interleaved form; DualPipe's from the DeepSeek-V3
// report); none without stages.
struct ClosedFormBubble {
  double share = 0;
  std::string formula;
};
std::optional<ClosedFormBubble> closed_form_bubble(const Scenario& s) {
  if (s.pp <= 1 || s.micro_batches <= 0) return std::nullopt;
  const double pp = s.pp, m = s.micro_batches, v = s.vpp;
  if (s.pipeline_schedule == "1f1b")
    return ClosedFormBubble{(pp - 1) / (m + pp - 1), fmt::format("(pp-1)/(m+pp-1) = {}/{}", s.pp - 1, s.micro_batches + s.pp - 1)};
  if (s.pipeline_schedule == "interleaved")
    return ClosedFormBubble{(pp - 1) / (v * m + pp - 1), fmt::format("(pp-1)/(vpp m+pp-1) = {}/{}", s.pp - 1,
                                                                     s.vpp * s.micro_batches + s.pp - 1)};
  if (s.pipeline_schedule == "dualpipe") {
    // (pp/2-1)(F&B + B - 3W) (DeepSeek-V3 report, Table 2) with B = 2F, W = 0
    // and F&B = F + B, over m (F + B) of work: 5(pp/2-1) / (3m + 5(pp/2-1)).
    const int k = 5 * (s.pp / 2 - 1);
    return ClosedFormBubble{k / (3 * m + k), fmt::format("5(pp/2-1)/(3m+5(pp/2-1)) = {}/{}", k, 3 * s.micro_batches + k)};
  }
  return std::nullopt;
}

// "rank 5" for a compute row's max, "-" when every rank spends the same.
std::string rank_text(int rank) { return rank < 0 ? "-" : fmt::format("r{}", rank); }

std::string row_text(const ReportRow& r) {
  const std::string achieved =
      r.collective && r.bytes_per_rank > 0
          ? fmt::format("{} per rank at {:.1f} GB/s; ", bytes_text(r.bytes_per_rank), r.achieved_Bps / 1e9)
          : std::string();
  return fmt::format("  {:<16} {:>13} {:>13} {:>5} {:>13} {:>13} {:>8}  {}{}\n", r.name, time_text(r.sim_s),
                     time_text(r.sim_max_s), rank_text(r.max_rank), time_text(r.bound_s), time_text(r.bound_max_s),
                     fmt::format("x{:.3f}", r.ratio()), achieved, r.cause);
}

nlohmann::ordered_json row_json(const ReportRow& r) {
  nlohmann::ordered_json j;
  j["name"] = r.name;
  j["sim_s"] = r.sim_s;
  j["sim_max_s"] = r.sim_max_s;
  j["max_rank"] = r.max_rank;
  j["bound_s"] = r.bound_s;
  j["bound_max_s"] = r.bound_max_s;
  j["ratio"] = r.ratio();
  j["cause"] = r.cause;
  if (!r.collective && r.max_rank >= 0) j["ranks_running"] = r.ranks_running;
  if (r.collective) {
    j["collective"] = true;
    j["bytes_per_rank"] = r.bytes_per_rank;
    j["achieved_Bps"] = r.achieved_Bps;
  }
  return j;
}

std::string fallback_text(const DtypeFallback& f) {
  return fmt::format("{} GEMMs run at the {} peak: {} has no {} peak (precision.gemm_fallback = \"{}\")",
                     to_string(f.wanted), to_string(f.used), f.host, to_string(f.wanted), to_string(f.used));
}

// "zipf s=1.0, placement first (routing.hot_placement: ...)" and the
// hottest experts with where they sit.
std::string routing_text(const workloads::RoutingPlacement& p) {
  std::string out = fmt::format("  routing    {}{}", p.kind, p.params.empty() ? "" : " " + p.params);
  if (p.kind == "uniform") return out + ": every expert alike, no hot experts\n";
  if (!p.placement.empty())
    out += fmt::format(", placement {} (routing.hot_placement: {})", p.placement, p.meaning);
  out += "\n  hottest    experts ";
  bool one_rank = true;
  for (std::size_t i = 0; i < p.hottest.size(); ++i) {
    const workloads::HotExpert& h = p.hottest[i];
    one_rank = one_rank && h.ep_rank == p.hottest.front().ep_rank;
    out += fmt::format("{}{} ({:.1f} %)", i == 0 ? "" : ", ", h.expert, 100 * h.weight);
  }
  out += " of the pick weight, ";
  if (one_rank) {
    out += fmt::format("all on EP rank {} (node {})", p.hottest.front().ep_rank, p.hottest.front().node);
  } else {
    out += "on EP ranks ";
    for (std::size_t i = 0; i < p.hottest.size(); ++i)
      out += fmt::format("{}{} (node {})", i == 0 ? "" : ", ", p.hottest[i].ep_rank, p.hottest[i].node);
  }
  out += fmt::format("{}; EP rank {} holds {:.1f} %, x{:.2f} the balanced {:.1f} %{}\n",
                     p.moves_per_layer ? ", in the first MoE layer (the placement moves from layer to layer)"
                                       : p.kind == "trace" ? ", in the first MoE layer" : ", in every MoE layer",
                     p.hottest_rank, 100 * p.hottest_rank_weight, p.hottest_rank_weight / p.balanced_rank_weight,
                     100 * p.balanced_rank_weight,
                     p.placement == "first" ? " (routing.hot_placement = \"spread\" puts one per rank)" : "");
  return out;
}

// The mitigations line, when the routing has any: redundant experts and the capacity's drops.
std::string mitigation_text(const workloads::RoutingPlacement& p, const Report& r) {
  if (p.redundant_experts == 0 && p.capacity == 0) return "";
  std::string out = "  mitigate  ";
  if (p.redundant_experts > 0 && p.uneven)
    out += fmt::format(" {} redundant experts ({} expert slots per rank: {} experts over {} ranks, some owning fewer, "
                       "replicas of the hottest experts in the slots left, their picks split over the replicas; "
                       "routing.redundant_experts){}",
                       p.redundant_experts, p.slots_per_rank, p.experts, p.ep, p.capacity > 0 ? ";" : "");
  else if (p.redundant_experts > 0)
    out += fmt::format(" {} redundant experts ({} extra slot{} per rank holding replicas of the hottest experts, "
                       "their picks split over the replicas; routing.redundant_experts){}",
                       p.redundant_experts, p.redundant_per_rank, p.redundant_per_rank == 1 ? "" : "s",
                       p.capacity > 0 ? ";" : "");
  if (p.capacity > 0)
    out += fmt::format(" capacity factor {:g}: at most {} tokens per (source rank, expert); {} of {} (token, expert) "
                       "picks{} dropped ({:.3f} %), neither sent nor computed",
                       p.capacity_factor, p.capacity, r.dropped_picks, r.routed_picks,
                       r.reduction.reduced() ? " of the replayed EP group and micro-batches" : "",
                       r.routed_picks > 0 ? 100.0 * static_cast<double>(r.dropped_picks) / r.routed_picks : 0.0);
  return out + "\n";
}

nlohmann::ordered_json routing_json(const workloads::RoutingPlacement& p) {
  nlohmann::ordered_json hottest = nlohmann::ordered_json::array();
  for (const workloads::HotExpert& h : p.hottest)
    hottest.push_back({{"expert", h.expert}, {"weight", h.weight}, {"ep_rank", h.ep_rank}, {"node", h.node}});
  return {{"kind", p.kind},
          {"params", p.params},
          {"placement", p.placement},
          {"placement_meaning", p.meaning},
          {"moves_per_layer", p.moves_per_layer},
          {"hottest", hottest},
          {"hottest_rank", p.hottest_rank},
          {"hottest_rank_weight", p.hottest_rank_weight},
          {"balanced_rank_weight", p.balanced_rank_weight},
          {"redundant_experts", p.redundant_experts},
          {"capacity_factor", p.capacity_factor},
          {"capacity_tokens", p.capacity}};
}

// A prefill's time to first token: its prompts' chunks, one step each.
double ttft_s(const Scenario& sc, const Report& r) {
  return static_cast<double>(sc.serving_steps_to_first_token) * r.step.sim_s;
}

// A prefill batch's KV cache handed to the decode pool, in closed form: its
// bytes over the rank's share of the fabric, against the TTFT it follows.
std::string handoff_text(const Scenario& sc, const Report& r) {
  const std::string bytes =
      fmt::format("  KV handoff             {} per rank per batch to the decode pool ({} prompts x {} each: "
                  "prompt_length x layers x KV bytes per token / tp)",
                  bytes_text(sc.serving_handoff_bytes), sc.serving_batch,
                  bytes_text(sc.serving_handoff_bytes / static_cast<double>(sc.serving_batch)));
  if (!(sc.serving_handoff_Bps > 0)) return bytes + "; no fabric out of the unit is known (a SimGrid XML or one node)\n";
  const double s = sc.serving_handoff_bytes / sc.serving_handoff_Bps;
  return bytes + fmt::format(", {} at the rank's {:.1f} GB/s {} ({:.1f} % of the TTFT; not simulated: sent as the "
                             "layers compute it, it shares that {} with the step's dispatch and combine)\n",
                             time_text(s), sc.serving_handoff_Bps / 1e9, sc.serving_handoff_over,
                             100 * s / ttft_s(sc, r), sc.serving_handoff_over);
}

// A serving step's figures: its latency (the step: TTFT for a prefill
// batch, whose prompts all get their first token at its end; TPOT for a
// decode step, one token per sequence) and its tokens per NPU and node.
std::string serving_text(const Scenario& sc, const Report& r) {
  const bool decode = sc.serving_phase == "decode";
  const Throughput& t = r.throughput;
  std::string out = fmt::format("serving ({}: {} sequences per rank, {} tokens cached per sequence at the step's end, "
                                "{:.3f} tokens served per sequence; docs/serving.md)\n",
                                sc.serving_phase, sc.serving_batch, sc.serving_context, sc.serving_tokens_per_sequence);
  if (decode)
    out += fmt::format("  TPOT                   {} (the step over the {:.3f} tokens each sequence gains), step {}\n",
                       time_text(r.step.sim_s / sc.serving_tokens_per_sequence), sc.serving_tokens_per_sequence,
                       time_text(r.step.sim_s));
  else if (sc.serving_steps_to_first_token == 1)
    out += fmt::format("  TTFT                   {} (the step: every prompt's first token at its end)\n",
                       time_text(r.step.sim_s));
  else
    out += fmt::format("  TTFT                   {} ({} steps of {}: a prompt's first token at the end of its last "
                       "chunk; serving.chunk)\n",
                       time_text(ttft_s(sc, r)), sc.serving_steps_to_first_token, time_text(r.step.sim_s));
  out += fmt::format("  {} tokens/s   {:.1f} per NPU, {:.1f} per node of {} ranks\n", decode ? "output" : "input ",
                     t.tokens_per_s_per_npu, t.tokens_per_s_per_npu * sc.ranks_per_node, sc.ranks_per_node);
  if (!decode && sc.serving_handoff_bytes > 0) out += handoff_text(sc, r);
  // Seed 002's ledger: the least a rank reads and computes, at its NPU's rates, no communication.
  const double ledger_s = std::max(t.serving_memory_s, t.serving_compute_s);
  out += fmt::format("  ledger                 {} = max(memory {}, compute {}); the step is x{:.2f} it (seed 002's {}: "
                     "bytes = weights {} x {} micro-batches read + KV cache {} {}, at {:.0f} GB/s HBM; FLOPs = {:.3g} = "
                     "tokens x (2 x active params + attention core), at the {:.0f} TFLOP/s {} peak; no communication)\n",
                     time_text(ledger_s), time_text(t.serving_memory_s), time_text(t.serving_compute_s),
                     ledger_s > 0 ? r.step.sim_s / ledger_s : 0.0, decode ? "decode" : "prefill",
                     bytes_text(sc.serving_weight_bytes / std::max(1, sc.micro_batches)), sc.micro_batches,
                     bytes_text(sc.serving_cache_bytes), decode ? "read" : "written", t.hbm_Bps_per_npu / 1e9,
                     sc.serving_flops, t.peak_flops_per_s_per_npu / 1e12, to_string(t.peak_dtype));
  return out;
}

std::string platform_text(const Report& r) {
  const Scenario& s = r.scenario;
  std::string extra = s.platform_name;
  if (!s.npu_model.empty()) extra += (extra.empty() ? "" : ", ") + s.npu_model;
  extra += (extra.empty() ? "" : ", ") + fmt::format("{} node{}", r.platform_nodes, r.platform_nodes == 1 ? "" : "s");
  if (!s.stack.empty()) extra += ", stack " + s.stack;
  return fmt::format("{} ({})", s.platform.empty() ? std::string("?") : s.platform, extra);
}

nlohmann::ordered_json reduction_json(const Reduction& d) {
  nlohmann::ordered_json j = {{"reduced", d.reduced()}};
  j["replicas"] = {{"ep_groups_per_stage", d.replicas},
                   {"replayed", d.replicas > 1 ? 1 : d.replicas},
                   {"full_ranks", d.full_ranks},
                   {"shared_links_scaled", d.shared_links}};
  j["replicas"]["shared_links_whole"] = nlohmann::ordered_json::array();
  for (const LinkRow& l : d.unscaled_links)
    j["replicas"]["shared_links_whole"].push_back(
        {{"link", l.link}, {"bytes_at_most", l.bytes}, {"bandwidth_Bps", l.bandwidth_Bps}, {"utilisation_at_most", l.utilisation}});
  if (d.micro_batches_b > 0)
    j["steady_state"] = {{"replayed_micro_batches", {d.micro_batches_a, d.micro_batches_b}},
                         {"step_s", {d.step_a_s, d.step_b_s}},
                         {"increment_per_micro_batch_s",
                          (d.step_b_s - d.step_a_s) / (d.micro_batches_b - d.micro_batches_a)},
                         {"stage_tail_shift_per_micro_batch_s", {d.shift_min_s, d.shift_max_s}},
                         {"tolerance", d.tolerance},
                         {"formula", "T(M) = T(b) + (M - b) / (b - a) x (T(b) - T(a))"}};
  if (!d.off.empty()) j["not_reduced_because"] = d.off;
  return j;
}

// The reduction as the table's header says it.
std::string reduction_text(const Reduction& d, int ranks, int micro_batches) {
  std::string out;
  if (d.replicas > 1)
    out += fmt::format("  reduction  one of {} identical EP groups per stage replayed ({} of {} ranks; the gradient "
                       "sync spans all, {} shared link{} at one group's share)\n",
                       d.replicas, ranks, d.full_ranks, d.shared_links, d.shared_links == 1 ? "" : "s");
  if (!d.unscaled_links.empty()) {
    const auto busiest = std::max_element(d.unscaled_links.begin(), d.unscaled_links.end(),
                                          [](const LinkRow& a, const LinkRow& b) { return a.utilisation < b.utilisation; });
    out += fmt::format("             {} link{} the groups share carr{} the gradient sync too and keep{} its whole "
                       "bandwidth: exact while none saturates; busiest {} at most {:.1f} % used{}\n",
                       d.unscaled_links.size(), d.unscaled_links.size() == 1 ? "" : "s",
                       d.unscaled_links.size() == 1 ? "ies" : "y", d.unscaled_links.size() == 1 ? "s" : "",
                       busiest->link, 100 * busiest->utilisation,
                       busiest->utilisation > 0.5 ? " (it may saturate: replay with --exact full to be sure)" : "");
  }
  if (d.micro_batches_b > 0) {
    const int delta = d.micro_batches_b - d.micro_batches_a;
    const double increment_s = (d.step_b_s - d.step_a_s) / delta;
    out += fmt::format("  steady     {} and {} of {} micro-batches replayed (steps {} and {}); the rest in closed form: "
                       "T(M) = T({}) + (M - {}) x {} per micro-batch; every stage's tail moved {} to {} per "
                       "micro-batch between the two (tolerance {:.0f} %)\n",
                       d.micro_batches_a, d.micro_batches_b, micro_batches, time_text(d.step_a_s),
                       time_text(d.step_b_s), d.micro_batches_b, d.micro_batches_b, time_text(increment_s),
                       time_text(d.shift_min_s), time_text(d.shift_max_s), 100 * d.tolerance);
  }
  if (!d.reduced() && d.applicable) out += "  reduction  none: " + d.off + "\n";
  return out;
}

nlohmann::ordered_json report_json(const Report& r) {
  const Scenario& sc = r.scenario;
  nlohmann::ordered_json j;
  j["epsim_version"] = epsim_version();
  j["scenario"] = {{"platform", sc.platform},
                   {"platform_name", sc.platform_name},
                   {"npu_model", sc.npu_model},
                   {"stack", sc.stack},
                   {"platform_nodes", r.platform_nodes},
                   {"workload", sc.workload},
                   {"model", sc.model},
                   {"tp", sc.tp},
                   {"dp", sc.dp},
                   {"pp", sc.pp},
                   {"vpp", sc.vpp},
                   {"ep", sc.ep},
                   {"etp", sc.etp},
                   {"edp", sc.edp},
                   {"pipeline_schedule", sc.pipeline_schedule},
                   {"global_batch", sc.global_batch},
                   {"micro_batch", sc.micro_batch},
                   {"micro_batches", sc.micro_batches},
                   {"sequence_length", sc.sequence_length},
                   {"ranks_per_node", sc.ranks_per_node},
                   {"nodes", r.nodes_used},
                   {"seed", sc.seed},
                   {"overrides", sc.overrides}};
  if (sc.routing) j["scenario"]["routing"] = routing_json(*sc.routing);
  j["ranks"] = r.reduction.full_ranks > 0 ? r.reduction.full_ranks : r.ranks;
  j["tasks"] = r.tasks;
  // Picks are counted over what was replayed (one EP group, the steady state's micro-batches when reduced).
  j["replay"] = {{"ranks", r.ranks},
                 {"routed_picks", r.routed_picks},
                 {"dropped_picks", r.dropped_picks},
                 {"reduction", reduction_json(r.reduction)}};
  j["schedule"] = r.schedule;
  j["algorithm"] = r.algorithm;
  j["dispatch_kernel"] = r.dispatch_kernel;
  j["fidelity"] = r.fidelity;
  j["all_reduce"] = r.all_reduce;
  j["activities"] = r.activities;
  j["precision_fallbacks"] = nlohmann::ordered_json::array();
  for (const DtypeFallback& f : r.fallbacks)
    j["precision_fallbacks"].push_back(
        {{"wanted", to_string(f.wanted)}, {"used", to_string(f.used)}, {"host", f.host}});
  j["step"] = row_json(r.step);
  j["step"]["critical_path_bound_s"] = r.critical_path_bound_s;
  j["step"]["rank_streams_bound_s"] = r.rank_streams_bound_s;
  if (r.has_throughput) {
    const Throughput& t = r.throughput;
    j["throughput"] = {{"tokens_per_step", t.tokens_per_step},
                       {"tokens_per_s", t.tokens_per_s},
                       {"tokens_per_s_per_npu", t.tokens_per_s_per_npu},
                       {"model_flops_per_token", sc.model_flops_per_token},
                       {"active_params", sc.active_params},
                       {"model_flops_count", sc.serving_phase.empty()
                                                 ? "6 x active params + 3 x causal attention core, per token"
                                                 : "2 x active params + attention core, per token (forward only)"},
                       {"model_flops_per_s_per_npu", t.model_flops_per_s_per_npu},
                       {"peak_flops_per_s_per_npu", t.peak_flops_per_s_per_npu},
                       {"peak_dtype", to_string(t.peak_dtype)},
                       {"mfu", t.mfu}};
    if (!sc.serving_phase.empty())
      j["serving"] = {{"phase", sc.serving_phase},
                      {"batch_per_rank", sc.serving_batch},
                      {"keys_per_token", sc.serving_context},
                      {"tokens_served_per_sequence", sc.serving_tokens_per_sequence},
                      {sc.serving_phase == "decode" ? "tpot_s" : "ttft_s",
                       sc.serving_phase == "decode" ? r.step.sim_s / sc.serving_tokens_per_sequence : ttft_s(sc, r)},
                      {"tokens_per_s_per_npu", t.tokens_per_s_per_npu},
                      {"tokens_per_s_per_node", t.tokens_per_s_per_npu * sc.ranks_per_node},
                      {"ledger",
                       {{"weight_bytes", sc.serving_weight_bytes},
                        {"cache_bytes", sc.serving_cache_bytes},
                        {"flops", sc.serving_flops},
                        {"memory_s", t.serving_memory_s},
                        {"compute_s", t.serving_compute_s},
                        {"rule", "seed 002's inference phase: max(bytes / HBM bandwidth, FLOPs / peak), per rank"}}}};
    if (sc.serving_handoff_bytes > 0) {
      nlohmann::ordered_json h = {{"bytes_per_rank", sc.serving_handoff_bytes},
                                  {"rule", "batch x prompt_length x layers x KV bytes per token / tp, to the decode "
                                           "pool, not simulated"}};
      if (sc.serving_handoff_Bps > 0) {
        h["over"] = sc.serving_handoff_over;
        h["Bps_per_rank"] = sc.serving_handoff_Bps;
        h["s"] = sc.serving_handoff_bytes / sc.serving_handoff_Bps;
      }
      j["serving"]["kv_handoff"] = h;
    }
  }
  const GapParts& g = r.gap;
  j["gap"] = {{"total_s", r.step.sim_s - r.step.bound_s},
              {"serialisation_s", g.serialisation_s()},
              {"contention_s", g.comm_excess_s},
              {"compute_excess_s", g.compute_excess_s},
              {"idle_s", g.idle_s},
              {"path_compute_bound_s", g.path_compute_bound_s},
              {"path_comm_bound_s", g.path_comm_bound_s},
              {"path_comm_s", g.path_comm_s()},
              {"end_rank", g.end_rank},
              {"path_tasks", g.path_tasks},
              {"path_collectives", g.path_collectives}};
  std::string rule = kCollectiveBytesRule;
  std::replace(rule.begin(), rule.end(), '\n', ' ');
  j["collective_bytes_rule"] = rule;
  j["phases"] = nlohmann::ordered_json::array();
  for (const ReportRow& p : r.phases) j["phases"].push_back(row_json(p));
  // Every task kind's label, in one order, so that plots colour phases alike everywhere (tools/plot_timeline.py).
  j["task_kinds"] = nlohmann::ordered_json::array();
  for (int k = 0; k < kTaskKinds; ++k)
    j["task_kinds"].push_back(workloads::task_kind_label(static_cast<workloads::TaskKind>(k)));
  j["communication"] = {{"busy_mean_s", r.comm_mean_s},
                        {"exposed_mean_s", r.exposed_comm_mean_s},
                        {"exposed_max_s", r.exposed_comm_max_s},
                        {"overlap_fraction", r.overlap_fraction},
                        {"peer_wait_mean_s", r.peer_wait_mean_s},
                        {"idle_mean_s", r.idle_mean_s},
                        {"idle_max_s", r.idle_max_s},
                        {"idle_max_rank", r.idle_max_rank},
                        {"idle_skew_mean_s", r.idle_skew_mean_s},
                        {"idle_pipeline_mean_s", r.idle_pipeline_mean_s},
                        {"idle_other_mean_s", std::max(0.0, r.idle_mean_s - r.idle_skew_mean_s - r.idle_pipeline_mean_s)}};
  if (const auto bubble = closed_form_bubble(sc)) j["pipeline"] = {{"bubble_closed_form", bubble->share},
                                                                  {"bubble_formula", bubble->formula}};
  j["straggler"] = {{"rank", r.straggler_rank},
                    {"compute_s", r.straggler_compute_s},
                    {"mean_compute_s", r.mean_compute_s},
                    {"max_over_mean", r.straggler_ratio},
                    {"layer", r.layer_straggler_layer},
                    {"layer_rank", r.layer_straggler_rank},
                    {"layer_compute_s", r.layer_straggler_compute_s},
                    {"layer_mean_compute_s", r.layer_mean_compute_s}};
  j["busiest_links"] = nlohmann::ordered_json::array();
  for (const LinkRow& l : r.busiest_links)
    j["busiest_links"].push_back(
        {{"link", l.link}, {"bytes", l.bytes}, {"bandwidth_Bps", l.bandwidth_Bps}, {"utilisation", l.utilisation}});
  if (r.memory) {
    nlohmann::ordered_json terms = nlohmann::ordered_json::array();
    for (const workloads::MemoryTerm& t : r.memory->terms)
      terms.push_back({{"name", t.name}, {"bytes", t.bytes}, {"formula", t.formula}});
    j["memory"] = {{"peak_bytes_per_rank", r.memory_fit.peak_bytes},
                   {"capacity_bytes", r.memory_fit.capacity_bytes},
                   {"fits", r.memory_fit.fits},
                   {"largest_term", r.memory->largest().name},
                   {"stage", r.memory->stage},
                   {"in_flight_micro_batches", r.memory->in_flight_micro_batches},
                   {"terms", terms}};
  }
  return j;
}

std::string memory_text(const workloads::MemoryBreakdown& m, const workloads::MemoryFit& f) {
  std::string out = fmt::format(
      "memory per rank (pipeline stage {}, the fullest: {} dense + {} MoE layers, {:.2f} micro-batches of "
      "activations held; formulas in docs/memory.md)\n",
      m.stage, m.dense_layers, m.moe_layers, m.in_flight_micro_batches);
  for (const workloads::MemoryTerm& t : m.terms)
    out += fmt::format("  {:<26} {:>12}  {}\n", t.name, bytes_text(t.bytes), t.formula);
  std::string verdict = "HBM capacity unknown: not checked";
  if (f.capacity_known)
    verdict = fmt::format("of {} HBM: {}", bytes_text(f.capacity_bytes),
                          f.fits ? fmt::format("fits ({:.1f} % used)", 100 * f.peak_bytes / f.capacity_bytes)
                                 : fmt::format("DOES NOT FIT (x{:.2f}; memory.allow_oversubscribed), largest term {}",
                                               f.peak_bytes / f.capacity_bytes, m.largest().name));
  out += fmt::format("  {:<26} {:>12}  {}\n", "total", bytes_text(f.peak_bytes), verdict);
  return out;
}

}  // namespace

std::string format_table(const Report& r) {
  // The table shows a subset of the JSON's figures: one check guards both.
  require_finite(report_json(r), "report");
  const Scenario& sc = r.scenario;
  std::string out;
  out += fmt::format("epsim {} run report\n", epsim_version());
  out += fmt::format("  platform   {}\n", platform_text(r));
  out += fmt::format("  workload   {} (model {}), routing seed {}\n", sc.workload.empty() ? "?" : sc.workload,
                     sc.model.empty() ? "?" : sc.model, sc.seed);
  out += fmt::format("  layout     TP {} x DP {} x PP {} = {} ranks, a stage's EP {} x ETP {} x EDP {}, {} ranks per "
                     "node, on {} of {} nodes\n",
                     sc.tp, sc.dp, sc.pp, r.reduction.full_ranks > 0 ? r.reduction.full_ranks : r.ranks, sc.ep, sc.etp,
                     sc.edp, sc.ranks_per_node, r.nodes_used,
                     r.platform_nodes);
  if (sc.global_batch > 0)
    out += fmt::format("  batch      {} sequences x {} tokens per step: {} micro-batch{} of {} sequence{} per DP rank{}\n",
                       sc.global_batch, sc.sequence_length, sc.micro_batches, sc.micro_batches == 1 ? "" : "es",
                       sc.micro_batch, sc.micro_batch == 1 ? "" : "s",
                       sc.pp > 1 ? fmt::format(", pipeline schedule {} ({} chunk{} per stage)", sc.pipeline_schedule,
                                               stage_chunks(sc), stage_chunks(sc) == 1 ? "" : "s")
                                 : std::string());
  if (sc.routing) out += routing_text(*sc.routing) + mitigation_text(*sc.routing, r);
  if (!sc.overrides.empty()) {
    out += "  overrides ";
    for (const std::string& o : sc.overrides) out += " --set " + o;
    out += "\n";
  }
  out += fmt::format("  replay     {} tasks, schedule {}, dispatch/combine {} ({}, {} kernels), all-reduce {}\n",
                     r.tasks, r.schedule, r.algorithm, r.fidelity, r.dispatch_kernel, r.all_reduce);
  out += reduction_text(r.reduction, r.ranks, sc.micro_batches);
  for (const DtypeFallback& f : r.fallbacks) out += "  precision  " + fallback_text(f) + "\n";
  out += "the bound: the larger of the critical path (dependency chain, every task at its bound) and the busiest\n"
         "rank's stream sum (what its streams must run back to back)\n";
  out += fmt::format("  {:<16} {:>13} {:>13} {:>5} {:>13} {:>13} {:>8}  {}\n", "", "sim mean", "sim max", "rank",
                     "bound mean", "bound max", "sim/bnd", "gap from");
  out += row_text(r.step);
  out += fmt::format("  {:<16} {:>13} {:>13}\n", "  bound parts", "critical path", "rank streams");
  out += fmt::format("  {:<16} {:>13} {:>13}\n", "", time_text(r.critical_path_bound_s), time_text(r.rank_streams_bound_s));
  if (r.has_throughput) {
    const Throughput& t = r.throughput;
    if (!sc.serving_phase.empty()) out += serving_text(sc, r);
    if (sc.serving_phase.empty())
      out += fmt::format("throughput (model FLOPs per token: 6 x {:.2f} B active params + 3 x the causal attention "
                         "core = {:.1f} GFLOP; docs/simulator.md)\n",
                         sc.active_params / 1e9, sc.model_flops_per_token / 1e9);
    else
      out += fmt::format("throughput (model FLOPs per token, forward only: 2 x {:.2f} B active params + the attention "
                         "core = {:.1f} GFLOP; docs/serving.md)\n",
                         sc.active_params / 1e9, sc.model_flops_per_token / 1e9);
    out += fmt::format("  tokens/s               {:.1f} global, {:.1f} per NPU ({:.0f} tokens per step)\n",
                       t.tokens_per_s, t.tokens_per_s_per_npu, t.tokens_per_step);
    out += fmt::format("  model FLOP/s per NPU   {:.2f} TFLOP/s\n", t.model_flops_per_s_per_npu / 1e12);
    out += fmt::format("  MFU                    {:.2f} % of the {:.2f} TFLOP/s {} peak per NPU\n", t.mfu * 100,
                       t.peak_flops_per_s_per_npu / 1e12, to_string(t.peak_dtype));
  }
  const GapParts& g = r.gap;
  out += fmt::format("gap sim - bound = {} = the sum of these parts, along the replay's critical path ({} tasks, {} "
                     "collectives, ends on rank {})\n",
                     time_text(r.step.sim_s - r.step.bound_s), g.path_tasks, g.path_collectives, g.end_rank);
  out += fmt::format("  serialisation            {:>13}  the path's tasks at their bounds ({} compute + {} "
                     "communication) minus the bound\n",
                     time_text(g.serialisation_s()), time_text(g.path_compute_bound_s), time_text(g.path_comm_bound_s));
  out += fmt::format("  contention               {:>13}  collectives on the path above their bounds\n",
                     time_text(g.comm_excess_s));
  out += fmt::format("  compute above rooflines  {:>13}  kernels on the path slowed by communication kernels\n",
                     time_text(g.compute_excess_s));
  out += fmt::format("  idle                     {:>13}  time on the path when none of its tasks ran\n",
                     time_text(g.idle_s));
  out += fmt::format("  exposed communication on the path: {} (no compute on the path hides it)\n",
                     time_text(g.path_comm_s()));
  out += "time per phase, per rank (compute: busy time, mean and max over the ranks that run it and the rank of the\n"
         "max; collectives: per rank the sum of the spans of those it takes part in, bytes per rank (mean over all\n"
         "ranks) and the rate per sending rank, counting\n";
  out += fmt::format("{})\n", kCollectiveBytesRule);
  for (const ReportRow& p : r.phases) out += row_text(p);
  out += "communication\n";
  out += fmt::format("  busy per rank           {} mean (time any of its communication streams runs)\n",
                     time_text(r.comm_mean_s));
  out += fmt::format("  exposed per rank        {} mean, {} max (communication while the rank's compute stream is "
                     "idle)\n",
                     time_text(r.exposed_comm_mean_s), time_text(r.exposed_comm_max_s));
  out += fmt::format("  overlap achieved        {:.1f} % of communication hidden behind compute\n",
                     r.overlap_fraction * 100);
  out += fmt::format("  waiting for peers       {} mean per rank (inside a collective, before its last participant "
                     "entered)\n",
                     time_text(r.peer_wait_mean_s));
  const double step_s = std::max(r.step.sim_s, 1e-300);
  out += fmt::format("  idle per rank           {} mean ({:.1f} % of the step), {} max on rank {} (neither compute nor "
                     "communication runs), of which:\n",
                     time_text(r.idle_mean_s), 100 * r.idle_mean_s / step_s, time_text(r.idle_max_s), r.idle_max_rank);
  out += fmt::format("    load skew             {} mean ({:.1f} % of the step): waiting at dispatch/combine for a "
                     "slower rank of the EP group (hot experts)\n",
                     time_text(r.idle_skew_mean_s), 100 * r.idle_skew_mean_s / step_s);
  out += fmt::format("    pipeline              {} mean ({:.1f} % of the step): waiting for the neighbouring stage, "
                     "and before the first and after the last task with stages (the bubble)\n",
                     time_text(r.idle_pipeline_mean_s), 100 * r.idle_pipeline_mean_s / step_s);
  const double other_s = std::max(0.0, r.idle_mean_s - r.idle_skew_mean_s - r.idle_pipeline_mean_s);
  out += fmt::format("    other                 {} mean ({:.1f} % of the step): other dependencies and collectives\n",
                     time_text(other_s), 100 * other_s / step_s);
  if (const auto bubble = closed_form_bubble(sc))
    out += fmt::format("  bubble closed form      {} = {:.1f} % of the step, for identical passes and free transfers\n",
                       bubble->formula, 100 * bubble->share);
  out += "straggler\n";
  out += fmt::format("  step:  rank {} computes {} vs mean {} (max/mean x{:.3f})\n", r.straggler_rank,
                     time_text(r.straggler_compute_s), time_text(r.mean_compute_s), r.straggler_ratio);
  if (r.layer_straggler_layer >= 0)
    out += fmt::format("  layer: rank {} in layer {} computes {} vs the layer's mean {} (max/mean x{:.3f})\n",
                       r.layer_straggler_rank, r.layer_straggler_layer, time_text(r.layer_straggler_compute_s),
                       time_text(r.layer_mean_compute_s), r.layer_straggler_compute_s / r.layer_mean_compute_s);
  out += "busiest links (utilisation = bytes / (bandwidth x step time))\n";
  for (const LinkRow& l : r.busiest_links)
    out += fmt::format("  {:<28} {:>6.1f} %  {:>12} at {:.1f} GB/s\n", l.link, l.utilisation * 100, bytes_text(l.bytes),
                       l.bandwidth_Bps / 1e9);
  if (r.memory) out += memory_text(*r.memory, r.memory_fit);
  out += fmt::format("SimGrid activities: {}\n", r.activities);
  return out;
}

std::string format_json(const Report& r) { return dump_checked(report_json(r), "report"); }

}  // namespace epsim::sim
