#!/usr/bin/env bash
# A real single-node Slurm on localhost, for the sweep tests: everything in
# one scratch directory, SLURM_CONF pointing there, nothing under /etc.
#   local_slurm.sh start DIR   install if needed (root), start munged, slurmctld, slurmd; wait until idle
#   local_slurm.sh stop DIR    stop the daemons by their PID files
# Ports: EPSIM_SLURM_CTLD_PORT (default 6817), EPSIM_SLURM_D_PORT (default 6818).
set -euo pipefail

cmd="${1:-}"
dir="${2:-}"
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }
ctld_port="${EPSIM_SLURM_CTLD_PORT:-6817}"
d_port="${EPSIM_SLURM_D_PORT:-6818}"

install_packages() {
  local missing=()
  for p in slurmctld slurmd slurm-client munge; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "local_slurm: missing packages ${missing[*]} (run as root)" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

stop_pid() {
  local pidfile="$1" name="$2"
  [ -f "$pidfile" ] || return 0
  local pid
  pid="$(cat "$pidfile" 2>/dev/null || true)"
  if [ -n "$pid" ] && [ -r "/proc/$pid/comm" ] && [ "$(cat "/proc/$pid/comm")" = "$name" ]; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do [ -e "/proc/$pid" ] || break; sleep 0.1; done
    [ -e "/proc/$pid" ] && kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
}

start() {
  install_packages
  mkdir -p "$dir"/{state,spool,log,munge}
  dir="$(cd "$dir" && pwd)"
  chmod 755 "$dir/munge"
  [ -f "$dir/munge/munge.key" ] || mungekey -c -k "$dir/munge/munge.key" >/dev/null 2>&1
  chmod 600 "$dir/munge/munge.key"
  munged --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" \
    --seed-file="$dir/munge/munged.seed" --force
  # The node's memory, a little under what slurmd measures (more drains the
  # node); without it Slurm assumes 1 MB and refuses any job's --mem.
  local memory_MiB=$(( $(awk '/^MemTotal:/ {print $2}' /proc/meminfo) / 1024 - 256 ))
  cat > "$dir/slurm.conf" <<CONF
ClusterName=epsimtest
SlurmctldHost=localhost
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerParameters=batch_sched_delay=0
MailProg=/bin/true
MinJobAge=300
ReturnToService=2
NodeName=localhost NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$memory_MiB State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
  export SLURM_CONF="$dir/slurm.conf"
  slurmctld -c -i -f "$SLURM_CONF"
  slurmd -N localhost -f "$SLURM_CONF"
  for _ in $(seq 100); do
    state="$(sinfo -h -o %t 2>/dev/null | head -n1 || true)"
    [ "$state" = "idle" ] && { echo "export SLURM_CONF=$SLURM_CONF"; return 0; }
    sleep 0.2
  done
  echo "local_slurm: node did not become idle (state: ${state:-none}); see $dir/log" >&2
  exit 1
}

stop() {
  stop_pid "$dir/slurmd.pid" slurmd
  stop_pid "$dir/slurmctld.pid" slurmctld
  stop_pid "$dir/munge/munged.pid" munged
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac
