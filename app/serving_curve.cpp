// Serving steps at several batches, and the best one under a latency limit.
#include "app/serving_curve.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/child_job.hpp"
#include "core/error.hpp"
#include "sim/report/report.hpp"
#include "workloads/serving_memory.hpp"

namespace epsim::app {

namespace {


// A step at `batch` sequences per rank in `micro_batches` (0: the workload's own).
RunRequest at_batch(const RunRequest& base, std::int64_t batch, int micro_batches = 0) {
  RunRequest r = base;
  r.overrides.push_back(fmt::format("serving.batch={}", batch));
  if (micro_batches > 0) r.overrides.push_back(fmt::format("serving.micro_batches={}", micro_batches));
  return r;
}

// One replay of the curve: a batch at one micro-batch count.
struct Replay {
  std::int64_t batch = 0;
  int micro_batches = 0;
};

// A step's figures from its report's JSON.
ServingPoint point_of(std::int64_t batch, const std::string& report_json) {
  const nlohmann::json j = nlohmann::json::parse(report_json);
  ServingPoint p;
  p.batch = batch;
  p.micro_batches = j["scenario"]["micro_batches"].get<int>();
  p.step_s = j["step"]["sim_s"].get<double>();
  const nlohmann::json& s = j["serving"];
  p.latency_s = s.contains("tpot_s") ? s["tpot_s"].get<double>() : s["ttft_s"].get<double>();
  p.tokens_per_s_per_npu = s["tokens_per_s_per_npu"].get<double>();
  p.tokens_per_s_per_node = s["tokens_per_s_per_node"].get<double>();
  p.mfu = j["throughput"]["mfu"].get<double>();
  if (j.contains("memory")) p.memory_bytes = j["memory"]["peak_bytes_per_rank"].get<double>();
  p.nodes = j["scenario"]["nodes"].get<int>();
  p.ranks_per_node = j["scenario"]["ranks_per_node"].get<int>();
  if (s.contains("kv_handoff")) {
    const nlohmann::json& h = s["kv_handoff"];
    p.handoff_bytes_per_token =
        h["bytes_per_rank"].get<double>() / (static_cast<double>(batch) * s["keys_per_token"].get<double>());
    if (h.contains("Bps_per_rank")) p.handoff_Bps_per_rank = h["Bps_per_rank"].get<double>();
  }
  return p;
}

// The default batches: micro_batches x 2^i up to the largest that fits, and that largest.
std::vector<std::int64_t> default_batches(std::int64_t step, std::int64_t largest) {
  std::vector<std::int64_t> out;
  const std::int64_t top = largest > 0 ? largest : step * 256;
  for (std::int64_t b = step; b <= top; b *= 2) out.push_back(b);
  if (largest > 0 && out.back() != largest) out.push_back(largest);
  return out;
}

}  // namespace

std::string latency_option(const std::string& phase) { return phase == "decode" ? "--tpot" : "--ttft"; }

workloads::WorkloadSpec load_serving_workload(const RunRequest& request) {
  workloads::WorkloadSpec w = load_job_workload(request);
  if (!w.serving)
    throw option_error("--workload", "not a serving workload: it has no [serving] table (docs/serving.md)");
  return w;
}

nlohmann::ordered_json request_json(const RunRequest& base) {
  nlohmann::ordered_json j;
  j["platform"] = base.platform;
  j["workload"] = base.workload;
  j["overrides"] = base.overrides;
  return j;
}

bool sets_key(const RunRequest& r, const std::string& key) {
  for (const std::string& set : r.overrides) {
    std::string k = set.substr(0, set.find('='));
    if (k.rfind("workload.", 0) == 0) k = k.substr(9);
    if (k == key) return true;
  }
  return false;
}

namespace {

// A stack that issues kernels from the host prices a serving step as a
// training framework's eager loop runs it; serving frameworks replay a
// decode step as captured graphs. Say so, and which stacks do not.
std::string host_note(const topology::ClusterSpec& cluster) {
  const topology::StackSpec& s = cluster.stack;
  if (!topology::issues_from_host(s)) return "";
  std::string costs;
  if (s.host_per_kernel_s > 0) costs += fmt::format("issues each kernel from the host ({:.1f} us)", s.host_per_kernel_s * 1e6);
  if (s.moe_host_sync_s > 0)
    costs += fmt::format("{}a host sync per MoE layer ({:.0f} us)", costs.empty() ? "" : " with ", s.moe_host_sync_s * 1e6);
  if (costs.empty()) costs = fmt::format("issues each FP8 GEMM from the host ({:.1f} us)", s.host_per_fp8_gemm_s * 1e6);
  const std::vector<std::string> others = topology::stacks_without_host_time(cluster.npu.model);
  return fmt::format("stack {} {}, as a training framework's eager loop does; serving frameworks replay a step as "
                     "captured graphs{}",
                     s.name, costs,
                     others.empty() ? fmt::format(" (no stack for {} spends no host time)", cluster.npu.model)
                                    : fmt::format(": --stack {} prices that", fmt::join(others, " or ")));
}

}  // namespace

std::string format_host_note(const ServingCurve& c) {
  return c.host_note.empty() ? "" : "  note: " + c.host_note + "\n";
}

PoolSize size_pool(const ServingPoint& p, double traffic) {
  PoolSize pool;
  pool.traffic_tokens_per_s = traffic;
  pool.nodes_needed = traffic / p.tokens_per_s_per_node;
  pool.unit_nodes = p.nodes;
  pool.units = static_cast<std::int64_t>(std::ceil(pool.nodes_needed / p.nodes - 1e-9));
  pool.handoff_Bps = traffic * p.handoff_bytes_per_token;
  pool.handoff_Bps_per_node = pool.handoff_Bps / static_cast<double>(pool.nodes());
  pool.fabric_Bps_per_node = p.handoff_Bps_per_rank * p.ranks_per_node;
  return pool;
}

ServingCurve replay_serving_curve(const ServingCurveRequest& request) {
  const workloads::WorkloadSpec w = load_serving_workload(request.base);
  ServingCurve curve;
  curve.phase = to_string(w.serving->phase);
  curve.latency_name = w.decoding() ? "TPOT" : "TTFT";
  const SplitOverrides split = split_set_options(request.base.overrides);
  const sim::PlatformShape platform =
      sim::check_platform(sim::PlatformRequest{request.base.platform, split.platform, request.base.stack});
  if (platform.cluster) {
    curve.hbm_bytes = platform.cluster->npu.hbm_capacity_bytes;
    curve.largest_batch = workloads::largest_serving_batch(w, curve.hbm_bytes);
    curve.host_note = host_note(*platform.cluster);
  }
  // The micro-batch counts every batch is replayed at; batches step by their least common multiple.
  if (!request.micro_batches.empty() && sets_key(request.base, "serving.micro_batches"))
    throw option_error("--micro-batches", "replays each batch at these counts itself; drop --set serving.micro_batches");
  const std::vector<int> counts =
      request.micro_batches.empty() ? std::vector<int>{0} : request.micro_batches;  // 0: the workload's own
  std::int64_t step = 1;
  std::map<int, std::int64_t> largest;  // by count: the largest batch that fits (0: unknown or none)
  for (int m : counts) {
    const int count = m > 0 ? m : w.serving->micro_batches;
    step = std::lcm(step, static_cast<std::int64_t>(count));
    largest[m] = 0;
    if (platform.cluster) {
      const workloads::WorkloadSpec wm = m > 0 ? load_job_workload(at_batch(request.base, m, m)) : w;
      largest[m] = workloads::largest_serving_batch(wm, curve.hbm_bytes);
      curve.largest_batch = std::max(curve.largest_batch, largest[m]);
    }
  }
  const auto replays_of = [&](std::int64_t b) {
    std::vector<Replay> out;
    for (int m : counts) {
      const int count = m > 0 ? m : w.serving->micro_batches;
      if (b >= count && b % count == 0 && (!platform.cluster || b <= largest[m])) out.push_back({b, m});
    }
    return out;
  };
  std::vector<std::int64_t> batches =
      request.batches.empty() ? default_batches(step, curve.largest_batch) : request.batches;
  for (std::int64_t b : batches) {
    if (curve.largest_batch > 0 && b > curve.largest_batch)
      throw option_error("--batches", fmt::format("{} sequences per rank do not fit its {:.1f} GB of HBM; the largest "
                                                  "batch that fits is {}",
                                                  b, curve.hbm_bytes / 1e9, curve.largest_batch));
    if (replays_of(b).empty() && !(platform.cluster && curve.largest_batch == 0))
      throw option_error("--batches", counts.size() == 1
                                          ? fmt::format("{}: a batch is a multiple of serving.micro_batches ({})", b,
                                                        counts.front() > 0 ? counts.front() : w.serving->micro_batches)
                                          : fmt::format("{}: no micro-batch count of --micro-batches divides it", b));
  }
  if (batches.empty() || (curve.largest_batch == 0 && platform.cluster)) {
    curve.refusal = option_error("--workload", fmt::format("not even one sequence per micro-batch fits a rank's "
                                                           "{:.1f} GB of HBM beside its weights",
                                                           curve.hbm_bytes / 1e9));
    return curve;
  }

  // Each batch's point: its fastest micro-batch count.
  std::map<std::int64_t, ServingPoint> done;
  std::vector<Replay> list;
  std::size_t next = 0;
  const auto run_all = [&](const std::vector<std::int64_t>& batch_list) {
    list.clear();
    for (std::int64_t b : batch_list)
      for (const Replay& r : replays_of(b)) list.push_back(r);
    next = 0;
    run_child_jobs(
        request.jobs,
        [&]() -> std::optional<ChildJob> {
          if (next == list.size()) return std::nullopt;
          const Replay r = list[next++];
          return ChildJob{fmt::format("serving.batch={}{}", r.batch,
                                      r.micro_batches > 0 ? fmt::format(" serving.micro_batches={}", r.micro_batches)
                                                          : ""),
                          [&request, r] {
                            return std::to_string(r.batch) + "\n" +
                                   sim::format_json(
                                       run_job(at_batch(request.base, r.batch, r.micro_batches)).simulation.report);
                          }};
        },
        [&](const ChildJob&, ChildVerdict verdict) {
          if (verdict.error) std::rethrow_exception(verdict.error);
          const std::size_t line = verdict.output.find('\n');
          const ServingPoint p = point_of(std::stoll(verdict.output.substr(0, line)), verdict.output.substr(line + 1));
          const auto it = done.find(p.batch);
          if (it == done.end() || p.step_s < it->second.step_s ||
              (p.step_s == it->second.step_s && p.micro_batches < it->second.micro_batches))
            done[p.batch] = p;
        });
  };
  run_all(batches);

  curve.limit_s = request.latency_limit_s;
  if (curve.limit_s) {
    const double limit = *curve.limit_s;
    // Bisect between the largest batch within the limit and the next one beyond it (latency grows with the batch).
    std::optional<std::int64_t> ok, over;
    for (const auto& [b, p] : done) {
      if (p.latency_s <= limit) ok = b;
      else if (!over && ok) over = b;
    }
    if (!ok) {
      const ServingPoint& first = done.begin()->second;
      curve.refusal = option_error(
          latency_option(curve.phase),
          fmt::format("no batch meets {:.3f} ms: the smallest, {} sequences per rank, takes {:.3f} ms ({}); use more "
                      "ranks, a faster platform or a longer limit",
                      limit * 1e3, first.batch, first.latency_s * 1e3, curve.latency_name));
    }
    while (ok && over && *over - *ok > step) {
      const std::int64_t mid = (*ok + *over) / 2 / step * step;
      if (mid <= *ok) break;
      run_all({mid});
      if (done[mid].latency_s <= limit) ok = mid;
      else over = mid;
    }
  }
  for (const auto& [b, p] : done) curve.points.push_back(p);
  if (curve.limit_s)
    for (std::size_t i = 0; i < curve.points.size(); ++i)
      if (curve.points[i].latency_s <= *curve.limit_s &&
          (!curve.best || curve.points[i].tokens_per_s_per_npu > curve.points[*curve.best].tokens_per_s_per_npu))
        curve.best = i;
  if (request.traffic_tokens_per_s && curve.best)
    curve.pool = size_pool(curve.points[*curve.best], *request.traffic_tokens_per_s);
  return curve;
}

ServingCurve serving_curve(const ServingCurveRequest& request) {
  ServingCurve curve = replay_serving_curve(request);
  if (curve.refusal) throw *curve.refusal;
  return curve;
}

std::string format_pool(const PoolSize& p, const std::string& phase, int ranks_per_node) {
  const bool decode = phase == "decode";
  std::string out = fmt::format(
      "pool for {:.1f} {}: {:.2f} nodes at that batch's rate per node, in whole units of {} node{}: {} "
      "unit{} = {} nodes, {} NPUs ({:.1f} % loaded)\n",
      p.traffic_tokens_per_s, decode ? "output tokens/s" : "input tokens/s (hits included)", p.nodes_needed, p.unit_nodes,
      p.unit_nodes == 1 ? "" : "s", p.units, p.units == 1 ? "" : "s", p.nodes(), p.nodes() * ranks_per_node,
      100 * p.load());
  if (!decode && p.handoff_Bps > 0) {
    out += fmt::format("  KV handoff to the decode pool: {:.2f} GB/s in all (traffic x the KV bytes per input token), "
                       "{:.2f} GB/s per prefill node",
                       p.handoff_Bps / 1e9, p.handoff_Bps_per_node / 1e9);
    out += p.fabric_Bps_per_node > 0
               ? fmt::format(", {:.1f} % of its {:.1f} GB/s out (its ranks' NICs or ports; the step's own dispatch and "
                             "combine share them)\n",
                             100 * p.handoff_Bps_per_node / p.fabric_Bps_per_node, p.fabric_Bps_per_node / 1e9)
               : "\n";
  }
  return out;
}

std::string format_serving_points(const ServingCurve& c) {
  const bool decode = c.phase == "decode";
  std::string out = fmt::format("  {:>10} {:>6} {:>12} {:>12} {:>14} {:>15} {:>8} {:>10}\n", "batch/rank",
                                "micro", "step ms", c.latency_name + " ms",
                                decode ? "out tok/s/NPU" : "in tok/s/NPU", decode ? "out tok/s/node" : "in tok/s/node",
                                "MFU", "memory GB");
  for (std::size_t i = 0; i < c.points.size(); ++i) {
    const ServingPoint& p = c.points[i];
    out += fmt::format("  {:>10} {:>6} {:>12.3f} {:>12.3f} {:>14.1f} {:>15.1f} {:>7.2f}% {:>10.2f}{}\n", p.batch,
                       p.micro_batches, p.step_s * 1e3, p.latency_s * 1e3, p.tokens_per_s_per_npu, p.tokens_per_s_per_node,
                       p.mfu * 100, p.memory_bytes / 1e9, c.best && *c.best == i ? "  <- best" : "");
  }
  return out;
}

std::string format_serving_curve(const ServingCurve& c, const RunRequest& base) {
  std::string out = fmt::format("epsim serve: {} on {}, {} step at each batch (docs/serving.md)\n", base.workload,
                                base.platform, c.phase);
  for (const std::string& o : base.overrides) out += "  --set " + o + "\n";
  out += format_host_note(c);
  if (c.largest_batch > 0)
    out += fmt::format("  the largest batch that fits a rank's {:.1f} GB of HBM: {} sequences\n", c.hbm_bytes / 1e9,
                       c.largest_batch);
  out += format_serving_points(c);
  if (c.limit_s && c.best) {
    const ServingPoint& b = c.points[*c.best];
    out += fmt::format("best within {} <= {:.3f} ms: {} sequences per rank in {} micro-batch{}, {:.1f} tokens/s per "
                       "NPU, {:.1f} per node ({} {:.3f} ms)\n",
                       c.latency_name, *c.limit_s * 1e3, b.batch, b.micro_batches, b.micro_batches == 1 ? "" : "es", b.tokens_per_s_per_npu, b.tokens_per_s_per_node,
                       c.latency_name, b.latency_s * 1e3);
  }
  if (c.pool) out += format_pool(*c.pool, c.phase, c.points[*c.best].ranks_per_node);
  return out;
}

nlohmann::ordered_json serving_curve_json(const ServingCurve& c) {
  nlohmann::ordered_json j;
  j["phase"] = c.phase;
  j["latency"] = c.latency_name;
  j["largest_batch"] = c.largest_batch;
  j["hbm_bytes"] = c.hbm_bytes;
  j["points"] = nlohmann::ordered_json::array();
  for (const ServingPoint& p : c.points)
    j["points"].push_back({{"batch", p.batch},
                           {"micro_batches", p.micro_batches},
                           {"step_s", p.step_s},
                           {"latency_s", p.latency_s},
                           {"tokens_per_s_per_npu", p.tokens_per_s_per_npu},
                           {"tokens_per_s_per_node", p.tokens_per_s_per_node},
                           {"mfu", p.mfu},
                           {"memory_bytes", p.memory_bytes},
                           {"nodes", p.nodes}});
  if (c.limit_s) j["limit_s"] = *c.limit_s;
  if (c.best) j["best_batch"] = c.points[*c.best].batch;
  if (!c.host_note.empty()) j["host_note"] = c.host_note;
  if (c.pool) {
    const PoolSize& p = *c.pool;
    j["pool"] = {{"traffic_tokens_per_s", p.traffic_tokens_per_s},
                 {"nodes_needed", p.nodes_needed},
                 {"unit_nodes", p.unit_nodes},
                 {"units", p.units},
                 {"nodes", p.nodes()},
                 {"load", p.load()}};
    if (p.handoff_Bps > 0) {
      j["pool"]["kv_handoff_Bps"] = p.handoff_Bps;
      j["pool"]["kv_handoff_Bps_per_node"] = p.handoff_Bps_per_node;
      if (p.fabric_Bps_per_node > 0) j["pool"]["fabric_Bps_per_node"] = p.fabric_Bps_per_node;
    }
  }
  return j;
}

std::string format_serving_curve_json(const ServingCurve& c, const RunRequest& base) {
  nlohmann::ordered_json j = request_json(base);
  j.update(serving_curve_json(c));
  return j.dump(2) + "\n";
}

}  // namespace epsim::app
