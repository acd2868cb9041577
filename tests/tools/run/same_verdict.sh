#!/usr/bin/env bash
# One platform, one verdict: `epsim platform check`, `epsim run`, `epsim
# validate` and the sweep's pre-check of a point must reject a bad platform
# with the same one line (exit 2; the sweep reports it for point 0).
#   same_verdict.sh EPSIM CHECK|NOCHECK PLATFORM WORKLOAD [KEY=VALUE...]
# KEY=VALUE go to every command as --set (sweep: [base] set, which wants a
# platform. or workload. prefix; `platform check` gets them without it). NOCHECK skips
# `platform check` and `validate` (for verdicts that need the workload, e.g. node.count).
# Run from the project root, as users do.
set -u
epsim="$1"; with_check="$2"; platform="$3"; workload="$4"; shift 4
work="$(mktemp -d "${TMPDIR:-/tmp}/epsim-verdict.XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; for f in "$work"/*.err; do echo "== $f"; cat "$f"; done; exit 1; }

sets=(); toml_sets=""
for kv in "$@"; do sets+=(--set "$kv"); toml_sets+="${toml_sets:+, }\"$kv\""; done

# run: exit 2, nothing on stdout, one line.
"$epsim" run --platform "$platform" --workload "$workload" "${sets[@]}" >"$work/run.out" 2>"$work/run.err"
rc=$?
[ "$rc" -eq 2 ] && [ ! -s "$work/run.out" ] && [ "$(wc -l <"$work/run.err")" -eq 1 ] || fail "run: exit $rc"
verdict="$(cat "$work/run.err")"

if [ "$with_check" = CHECK ]; then
  platform_sets=()
  for kv in "$@"; do case "$kv" in workload.*|model.*|parallel.*|precision.*|routing.*) ;; *) platform_sets+=(--set "${kv#platform.}");; esac; done
  "$epsim" platform check "$platform" "${platform_sets[@]}" >"$work/check.out" 2>"$work/check.err"
  rc=$?
  [ "$rc" -eq 2 ] && [ ! -s "$work/check.out" ] || fail "platform check: exit $rc"
  [ "$(cat "$work/check.err")" = "$verdict" ] || fail "platform check and run differ"
  "$epsim" validate --platform "$platform" "${platform_sets[@]}" >"$work/validate.out" 2>"$work/validate.err"
  rc=$?
  [ "$rc" -eq 2 ] && [ ! -s "$work/validate.out" ] || fail "validate: exit $rc"
  [ "$(cat "$work/validate.err")" = "$verdict" ] || fail "validate and run differ"
fi

cat >"$work/spec.toml" <<SPEC
schema_version = 1
[base]
platform = "$platform"
workload = "$workload"
set = [$toml_sets]
SPEC
"$epsim" sweep "$work/spec.toml" -q >"$work/sweep.out" 2>"$work/sweep.err"
rc=$?
[ "$rc" -eq 2 ] || fail "sweep: exit $rc, expected 2 (a refused sweep)"
[ "$(wc -l <"$work/sweep.err")" -eq 1 ] || fail "sweep: expected one line"
line="$(grep -F ": point 0 (base): " "$work/sweep.err")" || fail "sweep: no rejected point"
# The run's line carries "epsim: " when it names no file (main.cpp's prefix).
[ "${line#*: point 0 (base): }" = "${verdict#epsim: }" ] || fail "sweep pre-check and run differ"
[ ! -s "$work/spec.results.jsonl" ] || fail "sweep ran the point"
echo "ok: $verdict"
