// `epsim collective`: one collective alone on a platform, for comparison
// with peers and with measured collectives (nccl-tests, HCCL tests); see
// docs/collective.md.
//   epsim collective --platform P [--set k=v]... --op OP --npus N [--npus-per-node M]
//     [--sizes 1MB,16MB,...] [--algorithm A] [--fidelity F] [--json]
//   alltoallv: [--workload W] [--tokens T,...] [--hidden H] [--top-k K] [--experts E]
//     [--routing uniform|zipf|hot|trace] [--seed S] instead of --sizes
#include <algorithm>
#include <iostream>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/collective_job.hpp"
#include "app/option_names.hpp"
#include "core/error.hpp"
#include "core/json_output.hpp"
#include "core/units.hpp"
#include "tools/command.hpp"
#include "tools/option_checks.hpp"
#include "tools/run_request.hpp"
#include "topology/cluster_spec.hpp"

namespace epsim::tools {

namespace {

struct CollectiveState {
  app::CollectiveRequest request;  // the options bound to its fields; op, sizes, tokens and fidelity parsed
  std::string op = "alltoall";
  std::vector<std::string> sizes = {"1MB,16MB,256MB"};  // list values (list_items)
  std::vector<std::string> tokens;                       // alltoallv: list values (list_items)
  std::string fidelity;
  bool json = false;
  // Options only one kind of op takes, to refuse them for the others.
  std::vector<CLI::Option*> alltoallv_only;
  CLI::Option* sizes_option = nullptr;
};

std::vector<double> parse_sizes(const std::vector<std::string>& sizes) {
  std::vector<double> out;
  for (const std::string& s : list_items(sizes)) out.push_back(parse_size(s));  // size_in checked each
  return out;
}

// Refuses options the op does not take, by their flag.
void check_option_kinds(const CollectiveState& s, sim::CollectiveOp op) {
  if (op == sim::CollectiveOp::kAllToAllv) {
    if (s.sizes_option->count() > 0)
      throw option_error("--sizes", "alltoallv takes --tokens: its bytes come from the routing");
    return;
  }
  for (const CLI::Option* o : s.alltoallv_only)
    if (o->count() > 0) throw option_error(o->get_name(), "only for --op alltoallv");
}

struct RoutingInfo {
  std::string text;  // one line for the table
  nlohmann::json json;
};

RoutingInfo routing_info(const workloads::WorkloadSpec& w, double bytes_per_token) {
  const char* kind = workloads::to_string(w.routing.kind);
  RoutingInfo out;
  out.text = fmt::format(
      "routing: {} (seed {}) from {}, first MoE layer: top-{} of {} experts, node limit {}, hidden {}; {:g} bytes "
      "per (token, destination rank): dispatch dtype {}",
      kind, w.routing.seed, w.source, w.model.top_k, w.model.experts,
      w.model.node_limit > 0 ? std::to_string(w.model.node_limit) : std::string("none"), w.model.hidden,
      bytes_per_token, workloads::to_string(w.precision.dispatch));
  out.json = {{"workload", w.source},   {"routing", kind},          {"seed", w.routing.seed},
              {"top_k", w.model.top_k}, {"experts", w.model.experts}, {"node_limit", w.model.node_limit},
              {"hidden", w.model.hidden}, {"bytes_per_token", bytes_per_token},
              {"dispatch_dtype", workloads::to_string(w.precision.dispatch)}};
  return out;
}

std::string size_definition(sim::CollectiveOp op) {
  switch (op) {
    case sim::CollectiveOp::kAllToAll: return "the bytes each rank sends in total, S/n to each rank";
    case sim::CollectiveOp::kAllToAllv:
      return "the mean over ranks of the bytes each sends, once per (token, destination rank), its own share "
             "included (as all-to-all counts S)";
    case sim::CollectiveOp::kAllReduce: return "the buffer all-reduced";
    case sim::CollectiveOp::kReduceScatter: return "the whole array each rank holds; each ends with S/n of the sum";
    case sim::CollectiveOp::kAllGather: return "the whole array each rank ends with; each holds S/n";
  }
  return "";
}

const char* kBoundDefinition =
    "plan_bound_s, the plan alone: rounds in sequence (pipelined stages as a flow shop), each its largest route "
    "latency + its bytes at its bottleneck link";

std::string format_table(const CollectiveState& s, sim::CollectiveOp op, const std::string& source, int per_node,
                         const RoutingInfo& routing, const std::vector<app::CollectiveRow>& rows) {
  const bool v = op == sim::CollectiveOp::kAllToAllv;
  std::string out = fmt::format("epsim collective: {} over {} NPUs ({} per node) on {}\n", s.op, s.request.npus,
                                per_node, source);
  if (v) out += routing.text + "\n";
  out += fmt::format("algorithm {}, fidelity {}\n", rows.front().timing.algorithm, rows.front().timing.fidelity);
  out += fmt::format(
      "S: bytes per rank as nccl-tests counts them ({}); algbw = S / time; busbw = algbw x {} "
      "(nccl-tests docs/PERFORMANCE.md)\n",
      size_definition(op), sim::bus_factor_formula(op));
  if (v) out += "moved: bytes the plan carries between NPUs, all ranks (tokens kept on their rank do not move)\n";
  out += std::string("bound: ") + kBoundDefinition + "\n";
  if (v) out += fmt::format("{:>14} {:>16}", "tokens/rank", "moved (bytes)");
  out += fmt::format(" {:>14} {:>14} {:>14} {:>14} {:>14}\n", "S (bytes)", "time (us)", "bound (us)", "algbw (GB/s)",
                     "busbw (GB/s)");
  for (const app::CollectiveRow& row : rows) {
    const sim::CollectiveTiming& r = row.timing;
    if (v) out += fmt::format("{:>14} {:>16.0f}", row.tokens, r.moved_bytes);
    out += fmt::format(" {:>14.0f} {:>14.3f} {:>14.3f} {:>14.3f} {:>14.3f}\n", r.bytes, r.time_s * 1e6,
                       r.bound_s * 1e6, r.algbw_Bps / 1e9, r.busbw_Bps / 1e9);
  }
  return out;
}

std::string format_json(const CollectiveState& s, sim::CollectiveOp op, const std::string& source, int per_node,
                        const RoutingInfo& routing, const std::vector<app::CollectiveRow>& rows) {
  const bool v = op == sim::CollectiveOp::kAllToAllv;
  nlohmann::json j;
  j["op"] = s.op;
  j["platform"] = source;
  j["npus"] = s.request.npus;
  j["npus_per_node"] = per_node;
  j["algorithm"] = rows.front().timing.algorithm;
  j["fidelity"] = rows.front().timing.fidelity;
  if (v) j["routing"] = routing.json;
  j["definitions"] = {{"bytes", "S per rank, as nccl-tests counts it: " + size_definition(op)},
                      {"time_s", "first byte sent to last byte received, seconds"},
                      {"algbw_Bps", "S / time_s, bytes per second"},
                      {"busbw_Bps", std::string("algbw_Bps x ") + sim::bus_factor_formula(op)},
                      {"bound_s", std::string(kBoundDefinition) + ", seconds"},
                      {"moved_bytes", "bytes the plan carries between NPUs, all ranks"}};
  j["sizes"] = nlohmann::json::array();
  for (const app::CollectiveRow& row : rows) {
    const sim::CollectiveTiming& r = row.timing;
    nlohmann::json e = {{"bytes", r.bytes},         {"time_s", r.time_s},           {"bound_s", r.bound_s},
                        {"algbw_Bps", r.algbw_Bps}, {"busbw_Bps", r.busbw_Bps},     {"moved_bytes", r.moved_bytes},
                        {"activities", r.activities}};
    if (v) e["tokens_per_rank"] = row.tokens;
    j["sizes"].push_back(e);
  }
  return dump_checked(j, "collective");
}

app::CollectiveRequest to_request(const CollectiveState& s, sim::CollectiveOp op) {
  app::CollectiveRequest r = s.request;
  r.op = op;
  if (op != sim::CollectiveOp::kAllToAllv) r.sizes = parse_sizes(s.sizes);
  r.fidelity = app::parse_named_or_default(app::kFidelityNames, s.fidelity, "--fidelity");
  for (const std::string& t : list_items(s.tokens)) r.tokens.push_back(std::stoll(t));  // integer_in checked each
  return r;
}

int run_collective(const CollectiveState& s) {
  const sim::CollectiveOp op = app::parse_named(app::kCollectiveOpNames, s.op, "--op");
  check_option_kinds(s, op);
  const app::CollectiveOutcome out = app::run_collective_job(to_request(s, op));
  RoutingInfo routing;
  if (out.workload) routing = routing_info(*out.workload, out.bytes_per_token);
  // The JSON form checks every figure is finite, for the table too.
  const std::string json = format_json(s, op, out.platform_source, out.npus_per_node, routing, out.rows);
  std::cout << (s.json ? json : format_table(s, op, out.platform_source, out.npus_per_node, routing, out.rows));
  return 0;
}

}  // namespace

Command add_collective_command(CLI::App& epsim) {
  auto state = std::make_shared<CollectiveState>();
  CollectiveState& s = *state;
  CLI::App* app = epsim.add_subcommand("collective", "time one collective alone on a platform (nccl-tests figures)");
  app->add_option("--platform", s.request.platform, "cluster preset, cluster TOML or SimGrid XML")->required();
  app->add_option("--set", s.request.overrides,
                  "override one platform key, e.g. --set node.npus=64 (alltoallv: model./parallel./precision./"
                  "routing. keys go to the workload, as in run)");
  app->add_option("--op", s.op, "alltoall, alltoallv, allreduce, reducescatter or allgather")
      ->check(one_of(app::name_list(app::kCollectiveOpNames)))
      ->capture_default_str();
  // Ranks: as many as a cluster may have (topology/cluster_spec.hpp), per node as node.npus.
  app->add_option("--npus", s.request.npus, "ranks taking part (the first NPUs of the platform)")
      ->required()
      ->check(integer_in(2, topology::kMaxClusterNpus));
  app->add_option("--npus-per-node", s.request.npus_per_node,
                  "ranks per node (default: the platform's, at most --npus)")
      ->check(integer_in(1, topology::kMaxNodeNpus));
  s.sizes_option = app->add_option("--sizes", s.sizes, "bytes per rank (nccl-tests' S), comma-separated, e.g. 1MB,16MB,1GiB")
                       ->check(list_of(size_in(Physical::kMessageBytes)))
                       ->capture_default_str();
  app->add_option("--algorithm", s.request.algorithm,
                  "alltoall(v): direct or hierarchical (default: as run chooses); allreduce, reducescatter, "
                  "allgather: ring or hierarchical (default)")
      ->check(one_of({"direct", "hierarchical", "ring"}));
  app->add_option("--fidelity", s.fidelity, "per-flow or aggregated (default: per-flow up to 8 ranks)")
      ->check(one_of(app::name_list(app::kFidelityNames)));
  app->add_flag("--json", s.json, "print the figures as JSON");
  // The alltoallv's routing; ranges as the workload keys they set (workload_loader.cpp).
  s.alltoallv_only = {
      app->add_option("--workload", s.request.workload, "alltoallv: workload TOML or preset whose routing is drawn")
          ->capture_default_str(),
      app->add_option("--tokens", s.tokens, "alltoallv: tokens per rank, comma-separated (default: the workload's)")
          ->check(list_of(integer_in(1, 1LL << 30))),
      app->add_option_function<long long>("--hidden", [&s](const long long& x) { s.request.hidden = x; },
                                          "alltoallv: hidden size (model.hidden)")
          ->check(integer_in(1, 1LL << 24)),
      app->add_option_function<long long>("--top-k", [&s](const long long& x) { s.request.top_k = x; },
                                          "alltoallv: experts per token (model.top_k)")
          ->check(integer_in(1, 64)),
      app->add_option_function<long long>("--experts", [&s](const long long& x) { s.request.experts = x; },
                                          "alltoallv: routed experts (model.experts)")
          ->check(integer_in(1, 1 << 16)),
      app->add_option("--routing", s.request.routing, "alltoallv: uniform, zipf, hot or trace (routing.kind)")
          ->check(one_of(app::name_list(app::kRoutingKindNames))),
      app->add_option_function<long long>("--seed", [&s](const long long& x) { s.request.seed = x; },
                                          "alltoallv: routing seed (routing.seed)")
          ->check(integer_at_least(0)),
  };
  return Command{app, [state] { return run_collective(*state); }};
}

}  // namespace epsim::tools
