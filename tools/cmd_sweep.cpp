// `epsim sweep SPEC [-j N] [--results F] [--csv F] [--emit-slurm F]`,
// `epsim sweep SPEC --point I` (one point, as a worker or Slurm array task),
// `epsim sweep collect SPEC [--results F] [--csv F]`.
// Every point runs in its own process and appends its own record, so a
// sweep killed at any moment resumes where it was and loses nothing.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/presets.hpp"
#include "sim/report/report.hpp"
#include "tools/command.hpp"
#include "tools/option_checks.hpp"
#include "tools/output_file.hpp"
#include "tools/run_request.hpp"
#include "tools/sweep/local_pool.hpp"
#include "tools/sweep/results_csv.hpp"
#include "tools/sweep/results_store.hpp"
#include "tools/sweep/slurm_script.hpp"
#include "tools/sweep/sweep_spec.hpp"

namespace epsim::tools {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct SweepState {
  bool keep_going = false;
  std::string spec;
  std::string results;
  std::string csv;
  std::string emit_slurm;
  std::string slurm_partition;
  std::string slurm_account;
  std::string slurm_time;
  std::string slurm_mem;    // "" = from the points' memory estimates
  std::string slurm_epsim;  // "" = this executable
  int slurm_max_parallel = 0;
  int jobs = 1;
  int point = -1;
  bool quiet = false;
};

std::string results_path(const SweepState& s) {
  if (!s.results.empty()) return s.results;
  fs::path spec(s.spec);
  return (spec.parent_path() / (spec.stem().string() + ".results.jsonl")).string();
}

constexpr double kMiB = 1048576.0;

// Memory per array task: the largest point's estimate (platform and traffic
// matrices, sim/run_memory.hpp) x 1.5 plus 256 MiB for the process and its
// replay, rounded up to 256 MiB (the quick start's points peak at ~50 MB).
long long slurm_mem_MiB(double max_bytes) {
  const double MiB = 256 + 1.5 * max_bytes / kMiB;
  return static_cast<long long>(std::ceil(MiB / 256) * 256);
}

std::string self_executable() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find the epsim executable: " + ec.message());
  return self.string();
}

// The key an error blames, in an axis's words without its platform./workload.
// prefix: the error's own key, or the option it came from ("--set parallel.ep=3",
// "--schedule").
// The point's key that named a file it could not read: "platform" or "workload"; "" for another file.
std::string key_naming(const sweep::Point& p, const FileError& e) {
  return e.path() == p.platform ? "platform" : e.path() == p.workload ? "workload" : "";
}

std::vector<std::string> blamed_keys(const sweep::Point& p, const std::exception& e) {
  if (const auto* file = dynamic_cast<const FileError*>(&e)) return {key_naming(p, *file)};
  const auto* input = dynamic_cast<const InputError*>(&e);
  if (!input) return {};
  std::vector<std::string> keys;
  if (!input->key().empty()) keys.push_back(input->key());
  std::string option = input->where().file;
  if (option.rfind("--set ", 0) == 0) option = option.substr(6, option.find('=') - 6);
  else if (option.rfind("--", 0) == 0) option = option.substr(2);
  if (!option.empty()) keys.push_back(option);
  return keys;
}

std::string axis_key_without_side(const std::string& key) {
  for (const char* side : {"platform.", "workload."}) {
    if (key.rfind(side, 0) == 0) return key.substr(std::string(side).size());
  }
  return key;
}

// The spec location of the coordinate that caused `e`: the axis value whose
// key the error names; else the slowest axis's value (the message lists every
// coordinate). "" for the base point.
std::optional<SourceLocation> where_of(const sweep::Point& p, const std::exception& e) {
  if (p.coordinate_sources.empty()) return std::nullopt;
  std::size_t blamed = 0;
  const std::vector<std::string> keys = blamed_keys(p, e);
  for (std::size_t i = 0; i < p.coordinates.size(); ++i) {
    const std::string axis = axis_key_without_side(p.coordinates[i].first);
    if (std::find(keys.begin(), keys.end(), axis) != keys.end()) {
      blamed = i;
      break;
    }
  }
  return p.coordinate_sources[blamed];
}

