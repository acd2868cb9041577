#!/bin/bash
# The measurements a lent GPU session should take first, as one script
# (the device machine's `run`, about 3 minutes on an H100 or H200): what the
# open mechanisms of docs/validation.md wait for. Everything lands in $OUT
# (default ./device-session): the GPU's clocks and power limit, the dense
# GEMMs of the H200 table with the SM clock and power sampled while each
# runs (gemm_clocks.py: the L2/clock mechanism), and the host's cost per
# kernel and per sync (host_costs.py: framework.host_per_kernel,
# moe_host_sync). No clock, power limit or mode is changed.
#   bash tools/profiling/device_session.sh [--dry-run]
# --dry-run lists the steps and runs what needs no GPU (gemm_clocks.py --dry-run).
set -u
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${OUT:-$PWD/device-session}"
step() {  # name, seconds allowed, command...
  local name=$1 limit=$2
  shift 2
  echo "== $name (at most ${limit} s)"
  if [ "$dry" = 1 ]; then echo "   $*"; return 0; fi
  timeout "$limit" "$@" > "$out/$name.log" 2>&1
  local rc=$?
  echo "   exit $rc; log $out/$name.log"
  tail -n 12 "$out/$name.log"
}
dry=0
[ "${1:-}" = "--dry-run" ] && dry=1
[ "$dry" = 1 ] || mkdir -p "$out"
step gpu 30 nvidia-smi -q -d CLOCK,POWER,PERFORMANCE,TEMPERATURE
step gemm_clocks 300 env OUT="$out" python3 "$here/gemm_clocks.py" "$root/validation/h200-gemm.toml"
step host_costs 120 env OUT="$out" python3 "$here/host_costs.py"
if [ "$dry" = 1 ]; then python3 "$here/gemm_clocks.py" "$root/validation/h200-gemm.toml" --dry-run | tail -n 1; fi
