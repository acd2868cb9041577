// --set overrides: typed values, bare strings, created tables, errors.
#include <catch2/catch.hpp>

#include "core/overrides.hpp"
#include "core/toml_reader.hpp"

using namespace epsim;

TEST_CASE("overrides replace and adds keys with TOML-typed values", "[overrides]") {
  toml::table t = parse_toml_text("[node]\nnpus = 8\n", "preset.toml");
  apply_overrides(t, {"node.npus=16", "node.bandwidth=\"56GBps\"", "routing.kind=zipf",
                      "routing.s=1.2", "parallel.ep=[8, 16]"});
  CHECK(t["node"]["npus"].value<std::int64_t>() == 16);
  CHECK(t["node"]["bandwidth"].value<std::string>() == "56GBps");
  CHECK(t["routing"]["kind"].value<std::string>() == "zipf");
  CHECK(t["routing"]["s"].value<double>() == 1.2);
  CHECK(t["parallel"]["ep"].as_array()->size() == 2);
}

TEST_CASE("an overridden bad value is reported against --set", "[overrides]") {
  toml::table t = parse_toml_text("[node]\nnpus = 8\n", "preset.toml");
  apply_override(t, "node.npus=0");
  TableReader r(t, "");
  TableReader node = r.table("node");
  CHECK_THROWS_WITH(node.integer("npus", 1),
                    "--set node.npus=0: error: node.npus: expected an integer >= 1, got 0");
}

TEST_CASE("malformed overrides are rejected", "[overrides]") {
  toml::table t = parse_toml_text("[node]\nnpus = 8\n", "preset.toml");
  CHECK_THROWS_WITH(apply_override(t, "node.npus"), Catch::Contains("expected key=value"));
  CHECK_THROWS_WITH(apply_override(t, "node..npus=3"), Catch::Contains("empty key path element"));
  CHECK_THROWS_WITH(apply_override(t, "node.npus.x=3"), Catch::Contains("node.npus: is not a table"));
}

TEST_CASE("is_override tells set values from the file's", "[overrides]") {
  toml::table t = parse_toml_text("[routing]\nkind = \"zipf\"\nzipf_s = 1.0\n", "preset.toml");
  apply_override(t, "routing.kind=hot");
  CHECK(is_override(*t["routing"]["kind"].node()));
  CHECK_FALSE(is_override(*t["routing"]["zipf_s"].node()));
}
