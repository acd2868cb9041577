// A measurement file's key = value tables as assignments that remember
// their place, and errors raised on them told there (core/file_assignments.hpp).
#include <catch2/catch.hpp>

#include "core/file_assignments.hpp"
#include "core/overrides.hpp"
#include "core/toml_reader.hpp"

using namespace epsim;

namespace {

std::vector<FileAssignment> read(const std::string& text, const std::string& side) {
  const toml::table doc = parse_toml_text(text, "m.toml");
  TableReader root(doc, "");
  TableReader set = root.table("platform_set");
  return read_assignments(set, side);
}

}  // namespace

TEST_CASE("file assignments keep their text, key and place", "[core]") {
  const auto a = read("[platform_set]\n\"node.count\" = 4\n\"npu.model\" = \"a \\\"b\\\"\"\nflag = true\nx = 1.5\n",
                      "platform.");
  // In the table's key order (toml++ keeps keys sorted), each with its place.
  REQUIRE(a.size() == 4);
  CHECK(a[0].assignment == "flag=true");
  CHECK(a[1].assignment == "node.count=4");
  CHECK(a[1].key == "platform_set.node.count");
  CHECK(a[1].at.file == "m.toml");
  CHECK(a[1].at.line == 2);
  CHECK(a[1].at.column == 16);  // the value, after "\"node.count\" = "
  // A string is TOML-quoted, so its quotes survive and "true" would stay a string.
  CHECK(a[2].assignment == "npu.model=\"a \\\"b\\\"\"");
  CHECK(a[3].assignment == "x=1.5");
  CHECK(assignment_texts(a) == std::vector<std::string>{"platform.flag=true", "platform.node.count=4",
                                                        "platform.npu.model=\"a \\\"b\\\"\"", "platform.x=1.5"});
  // The quoted text reads back as the same string through --set's reader.
  toml::table t;
  apply_override(t, a[2].assignment);
  CHECK(*t["npu"]["model"].value<std::string>() == "a \"b\"");
}

TEST_CASE("a value with a line break is refused at its key, in one line", "[core]") {
  try {
    read("[platform_set]\n\"npu.model\" = \"a\\nb\"\n", "");
    FAIL("accepted a line break");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) ==
          "m.toml:2:15: error: platform_set.npu.model: expected a value on one line, got a line break or control "
          "character");
  }
  CHECK_THROWS_WITH(read("[platform_set]\nx = [1, 2]\n", ""),
                    "m.toml:2:5: error: platform_set.x: expected an array of strings, as after --set key=[\"a\", \"b\"]");
  CHECK_THROWS_WITH(read("[platform_set]\nx = {a = 1}\n", ""),
                    "m.toml:2:5: error: platform_set.x: expected a string, number, boolean or array of strings, as "
                    "after --set key=");
  // A list of names (memory.recompute's modules) reads back as the same array through --set's reader.
  const auto names = read("[platform_set]\n\"memory.recompute\" = [\"mla_up_proj\", \"mlp\"]\n", "workload.");
  REQUIRE(names.size() == 1);
  CHECK(names[0].assignment == "memory.recompute=[\"mla_up_proj\",\"mlp\"]");
  toml::table t;
  apply_override(t, names[0].assignment);
  CHECK(t["memory"]["recompute"].as_array()->size() == 2);
}

TEST_CASE("an error raised on an assignment is told at its place in the file", "[core]") {
  const auto a = read("[platform_set]\n\"node.count\" = 0\n", "platform.");
  // As run_job's loaders raise it: after the side was split off, or with it.
  for (const std::string source : {"--set node.count=0", "--set platform.node.count=0"}) {
    try {
      rethrow_at_assignment(InputError({source, 0, 0}, "node.count", "expected an integer in [1, 65536], got 0"), a);
    } catch (const InputError& e) {
      CHECK(std::string(e.what()) ==
            "m.toml:2:16: error: platform_set.node.count: expected an integer in [1, 65536], got 0");
    }
  }
  // Another error passes as it is.
  CHECK_THROWS_WITH(rethrow_at_assignment(InputError({"p.toml", 3, 1}, "node.npus", "bad"), a),
                    "p.toml:3:1: error: node.npus: bad");
}
