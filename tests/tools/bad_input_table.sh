#!/usr/bin/env bash
# Runs one row of bad_input_table.tsv: `bad_input_table.sh <epsim> <table> <row name>`,
# from the project root. The row's command runs under a timeout (a hang fails
# the row); exit 2 rows need empty stdout and exactly one matching stderr line,
# exit 0 rows a matching stdout line and no nan/inf. A signal is an exit
# code above 128 and fails every row.
set -u
epsim="$1"; table="$2"; name="$3"
row="$(grep -P "^\Q$name\E\t" "$table")" || { echo "FAIL: no row $name in $table"; exit 1; }
IFS=$'\t' read -r _ command expected_rc pattern <<<"$row"
# Only "*" is a wildcard: escape the glob's other specials ("[1, 65536]" is literal).
pattern="${pattern//\\/\\\\}"; pattern="${pattern//\[/\\[}"; pattern="${pattern//\]/\\]}"; pattern="${pattern//\?/\\?}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# A plan keeps its results under the cache folder: this row's own, never the user's.
export XDG_CACHE_HOME="$tmp/cache"
export epsim tmp
timeout 120 bash -c "\"\$epsim\" $command" >"$tmp/.out" 2>"$tmp/.err"
rc=$?
fail() {
  echo "FAIL: $name: epsim $command ($1)"; echo "  exit code $rc, expected $expected_rc"
  echo "  stdout:"; head -20 "$tmp/.out"; echo "  stderr:"; head -20 "$tmp/.err"; exit 1
}
[ "$rc" -ne 124 ] || fail "timed out"
[ "$rc" -eq "$expected_rc" ] || fail "exit code"
if [ "$expected_rc" -eq 2 ]; then
  [ ! -s "$tmp/.out" ] || fail "stdout not empty"
  [ "$(wc -l <"$tmp/.err")" -eq 1 ] || fail "not exactly one line on stderr"
  line="$(cat "$tmp/.err")"
  # shellcheck disable=SC2053  # the pattern is a glob on purpose
  [[ "$line" == $pattern ]] || fail "line does not match: $pattern"
  echo "ok: $line"
else
  matched=0
  while IFS= read -r line; do
    # shellcheck disable=SC2053
    [[ "$line" == $pattern ]] && matched=1
  done <"$tmp/.out"
  [ "$matched" -eq 1 ] || fail "no stdout line matches: $pattern"
  ! grep -qiwE -- '-?nan|-?inf' "$tmp/.out" || fail "non-finite number in the output"
  echo "ok: exit 0, finite output"
fi
