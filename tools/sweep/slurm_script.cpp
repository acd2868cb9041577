// Writing sbatch job-array scripts for sweeps.
#include "tools/sweep/slurm_script.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace epsim::sweep {

namespace {
std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}
}  // namespace

std::string compact_ranges(std::vector<int> points) {
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  std::string out;
  for (std::size_t i = 0; i < points.size();) {
    std::size_t j = i;
    while (j + 1 < points.size() && points[j + 1] == points[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += j == i ? std::to_string(points[i]) : fmt::format("{}-{}", points[i], points[j]);
    i = j + 1;
  }
  return out;
}

std::string slurm_array_script(const std::vector<int>& points, const SlurmOptions& o) {
  std::string array = compact_ranges(points);
  if (o.max_parallel > 0) array += fmt::format("%{}", o.max_parallel);
  std::string s = "#!/bin/bash\n";
  s += "# epsim sweep: one array task per pending point of " + o.spec + "\n";
  s += "# Each task appends its record to the results file under a lock; rerun\n";
  s += "# `epsim sweep SPEC --emit-slurm` to resubmit only what is missing,\n";
  s += "# then `epsim sweep collect SPEC` to check and export.\n";
  s += "#SBATCH --job-name=" + o.job_name + "\n";
  s += "#SBATCH --array=" + array + "\n";
  s += "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n";
  s += fmt::format("#SBATCH --mem={}M\n", o.mem_MiB);
  s += "#SBATCH --output=" + o.log_dir + "/%x-%A_%a.out\n";
  if (!o.workdir.empty()) s += "#SBATCH --chdir=" + o.workdir + "\n";
  if (!o.time_limit.empty()) s += "#SBATCH --time=" + o.time_limit + "\n";
  if (!o.partition.empty()) s += "#SBATCH --partition=" + o.partition + "\n";
  if (!o.account.empty()) s += "#SBATCH --account=" + o.account + "\n";
  s += "set -eu\n";
  s += "# The epsim and presets the points were checked with; EPSIM and EPSIM_DATA_DIR\n";
  s += "# in the submitting environment (sbatch exports it) name others.\n";
  // Assignments: the default's quotes are removed, and nothing is split.
  s += "epsim=${EPSIM:-" + shell_quote(o.epsim) + "}\n";
  s += "export EPSIM_DATA_DIR=${EPSIM_DATA_DIR:-" + shell_quote(o.data_dir) + "}\n";
  s += "exec \"$epsim\" sweep " + shell_quote(o.spec) + " --point \"$SLURM_ARRAY_TASK_ID\" --results " +
       shell_quote(o.results) + "\n";
  return s;
}

}  // namespace epsim::sweep
