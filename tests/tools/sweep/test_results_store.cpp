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
