// A serving curve per expert-parallel layout, and the one that serves most.
#include "app/serving_layouts.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "sim/platform/platform_loader.hpp"

namespace epsim::app {

namespace {

constexpr const char* kOption = "--ep-list";

}  // namespace

void refuse_sets_a_layout_search_makes(const RunRequest& base) {
  if (base.ep) throw option_error(kOption, "searches the EP sizes itself; drop --ep");
  for (const char* key : {"parallel.ep", "parallel.dp", "routing.redundant_experts"})
    if (sets_key(base, key))
      throw option_error(kOption, fmt::format("sets {} for each layout itself; drop --set {}", key, key));
}

namespace {

RunRequest layout_request(const RunRequest& base, const ServingLayout& l) {
  RunRequest r = base;
  r.edits.ep = workloads::Edit<int>{l.ep, ""};
  r.edits.dp = workloads::Edit<int>{l.dp, ""};
  r.edits.redundant_experts = workloads::Edit<int>{l.redundant_experts, ""};
  return r;
}

// A layout's error as the list's: "--ep-list: EP100: parallel.ep: ...".
InputError at_layout(int ep, const InputError& e) {
  return option_error(kOption, fmt::format("EP{}: {}{}", ep, e.key().empty() ? "" : e.key() + ": ", e.problem()));
}

}  // namespace

int redundant_experts_for(int experts, int workload_redundant, int ep) {
  if ((experts + workload_redundant) % ep == 0) return workload_redundant;
  return (experts + ep - 1) / ep * ep - experts;
}

ServingLayoutSearch serving_layout_search(const ServingCurveRequest& request, const std::vector<int>& eps) {
  refuse_sets_a_layout_search_makes(request.base);
  const workloads::WorkloadSpec w = load_serving_workload(request.base);
  ServingLayoutSearch search;
  search.phase = to_string(w.serving->phase);
  search.latency_name = w.decoding() ? "TPOT" : "TTFT";
  search.limit_s = request.latency_limit_s;
  search.traffic = request.traffic_tokens_per_s;
  const sim::PlatformShape platform = sim::check_platform(
      sim::PlatformRequest{request.base.platform, split_set_options(request.base.overrides).platform,
                           request.base.stack});
  // Every layout checked before the first step is replayed: a bad EP fails in seconds, not after the others ran.
  for (int ep : eps) {
    ServingLayout l;
    l.ep = ep;
    l.tp = w.parallel.tp;
    if (ep % l.tp != 0)
      throw option_error(kOption, fmt::format("EP{}: attention over the unit's ranks needs ep divisible by "
                                              "parallel.tp ({})",
                                              ep, l.tp));
    l.dp = ep / l.tp;
    l.redundant_experts = redundant_experts_for(static_cast<int>(w.model.experts), w.routing.redundant_experts, ep);
    try {
      const workloads::WorkloadSpec lw = load_job_workload(layout_request(request.base, l));
      l.ranks_per_node = lw.parallel.ranks_per_node;
      sim::check_ranks_fit(platform, lw.parallel.world(), lw.parallel.ranks_per_node);
    } catch (const InputError& e) {
      throw at_layout(ep, e);
    }
    search.layouts.push_back(l);
  }
  for (ServingLayout& l : search.layouts) {
    ServingCurveRequest r = request;
    r.base = layout_request(request.base, l);
    l.curve = replay_serving_curve(r);
    if (!l.curve.best) continue;
    // With a traffic, the fewest whole nodes; then the most tokens/s per NPU.
    const auto better = [](const ServingLayout& x, const ServingLayout& y) {
      if (x.curve.pool && y.curve.pool && x.curve.pool->nodes() != y.curve.pool->nodes())
        return x.curve.pool->nodes() < y.curve.pool->nodes();
      return x.curve.points[*x.curve.best].tokens_per_s_per_npu > y.curve.points[*y.curve.best].tokens_per_s_per_npu;
    };
    if (!search.best || better(l, search.layouts[*search.best]))
      search.best = static_cast<std::size_t>(&l - search.layouts.data());
  }
  const ServingLayout* fastest = nullptr;  // the layout whose smallest batch has the shortest latency
  for (const ServingLayout& l : search.layouts)
    if (!l.curve.points.empty() &&
        (!fastest || l.curve.points.front().latency_s < fastest->curve.points.front().latency_s))
      fastest = &l;
  if (!fastest)
    throw option_error("--workload", "not even one sequence per micro-batch fits a rank's HBM at any EP of --ep-list");
  if (search.limit_s && !search.best) {
    const ServingPoint& p = fastest->curve.points.front();
    throw option_error(latency_option(search.phase),
                       fmt::format("no layout meets {:.3f} ms: the fastest, EP{} at {} sequences per rank, takes "
                                   "{:.3f} ms ({}); use more ranks, a faster platform or a longer limit",
                                   *search.limit_s * 1e3, fastest->ep, p.batch, p.latency_s * 1e3,
                                   search.latency_name));
  }
  return search;
}

namespace {

std::string layout_name(const ServingLayout& l) {
  const int nodes = l.ep / l.ranks_per_node;
  return fmt::format("EP{} (attention DP{} x TP{}, {} redundant experts, {} node{} of {} ranks)", l.ep, l.dp, l.tp,
                     l.redundant_experts, nodes, nodes == 1 ? "" : "s", l.ranks_per_node);
}

}  // namespace

std::string format_serving_layouts(const ServingLayoutSearch& s, const RunRequest& base) {
  std::string out = fmt::format("epsim serve: {} on {}, {} step per layout and batch (docs/serving.md)\n",
                                base.workload, base.platform, s.phase);
  for (const std::string& o : base.overrides) out += "  --set " + o + "\n";
  if (!s.layouts.empty()) out += format_host_note(s.layouts.front().curve);  // one platform and stack for all
  for (const ServingLayout& l : s.layouts) {
    out += layout_name(l) + "\n";
    if (l.curve.largest_batch > 0)
      out += fmt::format("  the largest batch that fits a rank's {:.1f} GB of HBM: {} sequences\n",
                         l.curve.hbm_bytes / 1e9, l.curve.largest_batch);
    if (!l.curve.points.empty()) out += format_serving_points(l.curve);
    if (l.curve.refusal) out += "  none: " + l.curve.refusal->problem() + "\n";
  }
  if (!s.limit_s) return out;
  const bool decode = s.phase == "decode";
  out += fmt::format("within {} <= {:.3f} ms, the best batch of each layout:\n", s.latency_name, *s.limit_s * 1e3);
  out += fmt::format("  {:>6} {:>6} {:>10} {:>10} {:>12} {:>14} {:>15}{}\n", "EP", "nodes", "redundant", "batch/rank",
                     s.latency_name + " ms", decode ? "out tok/s/NPU" : "in tok/s/NPU",
                     decode ? "out tok/s/node" : "in tok/s/node", s.traffic ? "  pool: units x nodes" : "");
  for (std::size_t i = 0; i < s.layouts.size(); ++i) {
    const ServingLayout& l = s.layouts[i];
    const std::string head =
        fmt::format("  {:>6} {:>6} {:>10}", l.ep, l.ep / l.ranks_per_node, l.redundant_experts);
    if (!l.curve.best) {
      const bool fits = !l.curve.points.empty();
      out += head + (fits ? "  none within the limit\n" : "  not one sequence fits a rank's HBM\n");
      continue;
    }
    const ServingPoint& p = l.curve.points[*l.curve.best];
    out += head + fmt::format(" {:>10} {:>12.3f} {:>14.1f} {:>15.1f}", p.batch, p.latency_s * 1e3,
                              p.tokens_per_s_per_npu, p.tokens_per_s_per_node);
    if (l.curve.pool)
      out += fmt::format(" {:>6} x {:<3} = {:>5} nodes", l.curve.pool->units, l.curve.pool->unit_nodes,
                         l.curve.pool->nodes());
    out += s.best && *s.best == i ? "  <- best\n" : "\n";
  }
  const ServingLayout& b = s.layouts[*s.best];
  const ServingPoint& p = b.curve.points[*b.curve.best];
  out += fmt::format("best layout within {} <= {:.3f} ms{}: EP{} with {} sequences per rank, {:.1f} tokens/s per NPU, "
                     "{:.1f} per node ({} {:.3f} ms)\n",
                     s.latency_name, *s.limit_s * 1e3, b.curve.pool ? ", the fewest nodes for the traffic" : "", b.ep,
                     p.batch, p.tokens_per_s_per_npu, p.tokens_per_s_per_node, s.latency_name, p.latency_s * 1e3);
  if (b.curve.pool) out += format_pool(*b.curve.pool, s.phase, p.ranks_per_node);
  return out;
}

std::string format_serving_layouts_json(const ServingLayoutSearch& s, const RunRequest& base) {
  nlohmann::ordered_json j = request_json(base);
  j["phase"] = s.phase;
  j["latency"] = s.latency_name;
  if (s.limit_s) j["limit_s"] = *s.limit_s;
  j["layouts"] = nlohmann::ordered_json::array();
  for (const ServingLayout& l : s.layouts) {
    nlohmann::ordered_json lj{{"ep", l.ep},
                              {"dp", l.dp},
                              {"tp", l.tp},
                              {"redundant_experts", l.redundant_experts},
                              {"nodes", l.ep / l.ranks_per_node}};
    lj.update(serving_curve_json(l.curve));
    if (l.curve.refusal) lj["refusal"] = l.curve.refusal->problem();
    j["layouts"].push_back(lj);
  }
  if (s.best) j["best_ep"] = s.layouts[*s.best].ep;
  return j.dump(2) + "\n";
}

}  // namespace epsim::app
