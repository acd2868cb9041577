#!/usr/bin/env bash
# Children die with their parent: `plan -j 2` killed with SIGKILL while its
# layouts simulate leaves no child running (PR_SET_PDEATHSIG), and SIGTERM
# ends it with exit 143 and one line.
# Usage: plan_sigkill.sh <epsim>, from the project root.
set -u
epsim="$1"
fail() { echo "FAIL: $*"; exit 1; }
children_of() { ps -o pid= --ppid "$1" | tr -d ' '; }
# Running: it exists and is not a zombie. A killed child is a zombie until
# whoever adopted it reaps it, which a container's init may do late or never.
running() { local state; state="$(ps -o stat= -p "$1" 2>/dev/null)" && [ -n "$state" ] && [ "${state#Z}" = "$state" ]; }

for sig in KILL TERM; do
  "$epsim" plan --platform a2 --workload deepseek-v3 --set node.count=64 -j 2 -q --results none >/dev/null 2>/tmp/plan_sigkill.$$ &
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
  # The kernel delivers the death signal at once, but tearing down a child's
  # address space (large under ASan) on a loaded machine takes a while: 10 s.
  for _ in $(seq 1 100); do
    left=""
    for c in $children; do running "$c" && left="$left $c"; done
    [ -z "$left" ] && break
    sleep 0.1
  done
  [ -z "$left" ] || { kill -9 $left 2>/dev/null; fail "SIG$sig of plan left children running:$left"; }
  echo "ok: SIG$sig of plan -j 2 ($(echo $children)) left no child"
done
rm -f /tmp/plan_sigkill.$$
