#!/bin/sh
# Fixed start-up of epsim against what the shared SimGrid costs by itself,
# as recorded in docs/performance.md ("Start-up"): CPU milliseconds
# (perf stat task-clock, user + system), medians of REPS runs (default 7),
# and the dynamic loader's own statistics (LD_DEBUG=statistics).
#   empty             int main() {}
#   sg-lazy, sg-now   the same linked to libsimgrid (-z lazy / -z now), SimGrid unused
#   sg-bind-now       sg-lazy under LD_BIND_NOW=1 (every symbol bound before main)
#   epsim --help      argument parsing only
#   epsim collective  an 8-NPU all-to-all of 1 MB on one switch (one process, no fork)
# Usage: bench/collective/startup.sh BUILD_DIR
set -eu
build="${1:-build}"
here="$(cd "$(dirname "$0")" && pwd)"
epsim="$build/tools/epsim"
reps="${REPS:-7}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
printf 'int main() { return 0; }\n' > "$tmp/empty.cpp"
printf '#include <simgrid/s4u/Engine.hpp>\nint main(int c, char** v) { if (c > 99) simgrid::s4u::Engine e(&c, v); return 0; }\n' > "$tmp/sg.cpp"
c++ -O2 "$tmp/empty.cpp" -o "$tmp/empty"
c++ -O2 "$tmp/sg.cpp" -o "$tmp/sg-lazy" -Wl,-z,lazy -lsimgrid
c++ -O2 "$tmp/sg.cpp" -o "$tmp/sg-now" -Wl,-z,now -lsimgrid
ms() {  # median task-clock (ms) of the command
  i=0
  while [ "$i" -lt "$reps" ]; do
    perf stat -x, -e task-clock "$@" 2>&1 >/dev/null | grep task-clock | cut -d, -f1
    i=$((i + 1))
  done | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'
}
switch="$here/../../tests/tools/collective/single_switch.toml"
echo "empty            $(ms "$tmp/empty") ms"
echo "sg-lazy          $(ms "$tmp/sg-lazy") ms"
echo "sg-now           $(ms "$tmp/sg-now") ms"
echo "sg-bind-now      $(LD_BIND_NOW=1 ms "$tmp/sg-lazy") ms"
echo "epsim --help     $(ms "$epsim" --help) ms"
echo "epsim collective $(ms "$epsim" collective --platform "$switch" --set node.npus=8 --npus 8 --sizes 1MB) ms"
echo "libraries loaded: $(ldd "$epsim" | wc -l)"
LD_DEBUG=statistics "$tmp/sg-lazy" 2>&1 | grep -E "startup time|time needed for relocation|number of relocations:" | sed 's/^ *[0-9]*:\s*/sg-lazy loader: /'
echo "load $(cut -d' ' -f1 /proc/loadavg)"
