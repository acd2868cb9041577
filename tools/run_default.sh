#!/usr/bin/env bash
# Quick start, first command: installs/builds as needed, then runs the main
# job on the bundled default scenario: one DeepSeek-V3 training step in a
# layout that fits the NPUs' 64 GB (deepseek-v3-pp8: PP8 x VPP2, EP32, DP32,
# full recomputation, ZeRO-1) on 32 Atlas 800T A2 nodes (256 Ascend 910B),
# simulated on SimGrid, printed beside its bounds with throughput, MFU and
# the memory per rank, with a Perfetto trace in <build>/epsim-trace.json. Extra arguments go to
# `epsim run` (e.g. --schedule serial, --json, --set routing.kind=zipf).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${EPSIM_BUILD_DIR:-$root/build}"
EPSIM_BUILD_DIR="$build" bash "$root/tools/build.sh"
cd "$root"
exec "$build/tools/epsim" run --platform a2 --set node.count=32 --workload deepseek-v3-pp8 --trace "$build/epsim-trace.json" "$@"
