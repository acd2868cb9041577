#!/usr/bin/env bash
# End-to-end tests of `epsim sweep` as a user runs it: real points, real
# processes, SIGKILL at random moments, a real local Slurm.
#   sweep_e2e.sh EPSIM_BIN CASE [BUILD_DIR]    CASE: failing | jobs | resume | slurm (needs BUILD_DIR) | plots
set -euo pipefail
epsim="$1"
case_name="$2"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/epsim-sweep-$case_name.XXXXXX")"
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# Prints "key<TAB>status<TAB>result" per point, sorted: what must not depend
# on -j, on interruptions or on the order of appends (wall time excluded).
canonical() {
  /usr/bin/python3 - "$1" <<'PY'
import json, sys
latest = {}
for line in open(sys.argv[1], encoding="utf-8"):
    if line.endswith("\n") and line.strip():
        r = json.loads(line)
        latest[r["key"]] = r
for key in sorted(latest):
    r = latest[key]
    print(key, r["status"], json.dumps(r.get("result"), sort_keys=True), sep="\t")
PY
}

# A small EP sweep on the A2 preset: DeepSeek-V3 cut to a few layers.
write_spec() {
  cat > "$1" <<SPEC
schema_version = 1
[base]
platform = "a2"
workload = "deepseek-v3"
set = ["workload.model.layers=$2"]
[[axis]]
key = "workload.parallel.ep"
values = [8, 16, 32]
[[axis]]
key = "platform.node.count"
values = [1, 2, 4]
zip_with = "workload.parallel.ep"
[[axis]]
key = "schedule"
values = ["serial", "overlap"]
SPEC
}

case "$case_name" in
  failing)
    # ep=64 cannot split tiny-moe's 32 experts: rejected before running, at
    # the spec's ep entry (line 10), not at the first axis. A SimGrid XML with one node cannot hold 4 ranks at 2
    # per node: the pre-check probes the XML and rejects that point too. The
    # others complete (with --keep-going) and the exit code says some failed.
    cat > "$work/spec.toml" <<SPEC
schema_version = 1
[base]
platform = "a2"
workload = "tiny-moe"
[[axis]]
key = "platform"
values = ["a2", "$root/tests/sim/platforms/mesh4.xml", "a2-nic400"]
[[axis]]
key = "workload.parallel.ep"
values = [4, 64]
SPEC
    # Without --keep-going the first bad point refuses the whole sweep: one
    # line, exit 2, nothing run or recorded.
    set +e
    "$epsim" sweep "$work/spec.toml" -j 2 -q 2> "$work/err"
    rc=$?
    set -e
    [ "$rc" -eq 2 ] || fail "exit code $rc without --keep-going, expected 2"
    [ "$(wc -l < "$work/err")" -eq 1 ] || { cat "$work/err"; fail "expected one line"; }
    grep -q 'spec.toml:10:14: error: point 1 (platform="a2", workload.parallel.ep=64): .*not divisible.*(and 3 more bad points' \
      "$work/err" || { cat "$work/err"; fail "no located refusal at point 1"; }
    [ ! -s "$work/spec.results.jsonl" ] || fail "a refused sweep recorded results"
    set +e
    "$epsim" sweep "$work/spec.toml" -j 2 -q --keep-going 2> "$work/err"
    rc=$?
    set -e
    [ "$rc" -eq 1 ] || fail "exit code $rc, expected 1"
    grep -q 'spec.toml:10:14: point 1 (platform="a2", workload.parallel.ep=64): .*not divisible' "$work/err" \
      || { cat "$work/err"; fail "no located error for point 1"; }
    canonical "$work/spec.results.jsonl" > "$work/c"
    [ "$(grep -c $'\tok\t' "$work/c")" -eq 2 ] || fail "expected 2 ok points"
    [ "$(grep -c $'\tfailed\t' "$work/c")" -eq 4 ] || fail "expected 4 failed points"
    /usr/bin/python3 - "$work/spec.results.jsonl" <<'PY' || fail "XML placement failure not recorded with its location"
