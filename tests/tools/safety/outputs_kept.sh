#!/usr/bin/env bash
# Outputs never destroy a user's file (STYLE.md "Files a user owns"):
#   1. an output naming an input is refused and the input is byte for byte as it was;
#   2. a plan error leaves an earlier --emit-sweep file as it was;
#   3. SIGINT during a traced run leaves the earlier trace as it was, exits 130
#      with one line, and leaves no temporary file beside it;
#   4. a finished output replaces the earlier file whole (mode kept).
# Usage: outputs_kept.sh <epsim>, from the project root.
set -u
epsim="$1"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cp workloads/presets/tiny-moe.toml "$tmp/wl.toml"
before="$(sha256sum <"$tmp/wl.toml")"
"$epsim" plan --platform a2 --workload "$tmp/wl.toml" -q --emit-sweep "$tmp/wl.toml" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 2 ] || fail "plan --emit-sweep naming the workload: exit $rc, expected 2"
grep -qx "epsim: error: --emit-sweep: $tmp/wl.toml: is the input named by --workload; write the output elsewhere" "$tmp/err" ||
  fail "plan --emit-sweep naming the workload: $(cat "$tmp/err")"
[ "$(sha256sum <"$tmp/wl.toml")" = "$before" ] || fail "the workload changed"
# The same file by another name (a hard link) is the same input.
ln "$tmp/wl.toml" "$tmp/link.toml"
"$epsim" run --platform tests/sim/platforms/four_nodes.xml --workload "$tmp/wl.toml" --trace "$tmp/link.toml" \
  >/dev/null 2>"$tmp/err" && fail "run --trace naming the workload by a hard link was accepted"
grep -q "is the input named by --workload" "$tmp/err" || fail "run --trace hard link: $(cat "$tmp/err")"
[ "$(sha256sum <"$tmp/wl.toml")" = "$before" ] || fail "the workload changed (hard link)"

echo "an earlier spec" >"$tmp/spec.toml"
"$epsim" plan --platform a2 --workload tiny-moe -q --set node.count=0 --emit-sweep "$tmp/spec.toml" >/dev/null 2>&1
[ $? -eq 2 ] || fail "plan with a bad --set did not exit 2"
[ "$(cat "$tmp/spec.toml")" = "an earlier spec" ] || fail "a plan error changed the earlier --emit-sweep file"

echo "an earlier trace" >"$tmp/trace.json"
chmod 640 "$tmp/trace.json"
"$epsim" run --platform a2 --workload deepseek-v3 --set node.count=32 --trace "$tmp/trace.json" -q >/dev/null 2>"$tmp/err" &
pid=$!
sleep 1.5
kill -INT "$pid"
wait "$pid"
rc=$?
[ "$rc" -eq 130 ] || fail "SIGINT: exit $rc, expected 130 ($(cat "$tmp/err"))"
[ "$(cat "$tmp/err")" = "epsim: interrupted by SIGINT; no partial output left" ] || fail "SIGINT: stderr $(cat "$tmp/err")"
[ "$(cat "$tmp/trace.json")" = "an earlier trace" ] || fail "SIGINT changed the earlier trace"
[ -z "$(find "$tmp" -name '.trace.json.epsim-*')" ] || fail "SIGINT left a temporary file"

"$epsim" run --platform tests/sim/platforms/four_nodes.xml --workload tiny-moe -q --trace "$tmp/trace.json" >/dev/null 2>&1 ||
  fail "a traced run failed"
head -c 1 "$tmp/trace.json" | grep -q '[{[]' || fail "the new trace is not JSON"
[ "$(stat -c %a "$tmp/trace.json")" = 640 ] || fail "the trace's mode changed to $(stat -c %a "$tmp/trace.json")"
[ -z "$(find "$tmp" -name '.*.epsim-*')" ] || fail "a temporary file was left"
echo "ok: inputs and earlier outputs kept"
