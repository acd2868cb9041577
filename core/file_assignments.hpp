// Key = value tables of a measurement file that change a preset key by key
// (an end-to-end file's [platform_set], [workload_set] and [[slower]]
// workload_set, a kernel table's [platform_set]): read as "key=value"
// assignments, as run's --set takes them, each remembering where its key was
// written, so that an error in one is told at the file's line:column and
// key, never as "--set key=value".
#pragma once

#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/toml_reader.hpp"

namespace epsim {

struct FileAssignment {
  std::string side;        // "platform.", "workload." or "" (a request that takes one side's keys only)
  std::string assignment;  // "node.count=1"; a string value TOML-quoted ("routing.kind=\"zipf\"")
  std::string key;         // the key path in the file: "platform_set.node.count"
  SourceLocation at;       // where the key's value was written
};

// Every key of `table` (its finish() called): a string, number, boolean or
// array of strings (else InputError at the key); a string holding a line break or another
// control character is refused at the key, in one line. `side` is kept in each.
std::vector<FileAssignment> read_assignments(TableReader& table, const std::string& side);

// The assignments' text with their side, in order, as a request's overrides take them.
std::vector<std::string> assignment_texts(const std::vector<FileAssignment>& assignments);

// Throws `e` told at the assignment it came from: an error whose source is
// "--set <assignment>" or "--set <side><assignment>" for one of
// `assignments` becomes "<file>:<line>:<col>: error: <key>: <problem>";
// any other error is thrown as it is.
[[noreturn]] void rethrow_at_assignment(const InputError& e, const std::vector<FileAssignment>& assignments);

}  // namespace epsim
