// The report as a human table and as JSON, with fixed formatting so that
// identical inputs give byte-identical output.
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/report/report.hpp"

namespace epsim::sim {

namespace {

// A duration with a unit picked by magnitude.
std::string time_text(double s) {
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

std::string row_text(const ReportRow& r) {
  return fmt::format("  {:<16} {:>14} {:>14} {:>8}  {}\n", r.name, time_text(r.sim_s), time_text(r.bound_s),
                     fmt::format("x{:.3f}", r.ratio()), r.cause);
}

nlohmann::ordered_json row_json(const ReportRow& r) {
  nlohmann::ordered_json j;
  j["name"] = r.name;
  j["sim_s"] = r.sim_s;
  j["bound_s"] = r.bound_s;
  j["ratio"] = r.ratio();
  j["cause"] = r.cause;
  return j;
}

}  // namespace

std::string format_table(const Report& r) {
  std::string out;
  out += fmt::format("epsim run: {} ranks, {} tasks, schedule {}, dispatch/combine {} ({}), all-reduce {}\n",
                     r.ranks, r.tasks, r.schedule, r.algorithm, r.fidelity, r.all_reduce);
  out += fmt::format("  {:<16} {:>14} {:>14} {:>8}  {}\n", "", "sim", "bound", "sim/bnd", "gap from");
  out += row_text(r.step);
  out += fmt::format("  {:<16} {:>14} {:>14}\n", "  bound parts", "critical path", "rank streams");
  out += fmt::format("  {:<16} {:>14} {:>14}\n", "", time_text(r.critical_path_bound_s), time_text(r.rank_streams_bound_s));
  out += "time per phase (compute: mean busy time per rank; collectives: sum of spans)\n";
  for (const ReportRow& p : r.phases) out += row_text(p);
  out += "communication\n";
  out += fmt::format("  busy per rank           {}\n", time_text(r.comm_mean_s));
  out += fmt::format("  exposed per rank        {} mean, {} max\n", time_text(r.exposed_comm_mean_s),
                     time_text(r.exposed_comm_max_s));
  out += fmt::format("  overlap achieved        {:.1f} % of communication hidden behind compute\n",
                     r.overlap_fraction * 100);
  out += fmt::format("  waiting for peers       {} per rank\n", time_text(r.peer_wait_mean_s));
  out += "straggler\n";
  out += fmt::format("  rank {}: compute {} vs mean {} (max/mean x{:.3f})\n", r.straggler_rank,
                     time_text(r.straggler_compute_s), time_text(r.mean_compute_s), r.straggler_ratio);
  out += "busiest links (bytes / (bandwidth x step time))\n";
  for (const LinkRow& l : r.busiest_links)
    out += fmt::format("  {:<28} {:>6.1f} %  {:>12} at {:.1f} GB/s\n", l.link, l.utilisation * 100, bytes_text(l.bytes),
                       l.bandwidth_Bps / 1e9);
  out += fmt::format("SimGrid activities: {}\n", r.activities);
  return out;
}

std::string format_json(const Report& r) {
  nlohmann::ordered_json j;
  j["ranks"] = r.ranks;
  j["tasks"] = r.tasks;
  j["schedule"] = r.schedule;
  j["algorithm"] = r.algorithm;
  j["fidelity"] = r.fidelity;
  j["all_reduce"] = r.all_reduce;
  j["activities"] = r.activities;
  j["step"] = row_json(r.step);
  j["step"]["critical_path_bound_s"] = r.critical_path_bound_s;
  j["step"]["rank_streams_bound_s"] = r.rank_streams_bound_s;
  j["phases"] = nlohmann::ordered_json::array();
  for (const ReportRow& p : r.phases) j["phases"].push_back(row_json(p));
  j["communication"] = {{"busy_mean_s", r.comm_mean_s},
                        {"exposed_mean_s", r.exposed_comm_mean_s},
                        {"exposed_max_s", r.exposed_comm_max_s},
                        {"overlap_fraction", r.overlap_fraction},
                        {"peer_wait_mean_s", r.peer_wait_mean_s}};
  j["straggler"] = {{"rank", r.straggler_rank},
                    {"compute_s", r.straggler_compute_s},
                    {"mean_compute_s", r.mean_compute_s},
                    {"max_over_mean", r.straggler_ratio}};
  j["busiest_links"] = nlohmann::ordered_json::array();
  for (const LinkRow& l : r.busiest_links)
    j["busiest_links"].push_back(
        {{"link", l.link}, {"bytes", l.bytes}, {"bandwidth_Bps", l.bandwidth_Bps}, {"utilisation", l.utilisation}});
  return j.dump(2) + "\n";
}

}  // namespace epsim::sim