// "workload.parallel.ep=64, schedule=\"serial\"": which point, in the spec's words.
std::string describe(const sweep::Point& p) {
  std::string out;
  for (const auto& [key, value] : p.coordinates) out += (out.empty() ? "" : ", ") + key + "=" + value;
  return out.empty() ? "base" : out;
}

// "spec.toml:7:14: point 1 (workload.parallel.ep=64): <problem>"
// Where a point's error belongs: the blamed axis entry, else the spec file.
SourceLocation location_of(const sweep::SweepSpec& spec, const sweep::Point& p, const std::exception& e) {
  return where_of(p, e).value_or(SourceLocation{spec.path, 0, 0});
}

// "point 2 (workload.parallel.ep=3): <the point's own error>"; a file it
// could not read is told at the point's key that named it.
std::string point_problem(const sweep::Point& p, const std::exception& e) {
  const auto* file = dynamic_cast<const FileError*>(&e);
  const std::string key = file ? key_naming(p, *file) : "";
  return fmt::format("point {} ({}): {}", p.index, describe(p),
                     key.empty() ? e.what() : named_at(*file, {}, key).what());
}

std::string located(const sweep::SweepSpec& spec, const sweep::Point& p, const std::exception& e) {
  const SourceLocation w = location_of(spec, p, e);
  const std::string where = w.line > 0 ? fmt::format("{}:{}:{}", w.file, w.line, w.column) : w.file;
  return fmt::format("{}: {}", where, point_problem(p, e));
}

json coordinates_json(const sweep::Point& p) {
  json c = json::object();
  for (const auto& [key, value] : p.coordinates) c[key] = json::parse(value);
  return c;
}

json record_base(const sweep::Point& p) {
  json axes = json::array();  // the spec's axis order, which a JSON object would lose
  for (const auto& coordinate : p.coordinates) axes.push_back(coordinate.first);
  return {{"point", p.index},
          {"key", p.key()},
          {"params", json::parse(p.key())},
          {"coordinates", coordinates_json(p)},
          {"axes", axes}};
}

