// The bad-input table: one small file per defect in tests/topology/bad/,
// each with the exact one-line message the user sees.
#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "topology/cluster_spec.hpp"

using namespace epsim;
using namespace epsim::topology;

namespace {

std::string error_of(const std::string& file_or_preset) {
  try {
    load_cluster_spec(file_or_preset);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("bad platform files give file:line:col, key path and reason", "[spec][bad]") {
  struct Row {
    const char* file;
    const char* message;  // after "tests/topology/bad/<file>:"
  };
  const Row rows[] = {
      {"bad_choice.toml",
       "13:10: error: node.fabric: expected one of mesh, switch, got \"mesch\" (did you mean \"mesh\"?)"},
      {"bad_schema.toml", "1:10: error: schema: unsupported schema version 2 (this epsim reads 1)"},
      {"bad_unit.toml", "7:17: error: npu.hbm_bandwidth: unknown unit \"THz\" in \"1.6THz\""},
      {"disconnected.toml",
       "12:9: error: node.count: disconnected topology: 2 nodes but neither [scaleout] nor [supernode] "
       "connects them"},
      {"leaf_key_on_switch.toml",
       "21:18: error: scaleout.nodes_per_leaf: only for fabric = \"leaf_spine\", not \"switch\""},
      {"malformed.toml", "10:6: error: malformed TOML"},
      {"missing_field.toml", "4:1: error: npu.hbm_bandwidth: missing required key"},
      {"missing_unit.toml", "15:16: error: node.link_latency: missing unit in \"1\""},
      {"negative_bandwidth.toml", "19:17: error: scaleout.nic_bandwidth: must be > 0, got \"-200Gbps\""},
      {"no_low_precision.toml",
       "4:1: error: npu.flops_fp8: missing required key (give flops_fp8, or flops_int8"},
      {"share_out_of_range.toml",
       "9:22: error: npu.comm_compute_share: expected a number in [0, 1), got 1.5"},
      {"supernode_and_scaleout.toml", "17:1: error: scaleout: a supernode has no separate scale-out fabric"},
      {"unknown_key.toml", "11:7: error: node.npu: unknown key (did you mean \"npus\"?)"},
      {"unknown_key_typo.toml",
       "16:15: error: node.link_latncy: unknown key (did you mean \"link_latency\"?)"},
      {"wrong_type.toml", "11:8: error: node.npus: expected an integer, got a string"},
      {"zero_bandwidth.toml", "14:18: error: node.link_bandwidth: must be > 0, got \"0GBps\""},
      {"zero_npus.toml", "11:8: error: node.npus: expected an integer in [1, 4096], got 0"},
  };
  // Every file in bad/ is in the table.
  CHECK(std::distance(std::begin(rows), std::end(rows)) == 17);
  for (const Row& r : rows) {
    std::string path = std::string("tests/topology/bad/") + r.file;
    CAPTURE(path);
    CHECK_THAT(error_of(path), Catch::StartsWith(path + ":" + r.message));
  }
}

TEST_CASE("an unknown preset names the closest one", "[spec][bad]") {
  CHECK_THAT(error_of("a3"), Catch::StartsWith("a3: error: no such platform file or preset (did you mean \"a2\"?), "
                                               "the presets in platforms are a2, a2-nic400"));
}

TEST_CASE("overrides are checked like the file", "[spec][bad]") {
  try {
    load_cluster_spec("a2", {"node.npus=0"});
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) ==
          "--set node.npus=0: error: node.npus: expected an integer in [1, 4096], got 0");
  }
}
