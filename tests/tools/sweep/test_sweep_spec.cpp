// Sweep specs: cartesian and zipped expansion, point identity, bad specs.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <string>

#include "tools/sweep/sweep_spec.hpp"

using namespace epsim::sweep;

namespace {
std::string write_spec(const std::string& name, const std::string& text) {
  std::string path = std::string(EPSIM_BINARY_DIR) + "/" + name;
  std::ofstream(path) << text;
  return path;
}

std::string error_of(const std::string& name, const std::string& text) {
  try {
    load_sweep_spec(write_spec(name, text));
  } catch (const epsim::InputError& e) {
    return e.what();
  }
  return "no error";
}

const char* kBase = "schema_version = 1\n[base]\nplatform = \"a2\"\nworkload = \"deepseek-v3\"\n";
}  // namespace

TEST_CASE("axes expand as a cartesian product, first axis slowest", "[sweep]") {
  SweepSpec spec = load_sweep_spec(write_spec("cartesian.toml", std::string(kBase) +
      "set = [\"platform.nodes=4\"]\n"
      "[[axis]]\nkey = \"workload.parallel.ep\"\nvalues = [8, 16, 32]\n"
      "[[axis]]\nkey = \"schedule\"\nvalues = [\"serial\", \"overlap\"]\n"));
  REQUIRE(spec.points.size() == 6);
  CHECK(spec.points[0].sets == std::vector<std::string>{"platform.nodes=4", "workload.parallel.ep=8"});
  CHECK(spec.points[0].schedule == "serial");
  CHECK(spec.points[1].schedule == "overlap");
  CHECK(spec.points[1].sets.back() == "workload.parallel.ep=8");
  CHECK(spec.points[5].sets.back() == "workload.parallel.ep=32");
  CHECK(spec.points[5].schedule == "overlap");
  for (int i = 0; i < 6; ++i) CHECK(spec.points[i].index == i);
  CHECK(spec.points[3].run_arguments() ==
        std::vector<std::string>{"--platform", "a2", "--workload", "deepseek-v3", "--seed", "1",
                                 "--schedule", "overlap", "--set", "platform.nodes=4", "--set",
                                 "workload.parallel.ep=16"});
}

TEST_CASE("zipped axes vary together", "[sweep]") {
  SweepSpec spec = load_sweep_spec(write_spec("zipped.toml", std::string(kBase) +
      "[[axis]]\nkey = \"workload.parallel.ep\"\nvalues = [8, 16, 32]\n"
      "[[axis]]\nkey = \"platform.nodes\"\nvalues = [1, 2, 4]\nzip_with = \"workload.parallel.ep\"\n"
      "[[axis]]\nkey = \"seed\"\nvalues = [1, 2]\n"));
  REQUIRE(spec.points.size() == 6);
  CHECK(spec.points[0].sets == std::vector<std::string>{"workload.parallel.ep=8", "platform.nodes=1"});
  CHECK(spec.points[0].seed == 1);
  CHECK(spec.points[1].seed == 2);
  CHECK(spec.points[4].sets == std::vector<std::string>{"workload.parallel.ep=32", "platform.nodes=4"});
}

TEST_CASE("strings are quoted for --set and point keys are canonical", "[sweep]") {
  SweepSpec spec = load_sweep_spec(write_spec("strings.toml", std::string(kBase) +
      "[[axis]]\nkey = \"platform.nic.bandwidth\"\nvalues = [\"200Gbps\", \"400Gbps\"]\n"
      "[[axis]]\nkey = \"platform\"\nvalues = [\"a2\", \"a2-400g\"]\n"));
  REQUIRE(spec.points.size() == 4);
  CHECK(spec.points[0].sets == std::vector<std::string>{"platform.nic.bandwidth=\"200Gbps\""});
  CHECK(spec.points[1].platform == "a2-400g");
  CHECK(spec.points[0].key() != spec.points[1].key());
  Point moved = spec.points[2];
  moved.index = 99;
  CHECK(moved.key() == spec.points[2].key());
}

TEST_CASE("a spec without axes is one point", "[sweep]") {
  SweepSpec spec = load_sweep_spec(write_spec("single.toml", kBase));
  REQUIRE(spec.points.size() == 1);
  CHECK(spec.points[0].platform == "a2");
}

// Two axes of 101 values: 10201 points, above the default max_points (10000).
std::string wide_axes() {
  std::string values;
  for (int i = 0; i <= 100; ++i) values += (i ? ", " : "") + std::to_string(i);
  return "[[axis]]\nkey = \"seed\"\nvalues = [" + values + "]\n[[axis]]\nkey = \"platform.node.count\"\nvalues = [" +
         values + "]\n";
}

TEST_CASE("a spec expanding to more than max_points is refused before expansion", "[sweep]") {
  CHECK(error_of("wide.toml", std::string(kBase) + wide_axes()) ==
        std::string(EPSIM_BINARY_DIR) +
            "/wide.toml:5:1: error: axis: the axes expand to more than 10000 points (max_points); set max_points = N "
            "at the top of the spec to allow more, up to 1000000");
  const SweepSpec allowed = load_sweep_spec(write_spec("wide_allowed.toml", "max_points = 20000\n" + std::string(kBase) + wide_axes()));
  CHECK(allowed.points.size() == 10201);
  CHECK_THAT(error_of("max_points_range.toml", "max_points = 2000000\n" + std::string(kBase)),
             Catch::Contains("max_points_range.toml:1:14: error: max_points: expected an integer in [1, 1000000], got 2000000"));
}

TEST_CASE("bad specs name file, line and key", "[sweep]") {
  struct Row {
    const char* name;
    std::string text;
    const char* message;
  };
  const std::string b = kBase;
  const Row rows[] = {
      {"bad_axis_key.toml", b + "[[axis]]\nkey = \"sed\"\nvalues = [1]\n",
       "bad_axis_key.toml:6:7: error: axis[0].key: unknown axis key \"sed\""},
      {"empty_axis.toml", b + "[[axis]]\nkey = \"seed\"\nvalues = []\n",
       "empty_axis.toml:7:10: error: axis[0].values: empty axis"},
      {"zip_length.toml",
       b + "[[axis]]\nkey = \"seed\"\nvalues = [1, 2]\n[[axis]]\nkey = \"schedule\"\nvalues = [\"serial\"]\nzip_with = \"seed\"\n",
       "zip_length.toml:11:12: error: axis[1].zip_with: zipped axes need equal lengths"},
      {"zip_unknown.toml", b + "[[axis]]\nkey = \"seed\"\nvalues = [1]\nzip_with = \"ep\"\n",
       "zip_unknown.toml:8:12: error: axis[0].zip_with: no earlier axis \"ep\""},
      {"twice.toml", b + "[[axis]]\nkey = \"seed\"\nvalues = [1]\n[[axis]]\nkey = \"seed\"\nvalues = [2]\n",
       "twice.toml:9:7: error: axis[1].key: axis \"seed\" is declared twice"},
      {"unknown.toml", b + "sedd = 3\n", "unknown.toml:5:8: error: base.sedd: unknown key (did you mean \"seed\"?)"},
      {"bad_set.toml", b + "set = [\"nodes=4\"]\n", "bad_set.toml:5:8: error: base.set: expected"},
      {"seed_type.toml", b + "[[axis]]\nkey = \"seed\"\nvalues = [\"x\"]\n",
       "seed_type.toml:7:11: error: axis[0].values: seeds are integers"},
  };
  for (const Row& r : rows) {
    INFO(r.text);
    CHECK_THAT(error_of(r.name, r.text), Catch::Contains(r.message));
  }
}
