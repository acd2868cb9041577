#!/bin/sh
# Production-scale steps straight from `epsim run`, as recorded in
# docs/performance.md ("Production scale in one command"): wall, user +
# system CPU and peak RSS under /usr/bin/time, medians of RUNS (default 5),
# each line ending with the 1-minute load average (other jobs inflate wall
# time: quote CPU time then).
#   production  deepseek-v3-production on 2,048 H800 (PP16 DualPipe, EP64, DP128)
#   tp2         DeepSeek-V3 on 1,024 H800: TP2 PP8 VPP4 EP64, 128 micro-batches
#   a2-8192     deepseek-v3-pp8 at DP1024 on 1,024 A2 nodes (8,192 NPUs)
# Usage: bench/e2e/run.sh BUILD_DIR [production|tp2|a2-8192]...  (default: all three)
build="${1:-build}"
shift
cases="${*:-production tp2 a2-8192}"
runs="${RUNS:-5}"
epsim="$build/tools/epsim"
median() {  # "wall user sys rss" lines on stdin -> medians
  python3 -c '
import statistics, sys
rows = [list(map(float, l.split())) for l in sys.stdin if l.strip()]
m = [statistics.median(c) for c in zip(*rows)]
print("wall_s=%.2f cpu_s=%.2f peak_rss_MB=%.0f runs=%d" % (m[0], m[1] + m[2], m[3] / 1024, len(rows)))
'
}
time_case() {
  name=$1
  shift
  for i in $(seq "$runs"); do
    /usr/bin/time -f "%e %U %S %M" -o /tmp/epsim-bench-e2e.$$ "$epsim" run -q "$@" > /tmp/epsim-bench-e2e-out.$$ || exit 1
    cat /tmp/epsim-bench-e2e.$$
  done | median | tr -d '\n'
  step=$(grep -m1 "^  step " /tmp/epsim-bench-e2e-out.$$ | awk '{print $2, $3}')
  tps=$(grep -m1 "tokens/s " /tmp/epsim-bench-e2e-out.$$ | sed 's/.*, \([0-9.]*\) per NPU.*/\1/')
  echo " $name step=\"$step\" tokens_per_s_per_npu=$tps load=$(cut -d' ' -f1 /proc/loadavg)"
  rm -f /tmp/epsim-bench-e2e.$$ /tmp/epsim-bench-e2e-out.$$
}
for c in $cases; do
  case "$c" in
    production) time_case production --platform h800 --set platform.node.count=256 --workload deepseek-v3-production ;;
    tp2) time_case tp2 --platform h800 --set platform.node.count=128 --workload deepseek-v3-production \
           --set parallel.tp=2 --set parallel.pp=8 --set parallel.vpp=4 --set parallel.schedule=interleaved \
           --set parallel.dp=64 --set parallel.micro_batches=128 ;;
    a2-8192) time_case a2-8192 --platform a2 --set node.count=1024 --workload deepseek-v3-pp8 --set parallel.dp=1024 ;;
    *) echo "bench/e2e/run.sh: unknown case $c" >&2; exit 2 ;;
  esac
done
