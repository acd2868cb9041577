#!/usr/bin/env bash
# A second sweep on a results file another sweep is writing is refused in one
# line, exit 2, before any point runs (the first holds <results>.lock).
# Usage: sweep_lock.sh <epsim>, from the project root.
set -u
epsim="$1"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# This shell holds the lock, as a first sweep would.
exec 9>"$tmp/r.jsonl.lock"
flock 9
"$epsim" sweep tests/tools/bad_input/one_point.toml --results "$tmp/r.jsonl" -q >"$tmp/out" 2>"$tmp/err"
rc=$?
flock -u 9
exec 9>&-
[ "$rc" -eq 2 ] || fail "exit $rc, expected 2 ($(cat "$tmp/err"))"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "not one line: $(cat "$tmp/err")"
grep -qx "epsim: error: --results: $tmp/r.jsonl: another sweep is writing it ($tmp/r.jsonl.lock is locked); wait for it or choose another --results" "$tmp/err" ||
  fail "message: $(cat "$tmp/err")"
[ ! -s "$tmp/r.jsonl" ] || fail "a point ran"
"$epsim" sweep tests/tools/bad_input/one_point.toml --results "$tmp/r.jsonl" -q >/dev/null 2>&1 || fail "the sweep failed once the lock was free"
[ "$(wc -l <"$tmp/r.jsonl")" -eq 1 ] || fail "expected one record"
echo "ok: a locked results file is refused, a free one runs"
