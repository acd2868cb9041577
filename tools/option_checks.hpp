// Range checks for command-line options, as CLI11 validators whose message
// completes "epsim: error: --ep: " in one line, in the words the TOML
// reader uses for the same key ("expected an integer in [1, 65536], got 0").
// Every option that takes a number, a size, a choice or a list declares one.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/physical_ranges.hpp"

namespace epsim::tools {

// An integer in [min, max].
CLI::Validator integer_in(long long min, long long max);
// An integer >= min.
CLI::Validator integer_at_least(long long min);
// A finite number in [min, max] (a count such as parameters, 8.03e9).
CLI::Validator number_in(double min, double max);
// A number in `unit_si` SI units per unit written (1e12 for TFLOP/s, 1e9 for
// GB/s) inside the physical range of `kind`.
CLI::Validator physical_number(Physical kind, double unit_si);
// A size with its unit ("16MB", "1GiB") inside the physical range of `kind`.
CLI::Validator size_in(Physical kind);
// One of `allowed`; "" is refused like any other word (an option given
// empty is never its default).
CLI::Validator one_of(std::vector<std::string> allowed);

// A file name: "" is refused ("expected a file name, got \"\""): an option
// given empty never means "not given".
CLI::Validator file_name();
// A Slurm partition or account name: letters, digits and . _ - only (no
// whitespace, newline or shell metacharacter can reach the batch script).
CLI::Validator slurm_name();
// A Slurm time limit in one of sbatch's formats: MINUTES, MINUTES:SECONDS,
// HOURS:MINUTES:SECONDS, DAYS-HOURS, DAYS-HOURS:MINUTES, DAYS-HOURS:MINUTES:SECONDS.
CLI::Validator slurm_time();

// "" when `value` is UTF-8 text, else "\"a2\\xff.toml\" is not UTF-8 text
// (...)": every value may reach a JSON report, which holds UTF-8 only, so
// main refuses such a value up front rather than fail after the run.
std::string utf8_problem(const std::string& value);

// The one list syntax: comma-separated items, none empty, each passing
// `item` ("1MB,,2MB" is refused naming the empty item).
CLI::Validator list_of(CLI::Validator item);
// The items of every occurrence of a list option (after list_of checked them).
std::vector<std::string> list_items(const std::vector<std::string>& values);

// The bytes of a size that size_in checked.
double parse_size(const std::string& text);

}  // namespace epsim::tools
