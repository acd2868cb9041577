// `base = "..."`: a TOML input laid over another, every value still
// reported at the file and line it was written at.
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "core/toml_base.hpp"
#include "core/toml_reader.hpp"

namespace fs = std::filesystem;
using namespace epsim;

namespace {

// A scratch folder per test case (cases run as separate processes, possibly at once).
fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("epsim_toml_base_" + name + "_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

std::string error_of(const fs::path& p) {
  try {
    load_toml_with_base(p.string(), PresetKind::kWorkload);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a file's keys replace its base's, tables merge key by key", "[toml][base]") {
  const fs::path d = scratch("merge");
  write(d / "a.toml", "schema = 1\n[parallel]\nep = 8\ndp = 8\n[model]\nlayers = 4\n");
  write(d / "b.toml", "base = \"a.toml\"\n[parallel]\nep = 4\npp = 2\n");
  const toml::table t = load_toml_with_base((d / "b.toml").string(), PresetKind::kWorkload);
  CHECK(!t.contains("base"));
  CHECK(t["schema"].value<int>() == 1);
  CHECK(t["parallel"]["ep"].value<int>() == 4);
  CHECK(t["parallel"]["dp"].value<int>() == 8);
  CHECK(t["parallel"]["pp"].value<int>() == 2);
  CHECK(t["model"]["layers"].value<int>() == 4);
  // Each value keeps the file and line it was written at.
  const SourceLocation ep = location_of(*t["parallel"]["ep"].node());
  CHECK(fs::path(ep.file).filename() == "b.toml");
  CHECK(ep.line == 3);
  const SourceLocation dp = location_of(*t["parallel"]["dp"].node());
  CHECK(fs::path(dp.file).filename() == "a.toml");
  CHECK(dp.line == 4);
}

TEST_CASE("a bad base is an error at the base key", "[toml][base]") {
  const fs::path d = scratch("bad");
  write(d / "missing.toml", "schema = 1\nbase = \"nowhere.toml\"\n");
  CHECK_THAT(error_of(d / "missing.toml"), Catch::Contains("missing.toml:2:8: error: base: ") &&
                                               Catch::Contains("nowhere.toml"));
  write(d / "number.toml", "base = 3\n");
  CHECK_THAT(error_of(d / "number.toml"), Catch::Contains("number.toml:1:8: error: base: expected a preset name"));
  write(d / "x.toml", "base = \"y.toml\"\n");
  write(d / "y.toml", "base = \"x.toml\"\n");
  CHECK_THAT(error_of(d / "x.toml"), Catch::Contains("y.toml:1:8: error: base: ") && Catch::Contains("(a loop)"));
  write(d / "self.toml", "base = \"self.toml\"\n");
  CHECK_THAT(error_of(d / "self.toml"), Catch::Contains("self.toml:1:8: error: base: ") && Catch::Contains("(a loop)"));
}
