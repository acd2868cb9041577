#!/bin/sh
# Runs `epsim platform ...` on bad input: passes when it exits 2 with one
# line on stderr that starts with the expected prefix.
# Usage: cli_bad_input.sh EPSIM EXPECTED_PREFIX ARGS...
epsim="$1"; expected="$2"; shift 2
err=$("$epsim" "$@" 2>&1 >/dev/null); rc=$?
[ "$rc" -eq 2 ] || { echo "exit code $rc, expected 2: $err"; exit 1; }
[ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || { echo "expected one line, got: $err"; exit 1; }
case "$err" in "$expected"*) exit 0 ;; esac
echo "expected a message starting with '$expected', got: $err"; exit 1
