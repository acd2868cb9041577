// Number formatting of the bounds reports against Python's format specs
// (expected strings produced by python3 with the same spec).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "ledgers/format.hpp"

using namespace epsim::ledgers;

TEST_CASE("bounds: human_1024 matches seed 001's human()", "[bounds][format]") {
  struct Case { double bytes; std::string text; };
  // python3: human(n) from comm_ledger.py
  std::vector<Case> cases = {
      {0.0, "0.0 B"},
      {1023.0, "1,023.0 B"},
      {1024.0, "1.0 KB"},
      {539266932.0, "514.3 MB"},
      {1037474796.0, "989.4 MB"},
      {1073741824.0, "1.0 GB"},
      {1.5 * 1099511627776.0, "1.5 TB"},
      {2048.0 * 1099511627776.0, "2,048.0 TB"},
  };
  for (const Case& c : cases) {
    INFO(c.bytes);
    CHECK(human_1024(c.bytes) == c.text);
  }
}

TEST_CASE("bounds: grouped and fixed follow Python's {:,.Nf} and {:.Nf}", "[bounds][format]") {
  CHECK(grouped(72248.5, 0) == "72,248");   // python3: f"{72248.5:,.0f}" (round half to even)
  CHECK(grouped(96404.4, 0) == "96,404");
  CHECK(grouped(-1234567.891, 2) == "-1,234,567.89");
  CHECK(grouped(std::int64_t{7464}) == "7,464");
  CHECK(grouped(std::int64_t{224}) == "224");
  CHECK(fixed(28.105, 2) == "28.11");       // python3: f"{28105000000.0/1e9:.2f}"
  CHECK(fixed(0.0, 1) == "0.0");
}

TEST_CASE("bounds: duration_text switches from us to ms at 1 ms", "[bounds][format]") {
  CHECK(duration_text(0.0) == "0.0 us");
  CHECK(duration_text(165.2e-6) == "165.2 us");
  CHECK(duration_text(999.94e-6) == "999.9 us");
  CHECK(duration_text(1e-3) == "1.000 ms");
  CHECK(duration_text(0.090575) == "90.575 ms");
}
