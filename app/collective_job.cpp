// A collective alone: its options checked, its routing drawn, its timing.
#include "app/collective_job.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "app/run_job.hpp"
#include "core/error.hpp"
#include "core/overrides.hpp"
#include "core/presets.hpp"
#include "core/toml_base.hpp"
#include "sim/platform/platform_loader.hpp"
#include "workloads/workload_loader.hpp"

namespace epsim::app {

namespace {

sim::ReplayOptions replay_options(const CollectiveRequest& r) {
  sim::ReplayOptions o;
  o.record_link_spans = false;
  const char* op = sim::to_string(r.op);
  if (!is_group_op(r.op)) {
    if (r.algorithm == "direct")
      o.algorithm = sim::AlltoallAlgorithm::kDirect;
    else if (r.algorithm == "hierarchical")
      o.algorithm = sim::AlltoallAlgorithm::kHierarchical;
    else if (!r.algorithm.empty())
      throw option_error("--algorithm",
                         fmt::format("{}: expected direct or hierarchical, got \"{}\"", op, r.algorithm));
  } else {
    if (r.algorithm == "ring")
      o.all_reduce = sim::AllReduceAlgorithm::kRing;
    else if (r.algorithm == "hierarchical" || r.algorithm.empty())
      o.all_reduce = sim::AllReduceAlgorithm::kHierarchical;
    else
      throw option_error("--algorithm", fmt::format("{}: expected ring or hierarchical, got \"{}\"", op, r.algorithm));
  }
  o.fidelity = r.fidelity;
  if (o.fidelity == sim::Fidelity::kPerFlow) {
    const std::string why = sim::per_flow_refusal(r.npus);
    if (!why.empty()) throw option_error("--fidelity", why);
  }
  return o;
}

// One workload override the job adds, and the flag it comes from.
struct AddedOverride {
  std::string assignment;
  std::string flag;
};

// The alltoallv's added workload overrides: the shape options, then what
// the collective fixes (its ranks, one micro-batch of `tokens`, one replica).
std::vector<AddedOverride> added_overrides(const CollectiveRequest& r, int per_node, std::optional<long long> tokens) {
  std::vector<AddedOverride> out;
  if (r.hidden) out.push_back({fmt::format("model.hidden={}", *r.hidden), "--hidden"});
  if (r.experts) out.push_back({fmt::format("model.experts={}", *r.experts), "--experts"});
  if (r.top_k) out.push_back({fmt::format("model.top_k={}", *r.top_k), "--top-k"});
  if (!r.routing.empty()) out.push_back({"routing.kind=\"" + r.routing + "\"", "--routing"});
  if (r.seed) out.push_back({fmt::format("routing.seed={}", *r.seed), "--seed"});
  out.push_back({fmt::format("parallel.ep={}", r.npus), "--npus"});
  out.push_back({fmt::format("parallel.dp={}", r.npus), "--npus"});  // one EP group
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
workloads::WorkloadSpec load_alltoallv_workload(const CollectiveRequest& r, const std::vector<std::string>& user,
                                                int per_node, std::optional<long long> tokens) {
  std::vector<AddedOverride> added = added_overrides(r, per_node, tokens);
  // Only the first MoE layer is drawn (sample_alltoallv), so the loader's
  // memory check must count one layer's traffic, not every layer's (4096
  // NPUs: 0.5 GiB, not 29 GiB): the model is cut after its first MoE layer,
  // read from the file as the user's --set leaves it (a file that does not
  // read is reported by the full load).
  try {
    toml::table root =
        load_toml_with_base(resolve_preset_file(PresetKind::kWorkload, r.workload), PresetKind::kWorkload);
    apply_overrides(root, user);
    const auto dense = root["model"]["dense_layers"].value<std::int64_t>();
    added.push_back({fmt::format("model.layers={}", dense.value_or(0) + 1), "--npus"});
  } catch (const InputError&) {
  }
  std::vector<std::string> overrides = user;
  for (const AddedOverride& a : added) overrides.push_back(a.assignment);
  try {
    return workloads::load_workload(r.workload, overrides);
  } catch (const InputError& e) {
    for (const AddedOverride& a : added)
      if (e.where().file == "--set " + a.assignment) throw option_error(a.flag, e.key() + ": " + e.problem());
    // A kind's parameters (zipf_s, hot_share, ...) the workload lacks.
    if (!r.routing.empty() && e.key().rfind("routing.", 0) == 0 && e.problem() == "missing required key")
      throw option_error("--routing", fmt::format("{} {} needs {}: add --set {}=VALUE", r.routing, r.workload,
                                                  e.key(), e.key()));
    throw;
  }
}

}  // namespace

bool is_group_op(sim::CollectiveOp op) {
  return op != sim::CollectiveOp::kAllToAll && op != sim::CollectiveOp::kAllToAllv;
}

CollectiveOutcome run_collective_job(const CollectiveRequest& r) {
  const bool v = r.op == sim::CollectiveOp::kAllToAllv;
  const sim::ReplayOptions options = replay_options(r);
  const SplitOverrides split = v ? split_set_options(r.overrides) : SplitOverrides{{}, r.overrides};
  const sim::PlatformRequest request{r.platform, split.platform};
  const sim::PlatformShape shape = sim::check_platform(request);
  CollectiveOutcome out;
  out.npus_per_node = r.npus_per_node > 0 ? r.npus_per_node : std::min(r.npus, shape.npus_per_node);
  try {
    sim::check_ranks_fit(shape, r.npus, out.npus_per_node);
  } catch (const InputError& e) {  // the placement of --npus ranks, --npus-per-node to a node
    if (e.key() != "placement") throw;
    throw option_error(r.npus_per_node > 0 ? "--npus-per-node" : "--npus", e.problem());
  }
  // Each rank holds experts / npus experts: a count that does not split is --experts' fault when given.
  if (v && r.experts && *r.experts % r.npus != 0)
    throw option_error("--experts", fmt::format("model.experts: {} experts do not split evenly over --npus {} ranks",
                                                *r.experts, r.npus));

  // Every routing is drawn and checked before SimGrid starts.
  std::vector<sim::SampledAlltoallv> routings;
  if (v) {
    std::vector<std::optional<long long>> tokens(r.tokens.begin(), r.tokens.end());
    if (tokens.empty()) tokens.push_back(std::nullopt);
    for (const auto& t : tokens) {
      workloads::WorkloadSpec w = load_alltoallv_workload(r, split.workload, out.npus_per_node, t);
      routings.push_back(sim::sample_alltoallv(w));
      if (!out.workload) {
        out.workload = std::move(w);
        out.bytes_per_token = routings.back().bytes_per_token;
      }
    }
  }

  sim::OpenPlatform open = sim::open_platform(request);
  out.platform_source = open.shape.source;
  for (const sim::SampledAlltoallv& s : routings)
    out.rows.push_back({sim::time_collective_graph(*open.engine, open.loaded, r.op,
                                                   sim::alltoallv_graph(s.traffic, s.bytes_per_token), options),
                        s.tokens_per_rank});
  for (double bytes : r.sizes)
    out.rows.push_back(
        {sim::time_collective(*open.engine, open.loaded, r.op, r.npus, out.npus_per_node, bytes, options), 0});
  return out;
}

}  // namespace epsim::app
