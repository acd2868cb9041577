#!/usr/bin/env bash
# Installs what is missing, then configures and builds epsim.
#   EPSIM_BUILD_DIR  build directory (default: build)
#   EPSIM_SANITIZE   ON to build with -fsanitize=address,undefined (default: OFF)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${EPSIM_BUILD_DIR:-$root/build}"
sanitize="${EPSIM_SANITIZE:-OFF}"

bash "$root/tools/install_deps.sh"
cmake -S "$root" -B "$build" -DEPSIM_SANITIZE="$sanitize" >/dev/null
cmake --build "$build" -j "$(nproc)"
