#!/bin/sh
# Medians over 7 runs of bench_platform for 1024-NPU platforms (and the
# CloudMatrix384 preset), as recorded in docs/performance.md.
# Usage: bench/topology/run.sh BUILD_DIR
build="${1:-build}"
bench="$build/bench/topology/bench_platform"
run() {
  for i in 1 2 3 4 5 6 7; do "$bench" "$@"; done | python3 -c '
import sys, statistics
rows = [dict(kv.split("=") for kv in line.split()) for line in sys.stdin]
keys = ["npus", "routes", "graph_s", "plan_s", "xml_write_s", "load_s", "total_s", "route_lookups_10k_s", "checks_s"]
print(" ".join(k + "=" + (rows[0][k] if k in ("npus", "routes") else "%.4f" % statistics.median(float(r[k]) for r in rows)) for k in keys))
'
}
for mode in build xml; do
  echo "a2 x128 nodes ($mode):";  run $mode a2 node.count=128
  echo "h800 x128 nodes ($mode):"; run $mode h800 node.count=128
  echo "cloudmatrix384 ($mode):"; run $mode cloudmatrix384
done
