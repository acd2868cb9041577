#!/usr/bin/env bash
# Runs a command that must fail on bad input: exit code 2 and exactly one
# line on stderr, equal to the expected message.
#   expect_exit_2.sh "expected message" command args...
expected="$1"
shift
stderr="$("$@" 2>&1 >/dev/null)"
code=$?
if [[ $code -ne 2 ]]; then
  echo "exit code $code, expected 2; stderr: $stderr"
  exit 1
fi
if [[ "$stderr" != "$expected" ]]; then
  printf 'stderr:   %s\nexpected: %s\n' "$stderr" "$expected"
  exit 1
fi
