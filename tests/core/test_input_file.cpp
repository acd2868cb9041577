// The regular-file check, the bounded read and the one physical-range table.
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "core/input_file.hpp"
#include "core/physical_ranges.hpp"

using namespace epsim;
namespace fs = std::filesystem;

namespace {

// The message of the FileError `path` raises, or "" when it reads.
std::string refusal(const std::string& path) {
  try {
    read_input_file(path);
  } catch (const FileError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("inputs are regular files: anything else is refused at once, naming it", "[input]") {
  const fs::path dir = fs::temp_directory_path() / ("epsim-input-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string fifo = (dir / "f.toml").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // A FIFO with no writer: open() would block for ever; stat() answers at once.
  CHECK(refusal(fifo) == fifo + ": error: not a regular file (a FIFO)");
  CHECK(refusal("/dev/zero") == "/dev/zero: error: not a regular file (a character device)");
  CHECK(refusal(dir.string()) == dir.string() + ": error: is a directory");
  CHECK(refusal((dir / "none.toml").string()) == (dir / "none.toml").string() + ": error: cannot open file");
  CHECK(refusal("") == "error: cannot open file");  // an empty path names no file
  const std::string file = (dir / "ok.toml").string();
  std::ofstream(file) << "a = 1\n";
  CHECK(read_input_file(file) == "a = 1\n");
  fs::remove_all(dir);
}

TEST_CASE("a file error is re-told at the key or option that named the file", "[input]") {
  const FileError e("tests", "is a directory");
  CHECK(std::string(e.what()) == "tests: error: is a directory");
  CHECK(std::string(named_at(e, SourceLocation{"w.toml", 3, 8}, "base").what()) ==
        "w.toml:3:8: error: base: tests: is a directory");
  CHECK(std::string(named_at(e, {}, "--platform").what()) == "error: --platform: tests: is a directory");
}

TEST_CASE("one physical-range table: edges are inside, a step past them is not", "[ranges]") {
  CHECK(physical_range_problem(Physical::kEfficiency, 1e-3).empty());
  CHECK(physical_range_problem(Physical::kEfficiency, 1).empty());
  CHECK(physical_range_problem(Physical::kEfficiency, 0.999e-3) ==
        "0.000999 is outside the physical range [0.001, 1]");
  CHECK(physical_range_problem(Physical::kEfficiency, 1e-300) == "1e-300 is outside the physical range [0.001, 1]");
  CHECK_FALSE(physical_range_problem(Physical::kEfficiency, 1.0000001).empty());
  CHECK(physical_range_problem(Physical::kMessageBytes, 1).empty());
  CHECK(physical_range_problem(Physical::kMessageBytes, 1e15).empty());
  CHECK(physical_range_problem(Physical::kMessageBytes, 0.5) == "0.5 B is outside the physical range [1, 1e+15] B");
  // A unit string's kind reads its range from the same table.
  CHECK(physical_range_problem(Quantity::kBytes, 1e5) == "100000 B is outside the physical range [1e+06, 1e+15] B");
  CHECK(physical_range_problem(Quantity::kBandwidth, 1e-311) ==
        "1e-311 B/s is outside the physical range [1000, 1e+15] B/s");
  CHECK_FALSE(physical_range_problem(Physical::kEfficiency, std::nan("")).empty());
}

TEST_CASE("an input file log hears every file read while it lives, nested ones first", "[input]") {
  const fs::path dir = fs::temp_directory_path() / ("epsim-log-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string a = (dir / "a.toml").string(), b = (dir / "b.toml").string();
  std::ofstream(a) << "x = 1\n";
  std::ofstream(b) << "y = 2\n";
  read_input_file(a);  // no log: nothing is kept
  InputFileLog outer;
  read_input_file(a);
  {
    InputFileLog inner;
    read_input_file(b);
    REQUIRE(inner.files().size() == 1);
    CHECK(inner.files()[0] == std::pair<std::string, std::string>{b, "y = 2\n"});
  }
  read_input_file(b);
  REQUIRE(outer.files().size() == 2);
  CHECK(outer.files()[0].second == "x = 1\n");
  CHECK(outer.files()[1].first == b);
  fs::remove_all(dir);
}
