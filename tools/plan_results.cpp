// The plan's results file: its digest, its default place, reuse and appends.
#include "tools/plan_results.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/digest.hpp"
#include "core/error.hpp"

namespace epsim::tools {

namespace fs = std::filesystem;

namespace {

// The digest of this executable's bytes, read 1 MiB at a time (it is a
// hundred MB): a rebuilt binary that prices anything differently keys other results.
std::string executable_digest() {
  std::ifstream in("/proc/self/exe", std::ios::binary);
  if (!in) throw std::runtime_error("cannot read this executable (/proc/self/exe) for --results");
  Digest d;
  std::string chunk(std::size_t{1} << 20, '\0');
  while (in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())), in.gcount() > 0)
    d.add(std::string_view(chunk.data(), static_cast<std::size_t>(in.gcount())));
  if (in.bad()) throw std::runtime_error("cannot read this executable (/proc/self/exe) for --results");
  return d.hex();
}

}  // namespace

std::string plan_digest(const std::vector<std::string>& arguments,
                        const std::vector<std::pair<std::string, std::string>>& files) {
  Digest d;
  d.add(executable_digest());
  d.add(std::to_string(arguments.size()));
  for (const std::string& a : arguments) d.add(a);
  d.add(std::to_string(files.size()));
  for (const auto& [path, text] : files) d.add(path).add(text);
  return d.hex();
}

std::string default_plan_results(const std::string& digest) {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  fs::path cache;
  if (xdg && *xdg)
    cache = xdg;
  else if (home && *home)
    cache = fs::path(home) / ".cache";
  else
    throw option_error("--results", "neither XDG_CACHE_HOME nor HOME is set, so a plan has no default results file; "
                                    "give --results FILE or --results none");
  const fs::path folder = cache / "epsim" / "plan";
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec) throw option_error("--results", folder.string() + ": cannot create the folder: " + ec.message());
  return (folder / (digest + ".jsonl")).string();
}

PlanResultsFile::PlanResultsFile(std::string path, std::string digest)
    : path_(std::move(path)), digest_(std::move(digest)), lock_(path_, "plan") {
  // Only this digest's records count: a file given as --results may hold other plans'.
  for (const nlohmann::json& record : sweep::read_results(path_))
    if (record.value("status", "") == "ok" && record.value("digest", "") == digest_ && record.contains("step") &&
        record.contains("key") && record["key"].is_string())
      steps_[record["key"].get<std::string>()] = record["step"].dump();
}

std::optional<std::string> PlanResultsFile::earlier(const std::string& key) const {
  const auto it = steps_.find(key);
  if (it == steps_.end()) return std::nullopt;
  return it->second;
}

void PlanResultsFile::finished(const std::string& key, const std::string& step) {
  sweep::append_result(path_, {{"key", key}, {"digest", digest_}, {"status", "ok"}, {"step", nlohmann::json::parse(step)}});
}

}  // namespace epsim::tools
