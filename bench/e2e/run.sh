#!/bin/sh
# Wall time, CPU time and peak RSS of DeepSeek-V3's production step as
# epsim predicts it (validation/deepseek-v3-production.py: two `epsim run`s
# of the symmetric reduction per schedule, one after the other), as
# recorded in docs/performance.md ("Production scale"). The peak RSS is
# the largest single `epsim run` (getrusage of the children).
# Usage: bench/e2e/run.sh BUILD_DIR [dualpipe|1f1b]...  (default: dualpipe)
build="${1:-build}"
shift
for schedule in ${*:-dualpipe}; do
  /usr/bin/time -f "$schedule: wall %e s, CPU %U s user + %S s system, peak RSS %M kB (the largest epsim run)" \
    python3 "$(dirname "$0")/../../validation/deepseek-v3-production.py" "$build/tools/epsim" --schedule "$schedule"
done
