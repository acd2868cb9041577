// Strict TOML reading: types, ranges, units, unknown keys, locations.
#include <catch2/catch.hpp>

#include "core/toml_reader.hpp"

using namespace epsim;

namespace {
std::string error_of(const std::string& text, void (*read)(TableReader&)) {
  try {
    toml::table t = parse_toml_text(text, "bad.toml");
    TableReader r(t, "");
    read(r);
    r.finish();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

void read_node(TableReader& r) {
  TableReader node = r.table("node");
  node.integer("npus", 1);
  node.quantity_or("bandwidth", 1.0, Quantity::kBandwidth);
  node.choice_or("fabric", "mesh", {"mesh", "switch"});
  node.finish();
}
}  // namespace

TEST_CASE("good TOML reads into SI values", "[toml]") {
  toml::table t = parse_toml_text("[node]\nnpus = 8\nbandwidth = \"56GBps\"\n", "a.toml");
  TableReader r(t, "");
  TableReader node = r.table("node");
  CHECK(node.integer("npus", 1) == 8);
  CHECK(node.quantity("bandwidth", Quantity::kBandwidth) == 56e9);
  CHECK(node.choice_or("fabric", "mesh", {"mesh", "switch"}) == "mesh");
  node.finish();
  r.finish();
}

TEST_CASE("bad TOML gives file:line:col, key and reason", "[toml]") {
  struct Row {
    const char* text;
    const char* message;
  };
  const Row rows[] = {
      {"[node]\nnpus = 0\n", "bad.toml:2:8: error: node.npus: expected an integer >= 1, got 0"},
      {"[node]\nnpus = \"8\"\n", "bad.toml:2:8: error: node.npus: expected an integer, got a string"},
      {"[node]\nnpu = 8\n", "bad.toml:2:7: error: node.npu: unknown key (did you mean \"npus\"?)"},
      {"[node]\n", "bad.toml:1:1: error: node.npus: missing required key"},
      {"[node]\nnpus = 8\nbandwidth = \"-5GBps\"\n",
       "bad.toml:3:13: error: node.bandwidth: must be > 0, got \"-5GBps\""},
      {"[node]\nnpus = 8\nbandwidth = \"5GHz\"\n",
       "bad.toml:3:13: error: node.bandwidth: unknown unit \"GHz\" in \"5GHz\""},
      {"[node]\nnpus = 8\nfabric = \"swich\"\n",
       "bad.toml:3:10: error: node.fabric: expected one of mesh, switch, got \"swich\" (did you mean \"switch\"?)"},
      {"[node\nnpus = 8\n", "bad.toml:1:6: error: malformed TOML"},
      {"node = 3\n", "bad.toml:1:8: error: node: expected a table, got an integer"},
  };
  for (const Row& r : rows) {
    INFO(r.text);
    CHECK_THAT(error_of(r.text, read_node), Catch::StartsWith(r.message));
  }
}

TEST_CASE("a missing file is an input error naming it", "[toml]") {
  CHECK_THROWS_WITH(load_toml_file("no/such/file.toml"), "no/such/file.toml: error: cannot open file");
}

TEST_CASE("closest_match suggests near keys only", "[toml]") {
  CHECK(closest_match("npu", {"npus", "nodes"}) == "npus");
  CHECK(closest_match("bandwith", {"bandwidth", "latency"}) == "bandwidth");
  CHECK(closest_match("zzzzzz", {"npus", "nodes"}).empty());
  // A shortened name matches the one key it is a whole part of.
  CHECK(closest_match("s", {"kind", "zipf_s", "seed"}) == "zipf_s");
  CHECK(closest_match("share", {"hot_share", "hot_experts"}) == "hot_share");
  CHECK(closest_match("hot", {"hot_share", "hot_experts"}).empty());
  CHECK(closest_match("z", {"zipf_s"}).empty());
}
