#!/usr/bin/env bash
# A throw-away single-node Slurm on localhost for tests and trials: munged, slurmctld and slurmd
# with every file (key, sockets, state, spool, logs, slurm.conf) under one directory.
#   scripts/slurm-local.sh start DIR   # prints "export SLURM_CONF=DIR/slurm.conf" on success
#   scripts/slurm-local.sh stop DIR    # stops the daemons this script started in DIR
# Needs Debian's slurmctld, slurmd, slurm-client and munge (scripts/install-deps.sh) and root
# (slurmd launches jobs as their user). Exit 77 when Slurm is not installed or not root.
set -euo pipefail
cmd="${1:-}"; dir="${2:-}"
if [ -z "$cmd" ] || [ -z "$dir" ]; then echo "usage: $0 start|stop DIR" >&2; exit 2; fi

stop() {
  for name in slurmd slurmctld munged; do
    local pidfile="$dir/$name.pid"
    [ -f "$pidfile" ] || continue
    local pid; pid=$(cat "$pidfile" 2>/dev/null || true)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$pidfile"
  done
}

if [ "$cmd" = stop ]; then stop; exit 0; fi
[ "$cmd" = start ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }

for b in munged mungekey slurmctld slurmd sbatch scontrol sinfo; do
  if ! command -v "$b" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$b" ]; then
    echo "slurm-local: $b not installed (Debian: slurmctld slurmd slurm-client munge)" >&2; exit 77
  fi
done
if [ "$(id -u)" -ne 0 ]; then echo "slurm-local: needs root (slurmd runs jobs as their user)" >&2; exit 77; fi
export PATH="$PATH:/usr/sbin"

mkdir -p "$dir"/{state,spool,munge}
chmod 700 "$dir" "$dir/munge"
dir=$(cd "$dir" && pwd)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
ctld_port=$(free_port); d_port=$(free_port)
while [ "$d_port" = "$ctld_port" ]; do d_port=$(free_port); done
host=$(hostname -s)
cpus=$(nproc)

mungekey --create --keyfile="$dir/munge/munge.key" --force 2>/dev/null ||
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
chmod 600 "$dir/munge/munge.key"
munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
  --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munge/munged.seed"

cat >"$dir/slurm.conf" <<CONF
ClusterName=fleetsimlocal
SlurmctldHost=$host(127.0.0.1)
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
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$dir/slurm.conf"
slurmctld -f "$SLURM_CONF" -i
slurmd -f "$SLURM_CONF" -N "$host"
for _ in $(seq 1 100); do
  if sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then
    echo "export SLURM_CONF=$SLURM_CONF"
    exit 0
  fi
  sleep 0.2
done
echo "slurm-local: the node did not come up; logs in $dir" >&2
sinfo >&2 || true
tail -n 20 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 || true
stop
exit 1
