// The one preset lookup: EPSIM_DATA_DIR, names, "did you mean", no presets.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "core/error.hpp"
#include "core/presets.hpp"

using namespace epsim;
namespace fs = std::filesystem;

namespace {
// A data folder with two platform presets and no workload presets.
fs::path make_data_dir() {
  fs::path dir = fs::temp_directory_path() / ("epsim-presets-test-" + std::to_string(::getpid()));
  fs::create_directories(dir / "platforms");
  fs::create_directories(dir / "workloads" / "presets");
  std::ofstream(dir / "platforms" / "small.toml") << "# test\n";
  std::ofstream(dir / "platforms" / "large.toml") << "# test\n";
  std::ofstream(dir / "platforms" / "notes.txt") << "not a preset\n";
  ::setenv("EPSIM_DATA_DIR", dir.c_str(), 1);
  return dir;
}
}  // namespace

TEST_CASE("EPSIM_DATA_DIR holds the presets of both kinds", "[presets]") {
  fs::path dir = make_data_dir();
  CHECK(data_dir() == dir.string());
  CHECK(preset_names(PresetKind::kPlatform) == std::vector<std::string>{"large", "small"});
  CHECK(resolve_preset_file(PresetKind::kPlatform, "small") == (dir / "platforms" / "small.toml").string());
  CHECK_THROWS_WITH(resolve_preset_file(PresetKind::kPlatform, "smal"),
                    "smal: error: no such platform file or preset (did you mean \"small\"?), the presets in " +
                        (dir / "platforms").string() + " are large, small");
  // No presets of a kind is an error naming the folder searched, not an empty list.
  CHECK_THROWS_WITH(preset_names(PresetKind::kWorkload),
                    "error: no workload presets (*.toml) in " + (dir / "workloads" / "presets").string() +
                        " (EPSIM_DATA_DIR)");
  fs::remove_all(dir);
}

TEST_CASE("a path is used as is, a missing one is an error", "[presets]") {
  fs::path dir = make_data_dir();
  CHECK(resolve_preset_file(PresetKind::kWorkload, (dir / "platforms" / "small.toml").string()) ==
        (dir / "platforms" / "small.toml").string());
  CHECK_THROWS_WITH(resolve_preset_file(PresetKind::kWorkload, "no/such.toml"), "no/such.toml: error: cannot open file");
  fs::remove_all(dir);
}

TEST_CASE("the build tree's binaries read the source tree", "[presets]") {
  ::unsetenv("EPSIM_DATA_DIR");
  CHECK(fs::equivalent(data_dir(), EPSIM_SOURCE_DIR));
}
