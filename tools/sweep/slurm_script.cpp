// Writing sbatch job-array scripts for sweeps.
#include "tools/sweep/slurm_script.hpp"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <stdexcept>

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

// An #SBATCH value: as is when every character is plain, else in double
// quotes (sbatch's own quoting), so a space cannot end it early.
std::string directive_value(const std::string& s) {
  const bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || std::string_view("._-/%:=@+,").find(static_cast<char>(c)) != std::string_view::npos;
  });
  if (plain) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// No value may carry a line break or another control character: each is
// one line of the script, and a newline would start a command of its own.
void check_one_line(const char* field, const std::string& value) {
  for (unsigned char c : value)
    if (c < 0x20 || c == 0x7f)
      throw std::invalid_argument(std::string(field) +
                                  ": a control character (a newline?) cannot go into a batch script");
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
  for (const auto& [field, value] :
       {std::pair{"epsim", &o.epsim}, {"data_dir", &o.data_dir}, {"spec", &o.spec}, {"results", &o.results},
        {"log_dir", &o.log_dir}, {"workdir", &o.workdir}, {"job_name", &o.job_name}, {"time_limit", &o.time_limit},
        {"partition", &o.partition}, {"account", &o.account}})
    check_one_line(field, *value);
  std::string array = compact_ranges(points);
  if (o.max_parallel > 0) array += fmt::format("%{}", o.max_parallel);
  std::string s = "#!/bin/bash\n";
  s += "# epsim sweep: one array task per pending point of " + o.spec + "\n";
  s += "# Each task appends its record to the results file under a lock; rerun\n";
  s += "# `epsim sweep SPEC --emit-slurm` to resubmit only what is missing,\n";
  s += "# then `epsim sweep collect SPEC` to check and export.\n";
  s += "#SBATCH --job-name=" + directive_value(o.job_name) + "\n";
  s += "#SBATCH --array=" + array + "\n";
  s += "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n";
  s += fmt::format("#SBATCH --mem={}M\n", o.mem_MiB);
  s += "#SBATCH --output=" + directive_value(o.log_dir + "/%x-%A_%a.out") + "\n";
  if (!o.workdir.empty()) s += "#SBATCH --chdir=" + directive_value(o.workdir) + "\n";
  if (!o.time_limit.empty()) s += "#SBATCH --time=" + directive_value(o.time_limit) + "\n";
  if (!o.partition.empty()) s += "#SBATCH --partition=" + directive_value(o.partition) + "\n";
  if (!o.account.empty()) s += "#SBATCH --account=" + directive_value(o.account) + "\n";
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
