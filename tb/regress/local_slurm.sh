#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A one-node Slurm cluster on this machine, in a folder of its own, for scripts/regress.sh's test:
#   local_slurm.sh start DIR   # munged, slurmctld, slurmd in DIR on free ports; prints `export SLURM_CONF=...`
#   local_slurm.sh stop DIR    # cancels every job of the cluster, waits for them, stops the daemons by PID
# Debian 12's slurm-wlm 22.05 and munge (scripts/deps.sh), as root, without systemd: each daemon runs in the
# foreground in the background of this script, with process tracking and accounting plugins that need
# neither cgroups nor a database. Nothing outside DIR is written; ports are found free at start.
set -euo pipefail
cmd=${1:-}
dir=${2:-}
[[ -n "$cmd" && -n "$dir" ]] || { echo "usage: local_slurm.sh start|stop DIR" >&2; exit 2; }

stop() {
  local d=$1
  [[ -f "$d/slurm.conf" ]] || return 0
  export SLURM_CONF=$d/slurm.conf
  # Jobs first: slurmd leaves running jobs behind when it stops.
  if [[ -f "$d/slurmctld.pid.fg" ]] && kill -0 "$(cat "$d/slurmctld.pid.fg")" 2>/dev/null; then
    scancel --full --quiet --user=root 2>/dev/null || true
    for _ in $(seq 1 50); do
      [[ -z "$(squeue --noheader --user=root 2>/dev/null)" ]] && break
      sleep 0.2
    done
  fi
  for p in slurmd slurmctld munged; do
    local f=$d/$p.pid.fg
    [[ -f "$f" ]] || continue
    local pid
    pid=$(cat "$f")
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$f"
  done
  # A task still running (its slurmstepd outlived slurmd) is ended too: it runs under this folder.
  pkill -KILL -f "slurmstepd.*$d" 2>/dev/null || true
}

if [[ "$cmd" == stop ]]; then
  stop "$dir"
  exit 0
fi
[[ "$cmd" == start ]] || { echo "local_slurm.sh: unknown command '$cmd'" >&2; exit 2; }
for b in munged slurmctld slurmd sbatch; do
  command -v "$b" >/dev/null || { echo "local_slurm.sh: $b is missing (scripts/deps.sh installs slurm-wlm and munge)" >&2; exit 1; }
done
[[ $(id -u) -eq 0 ]] || { echo "local_slurm.sh: runs the daemons as root (SlurmUser=root)" >&2; exit 1; }

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
# munged refuses a socket in a folder only its owner may enter (what mktemp -d makes).
chmod 0755 "$dir"
mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log"
chmod 0755 "$dir/munge"
head -c 1024 /dev/urandom >"$dir/munge/munge.key"
chmod 0600 "$dir/munge/munge.key"
munged -F --force --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
  --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed" \
  >"$dir/log/munged.out" 2>&1 &
echo $! >"$dir/munged.pid.fg"
for _ in $(seq 1 50); do [[ -S "$dir/munge/munge.socket" ]] && break; sleep 0.1; done
[[ -S "$dir/munge/munge.socket" ]] || { echo "local_slurm.sh: munged did not start (log: $dir/log/munged.log)" >&2; stop "$dir"; exit 1; }

read -r ctld_port slurmd_port < <(python3 -c '
import socket
ss = [socket.socket() for _ in range(2)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])')
node=$(hostname -s)
cat >"$dir/slurm.conf" <<CONF
# A one-node cluster for scripts/regress.sh's test (tb/regress/local_slurm.sh).
ClusterName=rnic-test
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/slurmd-%n
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
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
MinJobAge=2
KillWait=2
SchedulerParameters=sched_interval=1
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$dir/slurm.conf
slurmctld -D -i -f "$SLURM_CONF" >"$dir/log/slurmctld.out" 2>&1 &
echo $! >"$dir/slurmctld.pid.fg"
slurmd -D -f "$SLURM_CONF" -N "$node" >"$dir/log/slurmd.out" 2>&1 &
echo $! >"$dir/slurmd.pid.fg"
for _ in $(seq 1 100); do
  state=$(sinfo --noheader -o '%t' 2>/dev/null | head -n 1 || true)
  [[ "$state" == idle* ]] && break
  sleep 0.1
done
if [[ "$state" != idle* ]]; then
  echo "local_slurm.sh: the node is '$state', not idle, after 10 s (logs: $dir/log)" >&2
  tail -n 5 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 || true
  stop "$dir"
  exit 1
fi
echo "export SLURM_CONF=$SLURM_CONF"
