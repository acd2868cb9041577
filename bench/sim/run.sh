#!/bin/sh
# Medians over 5 runs of the DeepSeek-V3 training step on A2, as recorded
# in docs/performance.md ("Replay"):
#   replay  bench_replay --ep N: CPU and wall seconds of simulate() alone
#           (platform, bounds, replay, report; the routing and task graph are
#           built before the clock starts), SimGrid activities, peak RSS;
#   growth  the same at EP64 with fewer layers and more micro-batches;
#   run     `epsim run` end to end under /usr/bin/time -v (sampling, graph,
#           replay, report): wall, user + system CPU, maximum resident set,
#           at EP64 and EP256 with uniform routing;
#   zipf    the same at EP256 with zipf routing (s = 1, hottest experts first).
# Every part line ends with the 1-minute load average when it finished
# (other jobs on the machine inflate wall time: quote CPU time then).
# Usage: bench/sim/run.sh BUILD_DIR [replay|growth|run|zipf]...  (default: all four)
build="${1:-build}"
shift
parts="${*:-replay growth run zipf}"
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
  for i in 1 2 3 4 5; do "$bench" "$@"; done | median | tr -d '\n'
  echo " load=$(load)"
}
load() { cut -d" " -f1 /proc/loadavg; }
# epsim run at EP $1 (further arguments: overrides), medians of 5.
end_to_end() {
  ep=$1
  shift
  for i in 1 2 3 4 5; do
    /usr/bin/time -v "$epsim" run --platform a2 --workload deepseek-v3 --ep $ep \
      --set platform.node.count=$((ep / 8)) "$@" 2>&1 >/dev/null |
      awk -F': ' '/Elapsed \(wall/ {w=$2} /User time/ {u=$2} /System time/ {s=$2} /Maximum resident/ {m=$2}
                  END {split(w, a, ":"); print (a[1] * 60 + a[2]), u + s, m / 1024}'
  done | python3 -c '
import statistics, sys
rows = [list(map(float, line.split())) for line in sys.stdin]
med = lambda i: statistics.median(r[i] for r in rows)
print("epsim run ep=%s %s: wall_s=%.2f cpu_s=%.2f max_rss_MB=%.0f" % (sys.argv[1], " ".join(sys.argv[2:]), med(0), med(1), med(2)), end=" ")
' "$ep" "$@"
  echo "load=$(load)"
}
for part in $parts; do
  case "$part" in
    replay)
      for ep in 8 16 32 64 128 256; do replay --ep $ep; done ;;
    growth)
      for layers in 13 31 61; do replay --ep 64 --set model.layers=$layers; done
      for mb in 1 4 8; do replay --ep 64 --set parallel.micro_batches=$mb; done ;;
    run)
      end_to_end 64 && end_to_end 256 ;;
    zipf)
      end_to_end 256 --set routing.kind=zipf --set routing.zipf_s=1.0 ;;
    *) echo "unknown part $part (replay, growth or run)" >&2; exit 2 ;;
  esac
done
