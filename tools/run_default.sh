#!/usr/bin/env bash
# Quick start, first command: installs/builds as needed, then runs the main
# job on the bundled default scenario: one DeepSeek-V3 training step at EP32
# on four Atlas 800T A2 nodes, simulated on SimGrid, printed beside its
# bounds, with a Perfetto trace in <build>/epsim-trace.json. Extra arguments go to
# `epsim run` (e.g. --schedule serial, --json, --set routing.kind=zipf).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${EPSIM_BUILD_DIR:-$root/build}"
EPSIM_BUILD_DIR="$build" bash "$root/tools/build.sh"
cd "$root"
exec "$build/tools/epsim" run --platform a2 --workload deepseek-v3 --ep 32 --trace "$build/epsim-trace.json" "$@"
