#!/usr/bin/env bash
# Quick start, first command: installs/builds as needed, then runs the main
# job on the bundled default scenario. Extra arguments go to that command.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${EPSIM_BUILD_DIR:-$root/build}"
EPSIM_BUILD_DIR="$build" bash "$root/tools/build.sh"
cd "$root"
exec "$build/tools/epsim" bounds "$@"
