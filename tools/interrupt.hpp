// SIGINT and SIGTERM end a command cleanly: its temporary output files are
// removed (so every earlier output stays as it was), its forked children die
// with it (PR_SET_PDEATHSIG, core/child_process.hpp), and it exits 130 or
// 143 with one line on stderr: "epsim: interrupted by SIGINT; no partial output left".
#pragma once

#include <string>

namespace epsim::tools {

// Blocks SIGINT and SIGTERM and starts the thread that takes them; called
// once by main before a command runs (before any other thread starts).
void install_interrupt_handlers();

// Registers a temporary file the handlers remove; returns its slot (-1 when
// every slot is taken: the file is then only removed by its owner).
int register_temp_file(const std::string& path);
// The file of `slot` is renamed or removed by its owner: forget it.
void forget_temp_file(int slot);

}  // namespace epsim::tools
