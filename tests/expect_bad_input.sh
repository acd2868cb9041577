#!/usr/bin/env bash
# Runs `epsim <args...>` and checks the bad-input contract: exit code 2,
# nothing on stdout, exactly one line on stderr, and that line equals
# <expected> (or, when <expected> ends in "...", starts with its prefix).
# Usage: expect_bad_input.sh <epsim> <expected> <args...>  (see epsim_add_bad_input_test)
set -u
epsim="$1"; expected="$2"; shift 2
out="$(mktemp)"; err="$(mktemp)"
trap 'rm -f "$out" "$err"' EXIT
"$epsim" "$@" >"$out" 2>"$err"
rc=$?
fail() { echo "FAIL: epsim $*"; echo "  exit code $rc"; echo "  stdout:"; cat "$out"; echo "  stderr:"; cat "$err"; exit 1; }
[ "$rc" -eq 2 ] || fail "$@"
[ ! -s "$out" ] || fail "$@"
[ "$(wc -l <"$err")" -eq 1 ] || fail "$@"
line="$(cat "$err")"
if [[ "$expected" == *... ]]; then
  [[ "$line" == "${expected%...}"* ]] || fail "$@"
else
  [ "$line" = "$expected" ] || fail "$@"
fi
echo "ok: $line"
