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

#include "core/error.hpp"
#include "core/json_output.hpp"
#include "core/overrides.hpp"
#include "core/presets.hpp"
#include "core/toml_base.hpp"
#include "core/units.hpp"
#include "sim/platform/platform_loader.hpp"
#include "sim/replay/collective_bench.hpp"
#include "tools/command.hpp"
#include "tools/option_checks.hpp"
#include "tools/run_request.hpp"
#include "topology/cluster_spec.hpp"
#include "workloads/workload_loader.hpp"

namespace epsim::tools {

namespace {

struct CollectiveState {
  std::string platform;
  std::vector<std::string> overrides;
  std::string op = "alltoall";
  int npus = 0;
  int npus_per_node = 0;  // 0: the platform's, at most --npus
  std::vector<std::string> sizes = {"1MB,16MB,256MB"};  // list values (list_items)
  std::string algorithm;  // "": as `run` resolves it
  std::string fidelity;
  bool json = false;
  // alltoallv: the routing's workload and its shape (unset: the workload's own).
  std::string workload = "deepseek-v3";
  std::vector<std::string> tokens;  // list values (list_items)
  std::optional<long long> hidden, top_k, experts, seed;
  std::string routing;
  // Options only one kind of op takes, to refuse them for the others.
  std::vector<CLI::Option*> alltoallv_only;
  CLI::Option* sizes_option = nullptr;
};

sim::CollectiveOp parse_op(const std::string& op) {
  for (sim::CollectiveOp o : {sim::CollectiveOp::kAllToAll, sim::CollectiveOp::kAllToAllv, sim::CollectiveOp::kAllReduce,
                              sim::CollectiveOp::kReduceScatter, sim::CollectiveOp::kAllGather})
    if (op == sim::to_string(o)) return o;
  throw option_error("--op", "expected alltoall, alltoallv, allreduce, reducescatter or allgather, got \"" + op + "\"");
}

bool is_group_op(sim::CollectiveOp op) {
  return op != sim::CollectiveOp::kAllToAll && op != sim::CollectiveOp::kAllToAllv;
}

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

sim::ReplayOptions replay_options(const CollectiveState& s, sim::CollectiveOp op) {
  sim::ReplayOptions o;
  o.record_link_spans = false;
  if (!is_group_op(op)) {
    if (s.algorithm == "direct")
      o.algorithm = sim::AlltoallAlgorithm::kDirect;
    else if (s.algorithm == "hierarchical")
      o.algorithm = sim::AlltoallAlgorithm::kHierarchical;
    else if (!s.algorithm.empty())
      throw option_error("--algorithm", fmt::format("{}: expected direct or hierarchical, got \"{}\"", s.op, s.algorithm));
  } else {
    if (s.algorithm == "ring")
      o.all_reduce = sim::AllReduceAlgorithm::kRing;
    else if (s.algorithm == "hierarchical" || s.algorithm.empty())
      o.all_reduce = sim::AllReduceAlgorithm::kHierarchical;
    else
      throw option_error("--algorithm", fmt::format("{}: expected ring or hierarchical, got \"{}\"", s.op, s.algorithm));
  }
  o.fidelity = app::parse_named_or_default(app::kFidelityNames, s.fidelity, "--fidelity");
  if (o.fidelity == sim::Fidelity::kPerFlow) {
    const std::string why = sim::per_flow_refusal(s.npus);
    if (!why.empty()) throw option_error("--fidelity", why);
  }
  return o;
}

// One workload override the command adds, and the flag it comes from.
struct AddedOverride {
  std::string assignment;
  std::string flag;
};

// The alltoallv's added workload overrides: the shape options, then what
// the collective fixes (its ranks, one micro-batch of `tokens`, one replica).
std::vector<AddedOverride> added_overrides(const CollectiveState& s, int per_node, std::optional<long long> tokens) {
  std::vector<AddedOverride> out;
  if (s.hidden) out.push_back({fmt::format("model.hidden={}", *s.hidden), "--hidden"});
  if (s.experts) out.push_back({fmt::format("model.experts={}", *s.experts), "--experts"});
  if (s.top_k) out.push_back({fmt::format("model.top_k={}", *s.top_k), "--top-k"});
  if (!s.routing.empty()) out.push_back({"routing.kind=\"" + s.routing + "\"", "--routing"});
  if (s.seed) out.push_back({fmt::format("routing.seed={}", *s.seed), "--seed"});
  out.push_back({fmt::format("parallel.ep={}", s.npus), "--npus"});
  out.push_back({fmt::format("parallel.dp={}", s.npus), "--npus"});  // one EP group
  // One stage of a pipelined or tensor-parallel workload: its EP group alone.
  for (const char* one : {"parallel.tp=1", "parallel.pp=1", "parallel.vpp=1", "parallel.schedule=\"1f1b\""})
    out.push_back({one, "--npus"});
  out.push_back({fmt::format("parallel.ranks_per_node={}", per_node), "--npus-per-node"});
  out.push_back({"parallel.micro_batches=1", "--tokens"});
  if (tokens) {
    out.push_back({"parallel.micro_batch=1", "--tokens"});
    out.push_back({fmt::format("parallel.sequence_length={}", *tokens), "--tokens"});
  }
  return out;
}

// The workload with the user's --set and the added overrides; an error at
// an added override is reported at its flag.
workloads::WorkloadSpec load_alltoallv_workload(const CollectiveState& s, const std::vector<std::string>& user,
                                                int per_node, std::optional<long long> tokens) {
  std::vector<AddedOverride> added = added_overrides(s, per_node, tokens);
  // Only the first MoE layer is drawn (sample_alltoallv), so the loader's
  // memory check must count one layer's traffic, not every layer's (4096
  // NPUs: 0.5 GiB, not 29 GiB): the model is cut after its first MoE layer,
  // read from the file as the user's --set leaves it (a file that does not
  // read is reported by the full load).
  try {
    toml::table root = load_toml_with_base(resolve_preset_file(PresetKind::kWorkload, s.workload), PresetKind::kWorkload);
    apply_overrides(root, user);
    const auto dense = root["model"]["dense_layers"].value<std::int64_t>();
    added.push_back({fmt::format("model.layers={}", dense.value_or(0) + 1), "--npus"});
  } catch (const InputError&) {
  }
  std::vector<std::string> overrides = user;
  for (const AddedOverride& a : added) overrides.push_back(a.assignment);
  try {
    return workloads::load_workload(s.workload, overrides);
  } catch (const InputError& e) {
    for (const AddedOverride& a : added)
      if (e.where().file == "--set " + a.assignment) throw option_error(a.flag, e.key() + ": " + e.problem());
    // A kind's parameters (zipf_s, hot_share, ...) the workload lacks.
    if (!s.routing.empty() && e.key().rfind("routing.", 0) == 0 && e.problem() == "missing required key")
      throw option_error("--routing", fmt::format("{} {} needs {}: add --set {}=VALUE", s.routing, s.workload,
                                                  e.key(), e.key()));
    throw;
  }
}

struct Row {
  sim::CollectiveTiming timing;
  std::int64_t tokens = 0;  // alltoallv: tokens per rank
};

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
                         const RoutingInfo& routing, const std::vector<Row>& rows) {
  const bool v = op == sim::CollectiveOp::kAllToAllv;
  std::string out = fmt::format("epsim collective: {} over {} NPUs ({} per node) on {}\n", s.op, s.npus, per_node,
                                source);
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
  for (const Row& row : rows) {
    const sim::CollectiveTiming& r = row.timing;
    if (v) out += fmt::format("{:>14} {:>16.0f}", row.tokens, r.moved_bytes);
    out += fmt::format(" {:>14.0f} {:>14.3f} {:>14.3f} {:>14.3f} {:>14.3f}\n", r.bytes, r.time_s * 1e6,
                       r.bound_s * 1e6, r.algbw_Bps / 1e9, r.busbw_Bps / 1e9);
  }
  return out;
}

std::string format_json(const CollectiveState& s, sim::CollectiveOp op, const std::string& source, int per_node,
                        const RoutingInfo& routing, const std::vector<Row>& rows) {
  const bool v = op == sim::CollectiveOp::kAllToAllv;
  nlohmann::json j;
  j["op"] = s.op;
  j["platform"] = source;
  j["npus"] = s.npus;
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
  for (const Row& row : rows) {
    const sim::CollectiveTiming& r = row.timing;
    nlohmann::json e = {{"bytes", r.bytes},         {"time_s", r.time_s},           {"bound_s", r.bound_s},
                        {"algbw_Bps", r.algbw_Bps}, {"busbw_Bps", r.busbw_Bps},     {"moved_bytes", r.moved_bytes},
                        {"activities", r.activities}};
    if (v) e["tokens_per_rank"] = row.tokens;
    j["sizes"].push_back(e);
  }
  return dump_checked(j, "collective");
}

int run_collective(const CollectiveState& s) {
  const sim::CollectiveOp op = parse_op(s.op);
  check_option_kinds(s, op);
  const bool v = op == sim::CollectiveOp::kAllToAllv;
  const std::vector<double> sizes = v ? std::vector<double>{} : parse_sizes(s.sizes);
  const sim::ReplayOptions options = replay_options(s, op);
  const app::SplitOverrides split = v ? app::split_set_options(s.overrides) : app::SplitOverrides{{}, s.overrides};
  const sim::PlatformRequest request{s.platform, split.platform};
  const sim::PlatformShape shape = sim::check_platform(request);
  const int per_node = s.npus_per_node > 0 ? s.npus_per_node : std::min(s.npus, shape.npus_per_node);
  try {
    sim::check_ranks_fit(shape, s.npus, per_node);
  } catch (const InputError& e) {  // the placement of --npus ranks, --npus-per-node to a node
    if (e.key() != "placement") throw;
    throw option_error(s.npus_per_node > 0 ? "--npus-per-node" : "--npus", e.problem());
  }
  // Each rank holds experts / npus experts: a count that does not split is --experts' fault when given.
  if (v && s.experts && *s.experts % s.npus != 0)
    throw option_error("--experts", fmt::format("model.experts: {} experts do not split evenly over --npus {} ranks",
                                                *s.experts, s.npus));

  // Every routing is drawn and checked before SimGrid starts.
  std::vector<sim::SampledAlltoallv> routings;
  RoutingInfo routing;
  if (v) {
    std::vector<std::optional<long long>> tokens;
    for (const std::string& t : list_items(s.tokens)) tokens.push_back(std::stoll(t));  // integer_in checked each
    if (tokens.empty()) tokens.push_back(std::nullopt);
    for (const auto& t : tokens) {
      const workloads::WorkloadSpec w = load_alltoallv_workload(s, split.workload, per_node, t);
      routings.push_back(sim::sample_alltoallv(w));
      if (routings.size() == 1) routing = routing_info(w, routings.back().bytes_per_token);
    }
  }

  sim::OpenPlatform open = sim::open_platform(request);
  std::vector<Row> rows;
  for (const sim::SampledAlltoallv& r : routings)
    rows.push_back({sim::time_collective_graph(*open.engine, open.loaded, op,
                                               sim::alltoallv_graph(r.traffic, r.bytes_per_token), options),
                    r.tokens_per_rank});
  for (double bytes : sizes)
    rows.push_back({sim::time_collective(*open.engine, open.loaded, op, s.npus, per_node, bytes, options), 0});
  // The JSON form checks every figure is finite, for the table too.
  const std::string json = format_json(s, op, open.shape.source, per_node, routing, rows);
  std::cout << (s.json ? json : format_table(s, op, open.shape.source, per_node, routing, rows));
  return 0;
}

}  // namespace

