#!/usr/bin/env bash
# Children die with their parent: `plan -j 2` killed with SIGKILL while its
# layouts simulate leaves no child running (PR_SET_PDEATHSIG), and SIGTERM
# ends it with exit 143 and one line.
# Usage: plan_sigkill.sh <epsim>, from the project root.
set -u
epsim="$1"
fail() { echo "FAIL: $*"; exit 1; }
children_of() { ps -o pid= --ppid "$1" | tr -d ' '; }

for sig in KILL TERM; do
  "$epsim" plan --platform a2 --workload deepseek-v3 --set node.count=64 -j 2 -q >/dev/null 2>/tmp/plan_sigkill.$$ &
  pid=$!
  children=""
  for _ in $(seq 1 300); do  # up to 30 s for the first layouts to start
    children="$(children_of "$pid")"
    [ "$(echo "$children" | grep -c .)" -ge 2 ] && break
    sleep 0.1
  done
  [ -n "$children" ] || { kill -9 "$pid"; fail "plan -j 2 started no child"; }
  kill -"$sig" "$pid"
  wait "$pid"
  rc=$?
  if [ "$sig" = TERM ]; then
    [ "$rc" -eq 143 ] || fail "SIGTERM: exit $rc, expected 143"
    [ "$(cat /tmp/plan_sigkill.$$)" = "epsim: terminated by SIGTERM; no partial output left" ] ||
      fail "SIGTERM: stderr $(cat /tmp/plan_sigkill.$$)"
  fi
  for _ in $(seq 1 20); do  # the kernel delivers the death signal at once; allow 2 s
    left=""
    for c in $children; do kill -0 "$c" 2>/dev/null && left="$left $c"; done
    [ -z "$left" ] && break
    sleep 0.1
  done
  [ -z "$left" ] || { kill -9 $left; fail "SIG$sig of plan left children running:$left"; }
  echo "ok: SIG$sig of plan -j 2 ($(echo $children)) left no child"
done
rm -f /tmp/plan_sigkill.$$
