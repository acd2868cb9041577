#!/bin/sh
# Medians over 5 runs of the DeepSeek-V3 training step on A2, as recorded
# in docs/performance.md ("Replay"):
#   replay  bench_replay --ep N: CPU and wall seconds of simulate() alone
#           (platform, bounds, replay, report; the routing and task graph are
#           built before the clock starts), SimGrid activities, peak RSS;
#   growth  the same at EP64 with fewer layers and more micro-batches;
#   run     `epsim run` end to end under /usr/bin/time -v (sampling, graph,
#           replay, report): wall, user + system CPU, maximum resident set.
# Usage: bench/sim/run.sh BUILD_DIR [replay|growth|run]...  (default: all three)
build="${1:-build}"
shift
parts="${*:-replay growth run}"
bench="$build/bench/sim/bench_replay"
epsim="$build/tools/epsim"
median() {  # JSON lines on stdin -> one line of medians
  python3 -c '
import json, statistics, sys
rows = [json.loads(line) for line in sys.stdin if line.startswith("{")]
r = rows[0]
med = lambda k: statistics.median(x[k] for x in rows)
print("ep=%d layers=%d micro_batches=%d activities=%d replay_cpu_s=%.3f replay_wall_s=%.3f peak_rss_MB=%.0f step_s=%.6f"
      % (r["ep"], r["layers"], r["micro_batches"], r["activities"], med("replay_cpu_s"), med("replay_wall_s"),
         med("peak_rss_MB"), r["step_s"]))
'
}
replay() {
  for i in 1 2 3 4 5; do "$bench" "$@"; done | median
}
for part in $parts; do
  case "$part" in
    replay)
      for ep in 8 16 32 64 128 256; do replay --ep $ep; done ;;
    growth)
      for layers in 13 31 61; do replay --ep 64 --set model.layers=$layers; done
      for mb in 1 4 8; do replay --ep 64 --set parallel.micro_batches=$mb; done ;;
    run)
      for ep in 64 256; do
        for i in 1 2 3 4 5; do
          /usr/bin/time -v "$epsim" run --platform a2 --workload deepseek-v3 --ep $ep \
            --set platform.node.count=$((ep / 8)) 2>&1 >/dev/null |
            awk -F': ' '/Elapsed \(wall/ {w=$2} /User time/ {u=$2} /System time/ {s=$2} /Maximum resident/ {m=$2}
                        END {split(w, a, ":"); print (a[1] * 60 + a[2]), u + s, m / 1024}'
        done | python3 -c '
import statistics, sys
rows = [list(map(float, line.split())) for line in sys.stdin]
med = lambda i: statistics.median(r[i] for r in rows)
print("epsim run ep='"$ep"': wall_s=%.2f cpu_s=%.2f max_rss_MB=%.0f" % (med(0), med(1), med(2)))
'
      done ;;
    *) echo "unknown part $part (replay, growth or run)" >&2; exit 2 ;;
  esac
done