Command add_collective_command(CLI::App& epsim) {
  auto state = std::make_shared<CollectiveState>();
  CollectiveState& s = *state;
  CLI::App* app = epsim.add_subcommand("collective", "time one collective alone on a platform (nccl-tests figures)");
  app->add_option("--platform", s.platform, "cluster preset, cluster TOML or SimGrid XML")->required();
  app->add_option("--set", s.overrides,
                  "override one platform key, e.g. --set node.npus=64 (alltoallv: model./parallel./precision./"
                  "routing. keys go to the workload, as in run)");
  app->add_option("--op", s.op, "alltoall, alltoallv, allreduce, reducescatter or allgather")
      ->check(one_of({"alltoall", "alltoallv", "allreduce", "reducescatter", "allgather"}))
      ->capture_default_str();
  // Ranks: as many as a cluster may have (topology/cluster_spec.hpp), per node as node.npus.
  app->add_option("--npus", s.npus, "ranks taking part (the first NPUs of the platform)")
      ->required()
      ->check(integer_in(2, topology::kMaxClusterNpus));
  app->add_option("--npus-per-node", s.npus_per_node, "ranks per node (default: the platform's, at most --npus)")
      ->check(integer_in(1, topology::kMaxNodeNpus));
  s.sizes_option = app->add_option("--sizes", s.sizes, "bytes per rank (nccl-tests' S), comma-separated, e.g. 1MB,16MB,1GiB")
                       ->check(list_of(size_in(Physical::kMessageBytes)))
                       ->capture_default_str();
  app->add_option("--algorithm", s.algorithm,
                  "alltoall(v): direct or hierarchical (default: as run chooses); allreduce, reducescatter, "
                  "allgather: ring or hierarchical (default)")
      ->check(one_of({"direct", "hierarchical", "ring"}));
  app->add_option("--fidelity", s.fidelity, "per-flow or aggregated (default: per-flow up to 8 ranks)")
      ->check(one_of(app::name_list(app::kFidelityNames)));
  app->add_flag("--json", s.json, "print the figures as JSON");
  // The alltoallv's routing; ranges as the workload keys they set (workload_loader.cpp).
  s.alltoallv_only = {
      app->add_option("--workload", s.workload, "alltoallv: workload TOML or preset whose routing is drawn")
          ->capture_default_str(),
      app->add_option("--tokens", s.tokens, "alltoallv: tokens per rank, comma-separated (default: the workload's)")
          ->check(list_of(integer_in(1, 1LL << 30))),
      app->add_option_function<long long>("--hidden", [&s](const long long& x) { s.hidden = x; },
                                          "alltoallv: hidden size (model.hidden)")
          ->check(integer_in(1, 1LL << 24)),
      app->add_option_function<long long>("--top-k", [&s](const long long& x) { s.top_k = x; },
                                          "alltoallv: experts per token (model.top_k)")
          ->check(integer_in(1, 64)),
      app->add_option_function<long long>("--experts", [&s](const long long& x) { s.experts = x; },
                                          "alltoallv: routed experts (model.experts)")
          ->check(integer_in(1, 1 << 16)),
      app->add_option("--routing", s.routing, "alltoallv: uniform, zipf, hot or trace (routing.kind)")
          ->check(one_of({"uniform", "zipf", "hot", "trace"})),
      app->add_option_function<long long>("--seed", [&s](const long long& x) { s.seed = x; },
                                          "alltoallv: routing seed (routing.seed)")
          ->check(integer_at_least(0)),
  };
  return Command{app, [state] { return run_collective(*state); }};
}

}  // namespace epsim::tools
