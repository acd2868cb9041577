#!/usr/bin/env bash
# Quick start, second command: installs/builds as needed, then runs every test.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${EPSIM_BUILD_DIR:-$root/build}"
EPSIM_BUILD_DIR="$build" bash "$root/tools/build.sh"
cd "$build"
ctest --output-on-failure -j "$(nproc)"
