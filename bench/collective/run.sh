#!/bin/sh
# Wall time and peak RSS of `epsim collective` at scale, medians over REPS
# runs (default 5) under /usr/bin/time -v, as recorded in
# docs/performance.md ("epsim collective"). One all-to-all of 1 GB per rank
# on one switch of 1024 ports, the same on 128 A2 nodes (hierarchical, as
# run chooses), and alltoallv of 4096 tokens per rank drawn uniform and zipf
# (DeepSeek-V3's top-8 shape over 1024 experts) on the 128 A2 nodes.
# 4096-NPU cases (CASES=4096) are listed for completeness; see the doc for
# why they are not run by default.
# ONLY=TEXT runs the cases whose name contains TEXT.
# Usage: bench/collective/run.sh BUILD_DIR
set -eu
build="${1:-build}"
epsim="$build/tools/epsim"
reps="${REPS:-5}"
here="$(dirname "$0")"
switch="$here/../../tests/tools/collective/single_switch.toml"
run() {
  name="$1"; shift
  case "$name" in *"${ONLY:-}"*) ;; *) return 0 ;; esac
  i=0
  while [ "$i" -lt "$reps" ]; do
    /usr/bin/time -v "$epsim" collective "$@" 2>&1 >/dev/null |
      awk '/Elapsed \(wall clock\)/ {n = split($NF, t, ":"); s = 0; for (k = 1; k <= n; ++k) s = s * 60 + t[k]; w = s}
           /User time/ {u = $NF} /Maximum resident/ {m = $NF} END {print w, u, m}'
    i=$((i + 1))
  done | python3 -c '
import sys, statistics
rows = [list(map(float, line.split())) for line in sys.stdin]
print("%-44s wall_s=%.2f user_s=%.2f peak_rss_MB=%.0f (medians of %d)" % (sys.argv[1],
      statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows),
      statistics.median(r[2] for r in rows) / 1024, len(rows)))
' "$name"
}
v="--op alltoallv --tokens 4096 --fidelity aggregated"
if [ "${CASES:-1024}" = 4096 ]; then
  run "alltoall 1GB, one switch, 4096 NPUs" --platform "$switch" --set node.npus=4096 --npus 4096 --sizes 1GB
  run "alltoallv uniform, a2 x512, 4096 NPUs" --platform a2 --set node.count=512 --npus 4096 $v --experts 4096
  run "alltoallv zipf, a2 x512, 4096 NPUs" --platform a2 --set node.count=512 --npus 4096 $v --experts 4096 \
    --routing zipf --set routing.zipf_s=1
  exit 0
fi
run "alltoall 1GB, one switch, 1024 NPUs" --platform "$switch" --set node.npus=1024 --npus 1024 --sizes 1GB
run "alltoall 1GB, a2 x128 (hierarchical), 1024 NPUs" --platform a2 --set node.count=128 --npus 1024 --sizes 1GB
run "alltoallv uniform, a2 x128, 1024 NPUs" --platform a2 --set node.count=128 --npus 1024 $v --experts 1024
run "alltoallv zipf, a2 x128, 1024 NPUs" --platform a2 --set node.count=128 --npus 1024 $v --experts 1024 --routing zipf \
  --set routing.zipf_s=1
