#!/usr/bin/env bash
# An installed copy works on its own: `cmake --install` into a temporary
# prefix, then from another directory the installed epsim lists the presets
# and runs the quick-start scenario. With the installed presets moved away it
# must fail (exit 2, one line) rather than fall back to the source tree, and
# EPSIM_DATA_DIR must bring them back.
# Usage: install_test.sh <build dir> <source dir>
set -euo pipefail
build="$1"; source="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
epsim="$tmp/prefix/bin/epsim"
[ -x "$epsim" ] || fail "no bin/epsim installed"
for script in plot_sweep.py plot_timeline.py; do
  [ -x "$tmp/prefix/share/epsim/tools/$script" ] || fail "no share/epsim/tools/$script installed"
done
mkdir "$tmp/elsewhere"
cd "$tmp/elsewhere"

expect_names() {  # <kind dir in the source tree> <epsim args...>
  local dir="$1"; shift
  local want got
  want="$(cd "$source/$dir" && ls -- *.toml | sed 's/\.toml$//' | LC_ALL=C sort)"
  got="$("$epsim" "$@")" || fail "epsim $* exited $?"
  [ "$got" = "$want" ] || fail "epsim $*: got [$got], want [$want]"
}
expect_names platforms platform list
expect_names workloads/presets workload presets

out="$("$epsim" run --platform a2 --workload deepseek-v3 --ep 32)" || fail "quick-start run exited $?"
[[ "$out" == "epsim "*" run report"$'\n'*"TP 1 x DP 32 x PP 1 = 32 ranks"* ]] || fail "quick-start run printed: ${out%%$'\n'*}"
echo "ok: ${out%%$'\n'*}"

# Without its share/epsim the copy finds no presets: an error, not silence.
mv "$tmp/prefix/share" "$tmp/moved-share"
set +e
"$epsim" platform list >"$tmp/out" 2>"$tmp/err"; rc=$?
set -e
[ "$rc" -eq 2 ] || fail "platform list without presets exited $rc"
[ ! -s "$tmp/out" ] || fail "platform list without presets printed: $(cat "$tmp/out")"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "platform list without presets: stderr is not one line: $(cat "$tmp/err")"
grep -q "^epsim: error: .*EPSIM_DATA_DIR" "$tmp/err" || fail "unexpected message: $(cat "$tmp/err")"
echo "ok: $(cat "$tmp/err")"

# One environment variable points at a data folder for both kinds.
EPSIM_DATA_DIR="$tmp/moved-share/epsim" expect_names platforms platform list
EPSIM_DATA_DIR="$tmp/moved-share/epsim" expect_names workloads/presets workload presets
echo "ok: installed copy"