// Runs one point in this process and appends its record; exit code per local_pool.hpp.
int run_point(const sweep::SweepSpec& spec, int index, const std::string& results) {
  if (index < 0 || index >= static_cast<int>(spec.points.size())) {
    throw option_error("--point", fmt::format("expected 0..{}, got {}", spec.points.size() - 1, index));
  }
  const sweep::Point& p = spec.points[index];
  json record = record_base(p);
  const auto start = std::chrono::steady_clock::now();
  try {
    const app::RunOutcome outcome = app::run_job(parse_run_request(p.run_arguments()));
    record["status"] = "ok";
    record["result"] = json::parse(sim::format_json(outcome.simulation.report));
  } catch (const std::exception& e) {
    record["status"] = "failed";
    record["error"] = located(spec, p, e);
  }
  record["wall_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  sweep::append_result(results, record);
  return record["status"] == "ok" ? sweep::kPointOk : sweep::kPointFailed;
}

// Points whose latest record is ok.
std::set<std::string> finished_keys(const std::string& results) {
  std::set<std::string> done;
  for (const auto& [key, record] : sweep::latest_by_key(sweep::read_results(results))) {
    if (record.value("status", "") == "ok") done.insert(key);
  }
  return done;
}

// Checks every pending point before running any. A bad combination stops
// the sweep before anything runs, at the spec line of its axis; with
// `keep_going` it is reported, recorded as failed, and the others run.
// `max_bytes` is the largest memory estimate of the runnable points.
std::vector<int> check_points(const sweep::SweepSpec& spec, const std::vector<int>& pending,
                              const std::string& results, bool keep_going, int& rejected, double& max_bytes) {
  std::vector<int> runnable;
  std::optional<InputError> first_bad;
  for (int i : pending) {
    const sweep::Point& p = spec.points[i];
    try {
      max_bytes = std::max(max_bytes, app::check_job(parse_run_request(p.run_arguments())));
      runnable.push_back(i);
    } catch (const std::exception& e) {
      ++rejected;
      if (!keep_going) {
        if (!first_bad) first_bad.emplace(location_of(spec, p, e), "", point_problem(p, e));
        continue;
      }
      std::string message = located(spec, p, e);
      std::cerr << message << "\n";
      json record = record_base(p);
      record["status"] = "failed";
      record["error"] = message;
      sweep::append_result(results, record);
    }
  }
  if (first_bad) {
    if (rejected == 1) throw *first_bad;
    throw InputError(first_bad->where(), "",
                     fmt::format("{} (and {} more bad point{}; --keep-going runs the good ones)",
                                 first_bad->problem(), rejected - 1, rejected == 2 ? "" : "s"));
  }
  return runnable;
}

// The spec and every file its points name: no output may replace one.
std::vector<NamedInput> spec_inputs(const sweep::SweepSpec& spec) {
  std::vector<NamedInput> inputs = {{"spec", spec.path}};
  std::set<std::string> seen;
  for (const sweep::Point& p : spec.points) {
    for (const auto& [key, path] : {std::pair{"platform", p.platform}, {"workload", p.workload}})
      if (seen.insert(path).second) inputs.push_back({"the spec's " + std::string(key), path});
  }
  return inputs;
}

// Options that only shape the batch script, or that contradict it: each
// acts or is refused, never ignored.
void check_mode(const SweepState& s) {
  if (s.emit_slurm.empty()) {
    for (const auto& [option, given] :
         {std::pair{"--slurm-partition", !s.slurm_partition.empty()}, {"--slurm-account", !s.slurm_account.empty()},
          {"--slurm-time", !s.slurm_time.empty()}, {"--slurm-mem", !s.slurm_mem.empty()},
          {"--slurm-epsim", !s.slurm_epsim.empty()}, {"--slurm-max-parallel", s.slurm_max_parallel > 0}})
      if (given) throw option_error(option, "only with --emit-slurm (it shapes the batch script)");
    return;
  }
  if (s.point >= 0)
    throw option_error("--emit-slurm",
                       "writes a script for every pending point; --point runs one here: give one of them");
  if (!s.slurm_epsim.empty()) {
    struct stat st {};
    if (::stat(s.slurm_epsim.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || ::access(s.slurm_epsim.c_str(), X_OK) != 0)
      throw option_error("--slurm-epsim", s.slurm_epsim + ": not an executable file");
  }
}

int run_sweep(const SweepState& s) {
  check_mode(s);
  const sweep::SweepSpec spec = sweep::load_sweep_spec(s.spec);
  const std::string results = results_path(s);
  // Every output is checked before any point runs (a bad --csv used to fail after the whole sweep).
  const std::vector<NamedInput> inputs = spec_inputs(spec);
  for (const auto& [option, path] :
       {std::pair{"--results", results}, {"--csv", s.csv}, {"--emit-slurm", s.emit_slurm}}) {
    if (path.empty()) continue;
    check_output_path(option, path);
    refuse_input_as_output(option, path, inputs);
  }
  if (s.point >= 0) return run_point(spec, s.point, results);
  // The batch script names both on lines of their own.
  if (!s.emit_slurm.empty()) {
    for (const auto& [option, path] : {std::pair{"spec", s.spec}, {"--results", results}})
      if (std::any_of(path.begin(), path.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; }))
        throw option_error(option, "a control character (a newline?) in the file name cannot go into a batch script");
  }
  // A second sweep on this results file is refused, not run twice (workers
  // run with --point and append under their own lock; a batch script only reads it).
  std::optional<sweep::DriverLock> lock;
  if (s.emit_slurm.empty()) lock.emplace(results);

  const std::set<std::string> done = finished_keys(results);
  std::vector<int> pending;
  for (const sweep::Point& p : spec.points) {
    if (!done.count(p.key())) pending.push_back(p.index);
  }
  const int total = static_cast<int>(spec.points.size());
  int rejected = 0;
  double max_bytes = 0;
  std::vector<int> runnable = check_points(spec, pending, results, s.keep_going, rejected, max_bytes);
  std::cerr << fmt::format("epsim sweep: {} points, {} finished earlier, {} to run; results in {}\n", total,
                           total - static_cast<int>(pending.size()), runnable.size(), results);

  if (!s.emit_slurm.empty()) {
    if (runnable.empty()) {
      std::cerr << "epsim sweep: nothing to submit\n";
      return rejected ? 1 : 0;
    }
    sweep::SlurmOptions o;
    o.epsim = s.slurm_epsim.empty() ? self_executable() : fs::absolute(s.slurm_epsim).string();
    // The presets the points were checked with; another epsim's are in its installed layout.
    o.data_dir = s.slurm_epsim.empty()
                     ? fs::absolute(data_dir()).lexically_normal().string()
                     : (fs::path(o.epsim).parent_path().parent_path() / "share" / "epsim").lexically_normal().string();
    o.spec = fs::absolute(s.spec).lexically_normal().string();
    o.results = fs::absolute(results).lexically_normal().string();
    o.log_dir = fs::path(o.results).parent_path().string();  // absolute first: a bare file name has no parent
    o.workdir = fs::current_path().string();  // the spec's relative platform and workload paths were checked here
    o.job_name = "epsim-" + fs::path(s.spec).stem().string();
    o.max_parallel = s.slurm_max_parallel;
    o.partition = s.slurm_partition;
    o.account = s.slurm_account;
    o.time_limit = s.slurm_time;
    o.mem_MiB = s.slurm_mem.empty() ? slurm_mem_MiB(max_bytes)
                                    : static_cast<long long>(std::ceil(parse_size(s.slurm_mem) / kMiB));
    std::string script;
    try {
      script = sweep::slurm_array_script(runnable, o);
    } catch (const std::invalid_argument& e) {
      throw option_error("--emit-slurm", e.what());
    }
    write_output_file("--emit-slurm", s.emit_slurm, script);
    std::cerr << fmt::format("epsim sweep: wrote {} ({} array tasks); submit with sbatch, then "
                             "`epsim sweep collect {}`\n", s.emit_slurm, runnable.size(), s.spec);
    return rejected ? 1 : 0;
  }

  sweep::PoolOptions pool;
  pool.jobs = s.jobs;
  pool.child_argv = {self_executable(), "sweep", s.spec, "--results", results};
  pool.progress = !s.quiet;
  sweep::PoolOutcome outcome = sweep::run_points(runnable, pool, [&](int index, const std::string& why) {
    json record = record_base(spec.points[index]);
    record["status"] = "failed";
    record["error"] = why;
    sweep::append_result(results, record);
  });
  if (!s.csv.empty()) write_output_file("--csv", s.csv, sweep::results_csv(spec, sweep::read_results(results)));
  const int failed = outcome.failed + rejected;
  std::cerr << fmt::format("epsim sweep: {} of {} points ok, {} failed\n", total - failed, total, failed);
  return failed ? 1 : 0;
}

int collect(const SweepState& s) {
  const sweep::SweepSpec spec = sweep::load_sweep_spec(s.spec);
  const std::string results = results_path(s);
  const std::string csv = s.csv.empty() ? fs::path(results).replace_extension(".csv").string() : s.csv;
  check_output_path("--csv", csv);
  refuse_input_as_output("--csv", csv, spec_inputs(spec));
  refuse_input_as_output("--csv", csv, {{"--results", results}});
  const auto latest = sweep::latest_by_key(sweep::read_results(results));
  int ok = 0, failed = 0, missing = 0;
  for (const sweep::Point& p : spec.points) {
    auto it = latest.find(p.key());
    if (it == latest.end()) {
      ++missing;
      std::cerr << fmt::format("epsim sweep collect: point {} has no result\n", p.index);
    } else if (it->second.value("status", "") != "ok") {
      ++failed;
      std::cerr << fmt::format("epsim sweep collect: point {} failed: {}\n", p.index,
                               it->second.value("error", "unknown error"));
    } else {
      ++ok;
    }
  }
  write_output_file("--csv", csv, sweep::results_csv(spec, sweep::read_results(results)));
  std::cout << fmt::format("{} points: {} ok, {} failed, {} missing; table written to {}\n",
                           spec.points.size(), ok, failed, missing, csv);
  return failed || missing ? 1 : 0;
}

}  // namespace

