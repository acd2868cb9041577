// The results file: locked appends, torn-line repair, latest record per key.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <set>

#include "tools/sweep/results_store.hpp"
#include "tools/sweep/slurm_script.hpp"

using namespace epsim::sweep;

namespace {
std::string fresh(const std::string& name) {
  std::string path = std::string(EPSIM_BINARY_DIR) + "/" + name;
  std::remove(path.c_str());
  return path;
}
}  // namespace

TEST_CASE("records round-trip and the latest per key wins", "[sweep]") {
  std::string path = fresh("roundtrip.jsonl");
  append_result(path, {{"key", "a"}, {"status", "failed"}});
  append_result(path, {{"key", "b"}, {"status", "ok"}});
  append_result(path, {{"key", "a"}, {"status", "ok"}});
  std::vector<nlohmann::json> all = read_results(path);
  REQUIRE(all.size() == 3);
  auto latest = latest_by_key(all);
  REQUIRE(latest.size() == 2);
  CHECK(latest["a"]["status"] == "ok");
}

TEST_CASE("a torn last line is skipped and the next append starts a new line", "[sweep]") {
  std::string path = fresh("torn.jsonl");
  append_result(path, {{"key", "a"}});
  { std::ofstream(path, std::ios::app) << "{\"key\": \"b\", \"sta"; }
  CHECK(read_results(path).size() == 1);
  append_result(path, {{"key", "c"}});
  std::vector<nlohmann::json> all = read_results(path);
  REQUIRE(all.size() == 2);
  CHECK(all[1]["key"] == "c");
}

TEST_CASE("concurrent appenders lose and tear nothing", "[sweep]") {
  std::string path = fresh("concurrent.jsonl");
  const int writers = 8, each = 50;
  for (int w = 0; w < writers; ++w) {
    if (fork() == 0) {
      for (int i = 0; i < each; ++i) {
        append_result(path, {{"key", std::to_string(w) + "-" + std::to_string(i)},
                             {"padding", std::string(3000, 'x')}});
      }
      _exit(0);
    }
  }
  for (int w = 0; w < writers; ++w) wait(nullptr);
  std::vector<nlohmann::json> all = read_results(path);
  CHECK(all.size() == writers * each);
  CHECK(latest_by_key(all).size() == writers * each);
}

TEST_CASE("array ranges are compact", "[sweep]") {
  CHECK(compact_ranges({0, 1, 2, 3, 7, 9, 10}) == "0-3,7,9-10");
  CHECK(compact_ranges({5}) == "5");
  CHECK(compact_ranges({3, 1, 2, 2}) == "1-3");
}

TEST_CASE("the sbatch script runs one point per array task", "[sweep]") {
  SlurmOptions o;
  o.epsim = "/opt/epsim/bin/epsim";
  o.data_dir = "/opt/epsim/share/epsim";
  o.spec = "/data/a2 sweep.toml";
  o.results = "/data/a2.results.jsonl";
  o.log_dir = "/data/logs";
  o.workdir = "/home/me/plans";
  o.max_parallel = 4;
  o.mem_MiB = 768;
  o.account = "proj42";
  o.partition = "cpu";
  std::string s = slurm_array_script({0, 1, 2, 5}, o);
  CHECK_THAT(s, Catch::Contains("#SBATCH --array=0-2,5%4\n"));
  CHECK_THAT(s, Catch::Contains("#SBATCH --mem=768M\n"));
  CHECK_THAT(s, Catch::Contains("#SBATCH --account=proj42\n#SBATCH --partition=cpu\n") ||
                    Catch::Contains("#SBATCH --partition=cpu\n#SBATCH --account=proj42\n"));
  CHECK_THAT(s, Catch::Contains("#SBATCH --output=/data/logs/%x-%A_%a.out\n#SBATCH --chdir=/home/me/plans\n"));
  CHECK_THAT(s, Catch::Contains("epsim=${EPSIM:-'/opt/epsim/bin/epsim'}\n"));
  CHECK_THAT(s, Catch::Contains("export EPSIM_DATA_DIR=${EPSIM_DATA_DIR:-'/opt/epsim/share/epsim'}\n"));
  CHECK_THAT(s, Catch::Contains("exec \"$epsim\" sweep '/data/a2 sweep.toml' --point \"$SLURM_ARRAY_TASK_ID\" --results "
                                "'/data/a2.results.jsonl'\n"));
  // Without an account the script names none (the user's default applies).
  o.account.clear();
  CHECK_THAT(slurm_array_script({0}, o), !Catch::Contains("--account"));
}

// Issue 33: no option value can add a line to the batch script. A value
// with a line break or another control character is refused naming its
// field; any other value (spaces, quotes, $, ;) stays on its own line, so
// the script has as many lines as with plain values.
TEST_CASE("no value adds a line to the sbatch script", "[sweep]") {
  SlurmOptions plain;
  plain.epsim = "/opt/epsim/bin/epsim";
  plain.data_dir = "/opt/epsim/share/epsim";
  plain.spec = "/data/a2.toml";
  plain.results = "/data/a2.results.jsonl";
  plain.log_dir = "/data";
  plain.workdir = "/home/me";
  plain.time_limit = "01:00:00";
  plain.partition = "cpu";
  plain.account = "proj42";
  plain.mem_MiB = 512;
  const auto lines = [](const std::string& s) { return std::count(s.begin(), s.end(), '\n'); };
  const long baseline = lines(slurm_array_script({0, 1}, plain));
  CHECK(baseline == 21);  // shebang, 4 comments, 10 #SBATCH, set -eu, 2 comments, epsim=, export, exec
  std::vector<std::pair<std::string, std::string SlurmOptions::*>> fields = {
      {"epsim", &SlurmOptions::epsim},       {"data_dir", &SlurmOptions::data_dir},
      {"spec", &SlurmOptions::spec},         {"results", &SlurmOptions::results},
      {"log_dir", &SlurmOptions::log_dir},   {"workdir", &SlurmOptions::workdir},
      {"job_name", &SlurmOptions::job_name}, {"time_limit", &SlurmOptions::time_limit},
      {"partition", &SlurmOptions::partition}, {"account", &SlurmOptions::account}};
  for (const auto& [name, field] : fields) {
    for (const std::string& bad : {std::string("a\necho injected"), std::string("a\recho"), std::string("a\tb")}) {
      SlurmOptions o = plain;
      o.*field = bad;
      CHECK_THROWS_WITH(slurm_array_script({0, 1}, o),
                        name + ": a control character (a newline?) cannot go into a batch script");
    }
    for (const std::string& odd : {std::string("a b"), std::string("it's \"x\""), std::string("$(echo x); `y` \\")}) {
      SlurmOptions o = plain;
      o.*field = odd;
      INFO(name << " = " << odd);
      CHECK(lines(slurm_array_script({0, 1}, o)) == baseline);
    }
  }
  // A directive value with a space is quoted as sbatch reads quotes.
  SlurmOptions spaced = plain;
  spaced.workdir = "/home/me/my plans";
  CHECK_THAT(slurm_array_script({0}, spaced), Catch::Contains("#SBATCH --chdir=\"/home/me/my plans\"\n"));
}
