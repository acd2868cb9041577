#include <catch2/catch.hpp>

#include <limits>

#include "core/error.hpp"
#include "core/json_output.hpp"

using epsim::dump_checked;
using epsim::InternalError;
using epsim::require_finite;

TEST_CASE("dump_checked prints finite documents as they are", "[json_output]") {
  nlohmann::ordered_json j;
  j["step"] = {{"sim_s", 1.5}, {"ranks", 8}};
  REQUIRE(dump_checked(j, "report", -1) == "{\"step\":{\"sim_s\":1.5,\"ranks\":8}}\n");
}

TEST_CASE("a non-finite number is an internal error naming its JSON pointer", "[json_output]") {
  nlohmann::ordered_json j;
  j["step"] = {{"sim_s", 1.0}, {"bound_s", std::numeric_limits<double>::infinity()}};
  REQUIRE_THROWS_MATCHES(dump_checked(j, "report"), InternalError,
                         Catch::Message("report: non-finite number at /step/bound_s"));
  nlohmann::json rows;
  rows["phases"] = nlohmann::json::array({1.0, 2.0, std::numeric_limits<double>::quiet_NaN()});
  REQUIRE_THROWS_MATCHES(require_finite(rows, "sweep record"), InternalError,
                         Catch::Message("sweep record: non-finite number at /phases/2"));
  REQUIRE_THROWS_MATCHES(require_finite(nlohmann::json(-std::numeric_limits<double>::infinity()), "bounds"),
                         InternalError, Catch::Message("bounds: non-finite number at /"));
}
