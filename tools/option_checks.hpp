// Range checks for numeric command-line options, as CLI11 validators whose
// message completes "epsim: error: --ep: " in one line, in the words the TOML
// reader uses for the same key ("expected an integer in [1, 65536], got 0").
#pragma once

#include <CLI/CLI.hpp>

namespace epsim::tools {

// An integer in [min, max].
CLI::Validator integer_in(long long min, long long max);
// An integer >= min.
CLI::Validator integer_at_least(long long min);
// A finite number > 0 (rates, sizes).
CLI::Validator positive_number();

}  // namespace epsim::tools
