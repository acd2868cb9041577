// The sweep spec `epsim plan --emit-sweep` writes.
#include "tools/plan_sweep_file.hpp"

#include <algorithm>
#include <functional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/run_job.hpp"

namespace epsim::tools {

std::string format_plan_sweep(const app::PlanResult& r, const std::vector<std::string>& overrides) {
  std::vector<const app::PlanCandidate*> rows = app::plan_sweep_layouts(r);
  std::stable_sort(rows.begin(), rows.end(), [](const app::PlanCandidate* a, const app::PlanCandidate* b) {
    if (a->bound_s != b->bound_s) return a->bound_s < b->bound_s;
    return a->layout < b->layout;
  });
  const auto quoted = [](const std::string& s) { return nlohmann::json(s).dump(); };
  std::string out = fmt::format(
      "# Written by `epsim plan`: the {} layouts of {} on {} ({} NPUs) that pass every check, best bound first.\n"
      "#   epsim sweep THIS_FILE -j 2\n"
      "schema_version = 1\nmax_points = {}\n\n[base]\nplatform = {}\nworkload = {}\nset = [",
      rows.size(), r.workload, r.platform, r.npus, std::max<std::size_t>(1, rows.size()), quoted(r.platform),
      quoted(r.workload));
  std::vector<std::string> set;
  for (const std::string& o : overrides) {
    const bool platform_key = o.rfind("platform.", 0) == 0;
    const bool workload_key = o.rfind("workload.", 0) == 0;
    const app::SplitOverrides split = app::split_set_options({o});
    set.push_back(platform_key || workload_key ? o
                  : split.workload.empty()     ? "platform." + o
                                               : "workload." + o);
  }
  set.push_back(fmt::format("workload.parallel.ranks_per_node={}", r.npus_per_node));
  set.push_back("workload.memory.allow_oversubscribed=false");
  for (std::size_t i = 0; i < set.size(); ++i) out += (i ? ", " : "") + quoted(set[i]);
  out += "]\n";
  const auto axis = [&](const char* key, const std::function<std::string(const app::PlanLayout&)>& value, bool first) {
    out += fmt::format("\n[[axis]]\nkey = \"{}\"\nvalues = [", key);
    for (std::size_t i = 0; i < rows.size(); ++i) out += (i ? ", " : "") + value(rows[i]->layout);
    out += "]\n";
    if (!first) out += "zip_with = \"workload.parallel.tp\"\n";
  };
  const auto num = [](auto v) { return std::to_string(v); };
  axis("workload.parallel.tp", [&](const app::PlanLayout& l) { return num(l.tp); }, true);
  axis("workload.parallel.pp", [&](const app::PlanLayout& l) { return num(l.pp); }, false);
  axis("workload.parallel.vpp", [&](const app::PlanLayout& l) { return num(l.vpp); }, false);
  axis("workload.parallel.ep", [&](const app::PlanLayout& l) { return num(l.ep); }, false);
  axis("workload.parallel.etp", [&](const app::PlanLayout& l) { return num(l.etp); }, false);
  axis("workload.parallel.dp", [&](const app::PlanLayout& l) { return num(l.dp); }, false);
  axis("workload.parallel.micro_batch", [&](const app::PlanLayout& l) { return num(l.micro_batch); }, false);
  axis("workload.parallel.global_batch", [&](const app::PlanLayout& l) { return num(l.global_batch); }, false);
  const auto name = [&](auto value) { return quoted(workloads::to_string(value)); };
  axis("workload.parallel.schedule", [&](const app::PlanLayout& l) { return name(l.schedule); }, false);
  axis("workload.memory.recompute", [&](const app::PlanLayout& l) { return name(l.recompute); }, false);
  axis("workload.memory.zero_stage", [&](const app::PlanLayout& l) { return num(l.zero_stage); }, false);
  return out;
}

}  // namespace epsim::tools
