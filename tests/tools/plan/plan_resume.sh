#!/usr/bin/env bash
# A plan killed while it simulates and run again with the same arguments
# continues from its finished simulations (the results file, docs/plan.md
# "Interrupted and resumed") and prints the same ranking as a plan that was
# never interrupted; a third run simulates nothing; an input file changed in
# a comment only keys another results file (nothing stale is reused).
# Usage: plan_resume.sh <epsim>, from the project root.
set -u
epsim="$1"
fail() { echo "FAIL: $*"; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache"
cp workloads/presets/tiny-moe.toml "$tmp/wl.toml"
plan=(plan --platform a2 --set node.count=2 --workload "$tmp/wl.toml" --set parallel.sequence_length=2050
      --set model.hidden=2048 --set model.expert_ffn=1024 --set model.dense_ffn=4096 -j 1 --top 40)
# Everything but the counts line, which says how many were found earlier.
ranking() { grep -v '^  layouts ' "$1"; }

"$epsim" "${plan[@]}" --max-candidates 100 --results none -q >"$tmp/reference" || fail "the reference plan failed"
[ ! -e "$XDG_CACHE_HOME/epsim" ] || fail "--results none wrote $XDG_CACHE_HOME/epsim"

"$epsim" "${plan[@]}" --max-candidates 100 -q >/dev/null 2>&1 &
pid=$!
results=""
for _ in $(seq 1 600); do  # up to 60 s for 5 finished simulations
  results="$(ls "$XDG_CACHE_HOME"/epsim/plan/*.jsonl 2>/dev/null | head -1)"
  [ -n "$results" ] && [ "$(wc -l <"$results")" -ge 5 ] && break
  sleep 0.1
done
# bash reports the killed job on its own stderr when it reaps it: keep that out of the test's output.
{ kill -9 "$pid"; wait "$pid"; } 2>/dev/null
[ -n "$results" ] || fail "no results file under $XDG_CACHE_HOME/epsim/plan"
done_before="$(grep -c '"status":"ok"' "$results")"
[ "$done_before" -ge 5 ] || fail "only $done_before simulations recorded before the kill"
[ "$done_before" -lt 100 ] || fail "the plan finished before it was killed ($done_before records)"

"$epsim" "${plan[@]}" --max-candidates 100 >"$tmp/resumed" 2>"$tmp/resumed.err" || fail "the resumed plan failed: $(tail -1 "$tmp/resumed.err")"
grep -q "^epsim plan: results in $results ($done_before finished earlier)$" "$tmp/resumed.err" ||
  fail "the resumed plan did not say it found $done_before: $(grep 'results in' "$tmp/resumed.err")"
grep -q "found by an earlier plan" "$tmp/resumed.err" || fail "no layout was taken from the results file"
diff <(ranking "$tmp/reference") <(ranking "$tmp/resumed") >/dev/null || fail "the resumed ranking differs from the reference"
simulated="$(grep -o '[0-9]* simulated' "$tmp/reference" | head -1 | cut -d' ' -f1)"
grep -q "^  layouts .* $simulated simulated ($done_before of them found by an earlier plan, --results)$" "$tmp/resumed" ||
  fail "the resumed counts line: $(grep '^  layouts' "$tmp/resumed")"

"$epsim" "${plan[@]}" --max-candidates 100 -q >"$tmp/third" || fail "the third plan failed"
grep -q "^  layouts .* $simulated simulated ($simulated of them found by an earlier plan, --results)$" "$tmp/third" ||
  fail "the third plan simulated again: $(grep '^  layouts' "$tmp/third")"
diff <(ranking "$tmp/reference") <(ranking "$tmp/third") >/dev/null || fail "the third ranking differs"

# A larger --max-candidates keys the same file: the 100 first layouts' steps are reused, only the rest simulated.
"$epsim" "${plan[@]}" --max-candidates 110 >/dev/null 2>"$tmp/more.err" || fail "the larger plan failed"
grep -q "^epsim plan: results in $results ($simulated finished earlier)$" "$tmp/more.err" ||
  fail "a larger --max-candidates did not reuse: $(grep 'results in' "$tmp/more.err")"
[ "$(grep -c 'found by an earlier plan' "$tmp/more.err")" -ge 1 ] || fail "a larger --max-candidates reused nothing"

# A comment changed in the workload: another digest, another file, nothing reused.
echo "# changed" >>"$tmp/wl.toml"
"$epsim" "${plan[@]}" --max-candidates 1 >/dev/null 2>"$tmp/changed.err" || fail "the changed plan failed: $(tail -1 "$tmp/changed.err")"
grep -q "results in .* (0 finished earlier)$" "$tmp/changed.err" || fail "a changed input reused: $(grep 'results in' "$tmp/changed.err")"
[ "$(ls "$XDG_CACHE_HOME"/epsim/plan/*.jsonl | wc -l)" -eq 2 ] || fail "a changed input did not key another results file"
echo "ok: killed after $done_before of $simulated simulations, resumed to the same ranking, then nothing simulated again"
