// The sbatch job-array script of a sweep: one array task per pending
// point, each running `epsim sweep SPEC --point I --results FILE` with
// the epsim and the data folder named in the script (environment
// variables EPSIM and EPSIM_DATA_DIR at submission override them), so it
// runs on a cluster where epsim is installed (`cmake --install`).
#pragma once

#include <string>
#include <vector>

namespace epsim::sweep {

struct SlurmOptions {
  std::string epsim;     // absolute path of the epsim the tasks run (an installed copy: PREFIX/bin/epsim)
  std::string data_dir;  // absolute data folder the tasks read presets from (exported as EPSIM_DATA_DIR)
  std::string spec;      // absolute path of the spec
  std::string results;   // absolute path of the results file
  std::string log_dir;   // where array tasks write their stdout/stderr
  std::string workdir;   // the tasks' working folder: where the spec's relative paths were checked
  std::string job_name = "epsim-sweep";
  int max_parallel = 0;    // 0 = no %limit on the array
  std::string time_limit;  // e.g. "01:00:00"; "" = partition default
  std::string partition;   // "" = default partition
  std::string account;     // "" = the user's default account
  long long mem_MiB = 0;   // memory per task (#SBATCH --mem), > 0
};

// `points` must be non-empty; they are written as compact ranges ("0-3,7").
// Every value is one line of the script: #SBATCH values in double quotes
// unless plain, shell words in single quotes; a value holding a newline or
// another control character throws std::invalid_argument naming its field
// (tools/ check the options before, naming them).
std::string slurm_array_script(const std::vector<int>& points, const SlurmOptions& options);

// "0-3,7,9-10" for {0,1,2,3,7,9,10}.
std::string compact_ranges(std::vector<int> points);

}  // namespace epsim::sweep