import json, sys
errors = [json.loads(l).get("error", "") for l in open(sys.argv[1]) if '"point":2,' in l]
want = "placement: 4 ranks at 2 per node need 2 nodes; the platform has 1"
sys.exit(0 if any("spec.toml:7:17: point 2 (platform=" in e and want in e for e in errors) else 1)
PY
    "$epsim" sweep collect "$work/spec.toml" > "$work/out" 2> "$work/err" && fail "collect should exit non-zero"
    grep -q "6 points: 2 ok, 4 failed, 0 missing" "$work/out" || fail "collect summary: $(cat "$work/out")"
    ;;

  jobs)
    # Results are identical whatever -j is.
    write_spec "$work/a.toml" 5
    cp "$work/a.toml" "$work/b.toml"
    "$epsim" sweep "$work/a.toml" -j 1 -q --csv "$work/a.csv"
    "$epsim" sweep "$work/b.toml" -j 2 -q --csv "$work/b.csv"
    canonical "$work/a.results.jsonl" > "$work/ca"
    canonical "$work/b.results.jsonl" > "$work/cb"
    [ "$(grep -c $'\tok\t' "$work/ca")" -eq 6 ] || fail "expected 6 ok points"
    cmp "$work/ca" "$work/cb" || fail "-j 1 and -j 2 differ"
    # The CSV differs only in the wall-time column (the last one).
    cmp <(cut -d, -f1-$(( $(head -1 "$work/a.csv" | tr ',' '\n' | wc -l) - 1 )) "$work/a.csv") \
        <(cut -d, -f1-$(( $(head -1 "$work/b.csv" | tr ',' '\n' | wc -l) - 1 )) "$work/b.csv") || fail "CSV differs"
    head -1 "$work/a.csv" | grep -q "^point,workload.parallel.ep,platform.node.count,schedule,status,.*step.sim_s" || fail "CSV header"
    ;;

  resume)
    # SIGKILL the whole sweep (driver and workers) at random moments, then
    # rerun: no finished point is lost, none is run twice, and the results
    # equal an uninterrupted sweep's.
    # 18 points of ~0.2 s, so that most kills land mid-sweep.
    write_spec "$work/ref.toml" 20
    printf '[[axis]]\nkey = "seed"\nvalues = [1, 2, 3]\n' >> "$work/ref.toml"
    "$epsim" sweep "$work/ref.toml" -j 2 -q
    cp "$work/ref.toml" "$work/spec.toml"
    ok_count() {
      if [ -f "$work/spec.results.jsonl" ]; then grep -c '"status":"ok"' "$work/spec.results.jsonl" || true; else echo 0; fi
    }
    RANDOM=42
    before=0
    for attempt in $(seq 1 8); do
      setsid "$epsim" sweep "$work/spec.toml" -j 2 -q 2>/dev/null &
      pid=$!
      sleep "0.$(( RANDOM % 9 + 1 ))"
      kill -9 -- "-$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
      now=$(ok_count)
      [ "$now" -ge "$before" ] || fail "finished points lost: $before -> $now"
      before=$now
    done
    "$epsim" sweep "$work/spec.toml" -j 2 -q 2> "$work/err"
    grep -q "18 points, $before finished earlier, $(( 18 - before )) to run" "$work/err" \
      || fail "rerun should skip the $before finished points: $(cat "$work/err")"
    [ "$(ok_count)" -eq 18 ] || fail "$(ok_count) ok records for 18 points: a finished point was run twice"
    cmp <(canonical "$work/ref.results.jsonl") <(canonical "$work/spec.results.jsonl") \
      || fail "results differ from an uninterrupted sweep"
    echo "$before of 18 points finished across 8 kills"
    ;;

  slurm)
    # A job array on a real single-node Slurm, emitted and run by an installed
    # copy (`cmake --install`), as on a cluster where epsim is installed: the
    # spec named by a relative path, the script carrying the installed epsim,
    # its presets (EPSIM_DATA_DIR), --mem, the partition and the account.
    build="${3:?slurm needs the build folder}"
    eval "$(bash "$root/tests/tools/local_slurm.sh" start "$work/slurm")"
    trap 'bash "$root/tests/tools/local_slurm.sh" stop "$work/slurm"; rm -rf "$work"' EXIT
    cmake --install "$build" --prefix "$work/prefix" >/dev/null
    installed="$work/prefix/bin/epsim"
    write_spec "$work/spec.toml" 5
    cd "$work"
    "$installed" sweep spec.toml --emit-slurm array.sbatch --slurm-partition debug --slurm-account epsimtest 2> err \
      || fail "emit: $(cat err)"
    for line in "#SBATCH --array=0-5" "#SBATCH --mem=512M" "#SBATCH --partition=debug" "#SBATCH --account=epsimtest" \
                "#SBATCH --chdir=$work" "epsim=\${EPSIM:-'$installed'}" \
                "export EPSIM_DATA_DIR=\${EPSIM_DATA_DIR:-'$work/prefix/share/epsim'}"; do
      grep -qxF -- "$line" array.sbatch || fail "no line [$line] in: $(cat array.sbatch)"
    done
    ! grep -q "$build\|$root" array.sbatch || fail "the script names the build or source tree: $(cat array.sbatch)"
    timeout 300 sbatch --wait array.sbatch > /dev/null || fail "job array failed: $(cat "$work"/*.out 2>/dev/null)"
    "$installed" sweep collect spec.toml > out || fail "collect: $(cat out)"
    grep -q "6 points: 6 ok, 0 failed, 0 missing" out || fail "collect summary: $(cat out)"
    cp spec.toml local.toml
    "$epsim" sweep local.toml -j 2 -q
    cmp <(canonical spec.results.jsonl) <(canonical local.results.jsonl) || fail "Slurm and local results differ"
    # Nothing left to submit.
    "$installed" sweep spec.toml --emit-slurm again.sbatch 2> err
    grep -q "nothing to submit" err || fail "resubmission: $(cat err)"
    ;;

  plots)
    write_spec "$work/spec.toml" 5
    "$epsim" sweep "$work/spec.toml" -j 2 -q
    "$epsim" run --platform a2 --workload deepseek-v3 --ep 8 --set model.layers=5 --set platform.node.count=1 \
      --trace "$work/trace.json" > /dev/null 2>&1
    /usr/bin/python3 "$root/tools/plot_sweep.py" "$work/spec.results.jsonl" --trace "$work/trace.json" > /dev/null
    for name in step_time ratio phases throughput timeline; do
      for ext in png svg; do
        [ -s "$work/$name.$ext" ] || fail "$name.$ext not written"
      done
    done
    ;;

  *) fail "unknown case $case_name" ;;
esac
echo "ok: $case_name"
