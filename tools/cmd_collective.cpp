// `epsim collective`: one collective alone on a platform, for comparison
// with peers and with measured collectives (nccl-tests, HCCL tests); see
// docs/collective.md.
//   epsim collective --platform P [--set k=v]... --op alltoall|allreduce --npus N
//     [--npus-per-node M] [--sizes 1MB,16MB,...] [--algorithm A] [--fidelity F] [--json]
#include <algorithm>
#include <iostream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/json_output.hpp"
#include "core/error.hpp"
#include "core/units.hpp"
#include "sim/platform/platform_loader.hpp"
#include "sim/replay/collective_bench.hpp"
#include "tools/command.hpp"
#include "tools/run_request.hpp"

namespace epsim::tools {

namespace {

struct CollectiveState {
  std::string platform;
  std::vector<std::string> overrides;
  std::string op = "alltoall";
  int npus = 0;
  int npus_per_node = 0;  // 0: the platform's, at most --npus
  std::vector<std::string> sizes = {"1MB", "16MB", "256MB"};
  std::string algorithm;  // "": as `run` resolves it
  std::string fidelity;
  bool json = false;
};

sim::CollectiveOp parse_op(const std::string& op) {
  if (op == "alltoall") return sim::CollectiveOp::kAllToAll;
  if (op == "allreduce") return sim::CollectiveOp::kAllReduce;
  throw option_error("--op", "expected alltoall or allreduce, got \"" + op + "\"");
}

std::vector<double> parse_sizes(const std::vector<std::string>& sizes) {
  std::vector<double> out;
  for (const std::string& s : sizes) {
    double bytes = 0;
    try {
      bytes = parse_quantity(s, Quantity::kBytes);
    } catch (const std::invalid_argument& e) {
      throw option_error("--sizes", e.what());
    }
    if (!(bytes > 0)) throw option_error("--sizes", "expected a size > 0, got \"" + s + "\"");
    out.push_back(bytes);
  }
  if (out.empty()) throw option_error("--sizes", "expected at least one size");
  return out;
}

sim::ReplayOptions replay_options(const CollectiveState& s, sim::CollectiveOp op) {
  sim::ReplayOptions o;
  o.record_link_spans = false;
  if (op == sim::CollectiveOp::kAllToAll) {
    if (s.algorithm == "direct")
      o.algorithm = sim::AlltoallAlgorithm::kDirect;
    else if (s.algorithm == "hierarchical")
      o.algorithm = sim::AlltoallAlgorithm::kHierarchical;
    else if (!s.algorithm.empty())
      throw option_error("--algorithm", "alltoall: expected direct or hierarchical, got \"" + s.algorithm + "\"");
  } else {
    if (s.algorithm == "ring")
      o.all_reduce = sim::AllReduceAlgorithm::kRing;
    else if (s.algorithm == "hierarchical" || s.algorithm.empty())
      o.all_reduce = sim::AllReduceAlgorithm::kHierarchical;
    else
      throw option_error("--algorithm", "allreduce: expected ring or hierarchical, got \"" + s.algorithm + "\"");
  }
  if (const auto f = parse_fidelity(s.fidelity)) o.fidelity = *f;
  if (o.fidelity == sim::Fidelity::kPerFlow) {
    const std::string why = sim::per_flow_refusal(s.npus);
    if (!why.empty()) throw option_error("--fidelity", why);
  }
  return o;
}

std::string format_table(const CollectiveState& s, const std::string& source, int per_node,
                         const std::vector<sim::CollectiveTiming>& rows) {
  const char* factor = s.op == "allreduce" ? "2(n-1)/n" : "(n-1)/n";
  std::string out = fmt::format("epsim collective: {} over {} NPUs ({} per node) on {}\n", s.op, s.npus, per_node,
                                source);
  out += fmt::format("algorithm {}, fidelity {}\n", rows.front().algorithm, rows.front().fidelity);
  out += fmt::format(
      "S: bytes per rank as nccl-tests counts them ({}); algbw = S / time; busbw = algbw x {} "
      "(nccl-tests docs/PERFORMANCE.md)\n"
      "bound: plan_bound_s, the plan alone: rounds in sequence (pipelined stages as a flow shop), each its "
      "largest route latency + its bytes at its bottleneck link\n",
      s.op == "allreduce" ? "the buffer all-reduced" : "sent in total, S/n to each rank", factor);
  out += fmt::format("{:>14} {:>14} {:>14} {:>14} {:>14}\n", "S (bytes)", "time (us)", "bound (us)",
                     "algbw (GB/s)", "busbw (GB/s)");
  for (const sim::CollectiveTiming& r : rows)
    out += fmt::format("{:>14.0f} {:>14.3f} {:>14.3f} {:>14.3f} {:>14.3f}\n", r.bytes, r.time_s * 1e6,
                       r.bound_s * 1e6, r.algbw_Bps / 1e9, r.busbw_Bps / 1e9);
  return out;
}

std::string format_json(const CollectiveState& s, const std::string& source, int per_node,
                        const std::vector<sim::CollectiveTiming>& rows) {
  nlohmann::json j;
  j["op"] = s.op;
  j["platform"] = source;
  j["npus"] = s.npus;
  j["npus_per_node"] = per_node;
  j["algorithm"] = rows.front().algorithm;
  j["fidelity"] = rows.front().fidelity;
  j["definitions"] = {{"bytes", "S per rank, as nccl-tests counts it"},
                      {"algbw_Bps", "S / time_s"},
                      {"busbw_Bps", std::string("algbw_Bps x ") + (s.op == "allreduce" ? "2(n-1)/n" : "(n-1)/n")},
                      {"bound_s", "plan_bound_s: rounds in sequence (pipelined stages as a flow shop), each its largest route "
                                  "latency + its bytes at its bottleneck link"}};
  j["sizes"] = nlohmann::json::array();
  for (const sim::CollectiveTiming& r : rows)
    j["sizes"].push_back({{"bytes", r.bytes},
                          {"time_s", r.time_s},
                          {"bound_s", r.bound_s},
                          {"algbw_Bps", r.algbw_Bps},
                          {"busbw_Bps", r.busbw_Bps},
                          {"activities", r.activities}});
  return dump_checked(j, "collective");
}

int run_collective(const CollectiveState& s) {
  const sim::CollectiveOp op = parse_op(s.op);
  if (s.npus < 2) throw option_error("--npus", "expected >= 2, got " + std::to_string(s.npus));
  if (s.npus_per_node < 0)
    throw option_error("--npus-per-node", "expected >= 1, got " + std::to_string(s.npus_per_node));
  const std::vector<double> sizes = parse_sizes(s.sizes);
  const sim::ReplayOptions options = replay_options(s, op);
  const sim::PlatformRequest request{s.platform, s.overrides};
  const sim::PlatformShape shape = sim::check_platform(request);
  const int per_node = s.npus_per_node > 0 ? s.npus_per_node : std::min(s.npus, shape.npus_per_node);
  sim::check_ranks_fit(shape, s.npus, per_node);

  sim::OpenPlatform open = sim::open_platform(request);
  std::vector<sim::CollectiveTiming> rows;
  for (double bytes : sizes)
    rows.push_back(sim::time_collective(*open.engine, open.loaded, op, s.npus, per_node, bytes, options));
  // The JSON form checks every figure is finite, for the table too.
  const std::string json = format_json(s, open.shape.source, per_node, rows);
  std::cout << (s.json ? json : format_table(s, open.shape.source, per_node, rows));
  return 0;
}

}  // namespace

Command add_collective_command(CLI::App& epsim) {
  auto state = std::make_shared<CollectiveState>();
  CollectiveState& s = *state;
  CLI::App* app = epsim.add_subcommand("collective", "time one collective alone on a platform (nccl-tests figures)");
  app->add_option("--platform", s.platform, "cluster preset, cluster TOML or SimGrid XML")->required();
  app->add_option("--set", s.overrides, "override one platform key, e.g. --set node.npus=64");
  app->add_option("--op", s.op, "alltoall or allreduce")->capture_default_str();
  app->add_option("--npus", s.npus, "ranks taking part (the first NPUs of the platform)")->required();
  app->add_option("--npus-per-node", s.npus_per_node, "ranks per node (default: the platform's, at most --npus)");
  app->add_option("--sizes", s.sizes, "bytes per rank, comma-separated, e.g. 1MB,16MB,1GiB")
      ->delimiter(',')
      ->capture_default_str();
  app->add_option("--algorithm", s.algorithm,
                  "alltoall: direct or hierarchical (default: as run chooses); allreduce: ring or hierarchical");
  app->add_option("--fidelity", s.fidelity, "per-flow or aggregated (default: per-flow up to 8 ranks)");
  app->add_flag("--json", s.json, "print the figures as JSON");
  return Command{app, [state] { return run_collective(*state); }};
}

}  // namespace epsim::tools
