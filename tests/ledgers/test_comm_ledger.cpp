// Seed 001 (comm_ledger.py): its printed rows at the defaults, other
// parameter sets, and bad input. Expected strings come from the seed's own
// formulas re-typed in python3 (see docs/bounds.md), never from epsim.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "ledgers/comm_ledger.hpp"
#include "ledgers/report.hpp"

using namespace epsim::ledgers;

namespace {
struct Expected {
  CommLedgerOptions options;
  std::vector<std::string> lines;  // must each appear verbatim in the text
};

bool contains_line(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}
}  // namespace

TEST_CASE("bounds: comm ledger reproduces seed 001's rows", "[bounds][comm]") {
  // python3: comm_ledger.py's payload_bytes/ledger/human with the seed's
  // format strings, run with each option set below.
  std::vector<Expected> cases = {
      {{},
       {" dispatch: 7,464 B/token (hidden 7,168 + sf 224 + idx 48 + w 24)",
        " combine : 14,360 B/token (bf16 hidden 14,336 + w 24)",
        "   8        32        4.410          72,248       514.3 MB       989.4 MB",
        "  16        16        5.137          84,165       599.1 MB         1.1 GB",
        "  32         8        5.550          90,937       647.3 MB         1.2 GB",
        "  64         4        5.770          94,543       673.0 MB         1.3 GB",
        " 128         2        5.884          96,404       686.2 MB         1.3 GB"}},
      {{4096, 8, 128, 4096, 61, false},
       {" dispatch: 4,320 B/token (hidden 4,096 + sf 128 + idx 64 + w 32)",
        " combine : 8,224 B/token (bf16 hidden 8,192 + w 32)",
        "   8        16        5.251          21,509        88.6 MB       168.7 MB",
        "  16         8        6.452          26,429       108.9 MB       207.3 MB",
        "  32         4        7.178          29,399       121.1 MB       230.6 MB",
        "  64         2        7.576          31,031       127.8 MB       243.4 MB",
        " 128         1        7.785          31,886       131.4 MB       250.1 MB"}},
      {{7168, 6, 256, 16384, 61, true},
       {" dispatch: 14,408 B/token (hidden 14,336 + sf 0 + idx 48 + w 24)",
        "   8        32        4.410          72,248       992.7 MB       989.4 MB",
        " 128         2        5.884          96,404         1.3 GB         1.3 GB"}},
      {{100, 2, 1024, 1, 3, false},
       {" dispatch: 128 B/token (hidden 100 + sf 4 + idx 16 + w 8)",
        " combine : 208 B/token (bf16 hidden 200 + w 8)",
        "   8       128        1.875               2        240.0 B        390.0 B",
        " 128         8        1.992               2        255.0 B        414.4 B"}},
  };
  for (const Expected& c : cases) {
    std::string text = render_text(comm_ledger(c.options));
    for (const std::string& line : c.lines) {
      INFO(text);
      CHECK(contains_line(text, line));
    }
  }
}

TEST_CASE("bounds: comm ledger --layers aggregation", "[bounds][comm]") {
  // python3: human(total * layers), human(total * layers * 5) of the seed.
  struct Case { CommLedgerOptions options; std::string per_rank; std::string all_rows; };
  std::vector<Case> cases = {
      {{}, "1.8 GB", "8.9 GB"},
      {{4096, 8, 128, 4096, 61, false}, "20.0 GB", "99.9 GB"},
      {{7168, 6, 256, 16384, 61, true}, "143.3 GB", "716.3 GB"},
      {{100, 2, 1024, 1, 3, false}, "1.9 KB", "9.6 KB"},
  };
  for (const Case& c : cases) {
    std::string text = render_text(comm_ledger(c.options));
    INFO(text);
    CHECK(text.find("per rank about " + c.per_rank + " =") != std::string::npos);
    CHECK(text.find("summed over the EP rows about " + c.all_rows + " =") != std::string::npos);
  }
}

TEST_CASE("bounds: comm ledger raw figures", "[bounds][comm]") {
  CommLedger l = comm_ledger({});
  REQUIRE(l.rows.size() == 5);
  // python3: 8*(1-(1-1/8)**6) and 128*(1-(1-1/128)**6), repr()
  CHECK(l.rows[0].distinct_ranks == Approx(4.409637451171875).epsilon(1e-15));
  CHECK(l.rows[4].distinct_ranks == Approx(5.884026072890265).epsilon(1e-15));
  CHECK(l.rows[0].recv_tokens == Approx(16384 * 4.409637451171875).epsilon(1e-15));
  CHECK(l.rows[0].dispatch_bytes == Approx(16384 * 4.409637451171875 * 7464).epsilon(1e-15));
  CHECK(l.payload.dispatch_bytes == 7464);
  CHECK(l.payload.combine_bytes == 14360);
  CHECK(expected_distinct_ranks(1, 6) == Approx(1.0));
  CHECK(expected_distinct_ranks(1000000, 1) == Approx(1.0));
}

TEST_CASE("bounds: comm ledger rejects bad input naming the field", "[bounds][comm][errors]") {
  struct Case { CommLedgerOptions options; std::string message; };
  std::vector<Case> cases = {
      {{0, 6, 256, 16384, 1, false}, "error: hidden: expected an integer >= 1, got 0"},
      {{7168, -1, 256, 16384, 1, false}, "error: topk: expected an integer >= 1, got -1"},
      {{7168, 6, 0, 16384, 1, false}, "error: experts: expected an integer >= 1, got 0"},
      {{7168, 6, 256, 0, 1, false}, "error: tokens: expected an integer >= 1, got 0"},
      {{7168, 6, 256, 16384, 0, false}, "error: layers: expected an integer >= 1, got 0"},
      {{7168, 300, 256, 16384, 1, false}, "error: topk: must be <= experts (256), got 300"},
      {{7168, 6, 192, 16384, 1, false},
       "error: experts: must be divisible by every EP size of the table (8..128), got 192 (not divisible by 128)"},
      {{7168, 6, 256, 4000000000000000000, 1, false},
       "error: tokens: too large: the per-rank bytes would overflow a 64-bit count"},
      {{7168, 6, 256, 16384, 4000000000000000000, false},
       "error: layers: too large: the aggregated bytes would overflow a 64-bit count"},
      {{4000000000000000000, 6, 256, 16384, 1, false},
       "error: hidden: too large: the per-token payload would overflow a 64-bit count"},
  };
  for (const Case& c : cases) {
    CHECK_THROWS_WITH(comm_ledger(c.options), c.message);
  }
}
