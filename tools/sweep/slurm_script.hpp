// The sbatch job-array script of a sweep: one array task per pending
// point, each running `epsim sweep SPEC --point I --results FILE`.
#pragma once

#include <string>
#include <vector>

namespace epsim::sweep {

struct SlurmOptions {
  std::string epsim;    // absolute path of the epsim binary
  std::string spec;     // absolute path of the spec
  std::string results;  // absolute path of the results file
  std::string log_dir;  // where array tasks write their stdout/stderr
  std::string job_name = "epsim-sweep";
  int max_parallel = 0;  // 0 = no %limit on the array
  std::string time_limit;  // e.g. "01:00:00"; "" = partition default
  std::string partition;   // "" = default partition
};

// `points` must be non-empty; they are written as compact ranges ("0-3,7").
std::string slurm_array_script(const std::vector<int>& points, const SlurmOptions& options);

// "0-3,7,9-10" for {0,1,2,3,7,9,10}.
std::string compact_ranges(std::vector<int> points);

}  // namespace epsim::sweep