Command add_sweep_command(CLI::App& epsim) {
  auto state = std::make_shared<SweepState>();
  CLI::App* cmd = epsim.add_subcommand("sweep", "run a sweep spec: many scenarios, resumable, locally or on Slurm");
  cmd->add_option("spec", state->spec, "sweep spec TOML (docs/sweep.md)");
  cmd->add_option("-j,--jobs", state->jobs, "points run at once, each in its own process")
      ->check(integer_in(1, 1024))->capture_default_str();
  cmd->add_option("--results", state->results, "results file (JSON lines; default SPEC-stem.results.jsonl beside the spec)")
      ->check(file_name());
  cmd->add_option("--csv", state->csv, "also write the results as CSV here")->check(file_name());
  cmd->add_option("--point", state->point, "run only this point (0-based) and append its record; for workers and Slurm")
      ->check(integer_at_least(0));
  cmd->add_option("--emit-slurm", state->emit_slurm, "write an sbatch job-array script for the pending points instead of running")
      ->check(file_name());
  cmd->add_option("--slurm-max-parallel", state->slurm_max_parallel, "limit of array tasks running at once (%N)")
      ->check(integer_at_least(1));
  cmd->add_option("--slurm-partition", state->slurm_partition, "partition for the job array")->check(slurm_name());
  cmd->add_option("--slurm-account", state->slurm_account, "account the job array is charged to")->check(slurm_name());
  cmd->add_option("--slurm-time", state->slurm_time,
                  "time limit per array task: MINUTES, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS")
      ->check(slurm_time());
  cmd->add_option("--slurm-mem", state->slurm_mem,
                  "memory per array task, e.g. 4GiB (default: the largest point's estimate x 1.5 + 256 MiB)")
      ->check(size_in(Physical::kMemoryBytes));
  cmd->add_option("--slurm-epsim", state->slurm_epsim,
                  "the epsim the array tasks run, e.g. an installed PREFIX/bin/epsim (default: this one; its presets: "
                  "PREFIX/share/epsim)")
      ->check(file_name());
  cmd->add_flag("-q,--quiet", state->quiet, "no progress lines");
  cmd->add_flag("--keep-going", state->keep_going,
                "run the good points when some fail their checks (recorded as failed) instead of refusing the sweep");

  auto collect_state = std::make_shared<SweepState>();
  CLI::App* collect_cmd = cmd->add_subcommand("collect", "check a sweep's results and export them as CSV");
  collect_cmd->add_option("spec", collect_state->spec, "sweep spec TOML")->required();
  collect_cmd->add_option("--results", collect_state->results, "results file (default beside the spec)")
      ->check(file_name());
  collect_cmd->add_option("--csv", collect_state->csv, "CSV output (default: results file with .csv)")
      ->check(file_name());

  return Command{cmd, [state, collect_state, collect_cmd] {
                   if (collect_cmd->parsed()) return collect(*collect_state);
                   if (state->spec.empty()) throw option_error("spec", "give a sweep spec TOML");
                   return run_sweep(*state);
                 }};
}

}  // namespace epsim::tools
