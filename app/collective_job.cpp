// A collective alone: its options checked, its routing drawn, its timing.
#include "app/collective_job.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "app/option_names.hpp"
#include "app/run_job.hpp"
#include "core/error.hpp"
#include "sim/platform/platform_loader.hpp"
#include "workloads/workload_edits.hpp"
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

// The alltoallv's workload edits, each with the option it comes from: the
// shape options, then what the collective fixes (one EP group of its
// ranks, one micro-batch of `tokens`).
workloads::WorkloadEdits alltoallv_edits(const CollectiveRequest& r, int per_node, std::optional<long long> tokens) {
  using workloads::Edit;
  workloads::WorkloadEdits e;
  if (r.hidden) e.hidden = Edit<std::int64_t>{*r.hidden, "--hidden"};
  if (r.experts) e.experts = Edit<std::int64_t>{*r.experts, "--experts"};
  if (r.top_k) e.top_k = Edit<std::int64_t>{*r.top_k, "--top-k"};
  if (!r.routing.empty())
    e.routing_kind = Edit<workloads::RoutingKind>{parse_named(kRoutingKindNames, r.routing, "--routing"), "--routing"};
  if (r.seed) e.seed = Edit<std::int64_t>{*r.seed, "--seed"};
  // One stage of a pipelined or tensor-parallel workload: its EP group alone, one replica.
  e.ep = Edit<int>{r.npus, "--npus"};
  e.dp = Edit<int>{r.npus, "--npus"};
  e.tp = e.pp = e.vpp = Edit<int>{1, "--npus"};
  e.schedule = Edit<workloads::PipelineSchedule>{workloads::PipelineSchedule::kOneFOneB, "--npus"};
  e.ranks_per_node = Edit<int>{per_node, "--npus-per-node"};
  e.micro_batches = Edit<std::int64_t>{1, "--tokens"};
  if (tokens) {
    e.micro_batch = Edit<std::int64_t>{1, "--tokens"};
    e.sequence_length = Edit<std::int64_t>{*tokens, "--tokens"};
  }
  // Only the first MoE layer is drawn (sample_alltoallv), so the loader's
  // memory check must count one layer's traffic, not every layer's (4096
  // NPUs: 0.5 GiB, not 29 GiB): the model is cut after its first MoE layer.
  e.moe_layers = Edit<int>{1, "--npus"};
  return e;
}

// The workload with the user's --set and the alltoallv's edits; an error at
// an edit is reported at its option (workload_edits.hpp).
workloads::WorkloadSpec load_alltoallv_workload(const CollectiveRequest& r, const std::vector<std::string>& user,
                                                int per_node, std::optional<long long> tokens) {
  try {
    return workloads::load_workload(r.workload, user, alltoallv_edits(r, per_node, tokens));
  } catch (const InputError& e) {
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
