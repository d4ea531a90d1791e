#!/usr/bin/env bash
# Starts a real single-node Slurm cluster for the slurm backend's tests (and
# for trying the backend by hand): munged, slurmctld and slurmd, run as plain
# daemons (no systemd), all their files in one state directory.
#
#   eval "$(scripts/slurm/start.sh)"     # sets SLURM_CONF in this shell
#   sbatch --wrap 'echo hi'
#   scripts/slurm/stop.sh
#
# Idempotent: a second run finds the daemons up and only checks that the node
# is idle. Installs Debian's slurm-wlm and munge with apt-get when they are
# missing (root, or sudo). Progress goes to stderr; the only line on stdout is
# the `export SLURM_CONF=...` line.
#
# Environment:
#   REFEREE_SLURM_DIR        state directory (default /tmp/referee-slurm)
#   REFEREE_SLURM_PARTITION  partition name (default debug)
#   REFEREE_SLURM_CTLD_PORT  slurmctld port (default 6817)
#   REFEREE_SLURM_SLURMD_PORT slurmd port (default 6818)
#   REFEREE_SLURM_TIMEOUT    seconds to wait for the node to become idle (default 60)
set -euo pipefail

DIR=${REFEREE_SLURM_DIR:-/tmp/referee-slurm}
PARTITION=${REFEREE_SLURM_PARTITION:-debug}
CTLD_PORT=${REFEREE_SLURM_CTLD_PORT:-6817}
SLURMD_PORT=${REFEREE_SLURM_SLURMD_PORT:-6818}
TIMEOUT=${REFEREE_SLURM_TIMEOUT:-60}

log() { echo "slurm/start: $*" >&2; }
die() {
  echo "slurm/start: ERROR: $*" >&2
  exit 1
}

SUDO=()
if [[ $(id -u) -ne 0 ]]; then SUDO=(sudo); fi

# ------------------------------------------------------------- packages

PACKAGES=(slurm-wlm slurmctld slurmd slurm-client munge)
missing=()
for p in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [[ "$status" == installed ]] || missing+=("$p")
done
if ((${#missing[@]})); then
  log "installing ${missing[*]} (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  # Keep the packages' init scripts from starting daemons with the system
  # configuration (they would take the ports): Debian's policy-rc.d hook.
  added_policy=0
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\nexit 101\n' | "${SUDO[@]}" tee /usr/sbin/policy-rc.d >/dev/null
    "${SUDO[@]}" chmod 755 /usr/sbin/policy-rc.d
    added_policy=1
  fi
  rc=0
  { "${SUDO[@]}" apt-get update -q && "${SUDO[@]}" apt-get install -y -q --no-install-recommends slurm-wlm munge; } >&2 || rc=$?
  if ((added_policy)); then "${SUDO[@]}" rm -f /usr/sbin/policy-rc.d; fi
  ((rc == 0)) || die "apt-get could not install slurm-wlm and munge (exit $rc)"
fi
for b in munged munge unmunge slurmctld slurmd sinfo sbatch scontrol; do
  command -v "$b" >/dev/null || [[ -x /usr/sbin/$b ]] || die "$b not found after installing slurm-wlm and munge"
done
PATH=$PATH:/usr/sbin:/sbin

# ------------------------------------------------------------- helpers

# alive PIDFILE: true when the pid file names a running process.
alive() {
  [[ -s "$1" ]] || return 1
  local pid
  pid=$(<"$1")
  [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null
}

# stop_pidfile PIDFILE: TERM, then KILL after 10 s.
stop_pidfile() {
  alive "$1" || return 0
  local pid
  pid=$(<"$1")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null || true
}

NODE=$(hostname -s)
[[ -n "$NODE" ]] || die "hostname -s printed nothing"
CONF=$DIR/slurm.conf
MUNGE_DIR=$DIR/munge
SOCKET=$MUNGE_DIR/munge.socket

"${SUDO[@]}" mkdir -p "$DIR" "$MUNGE_DIR" "$DIR/state" "$DIR/spool" "$DIR/log"
"${SUDO[@]}" chmod 755 "$DIR"
# munged insists that its directories are not writable by others.
"${SUDO[@]}" chmod 700 "$MUNGE_DIR"

# ------------------------------------------------------------- munge

if [[ ! -s "$MUNGE_DIR/munge.key" ]]; then
  log "creating a munge key"
  (umask 077 && "${SUDO[@]}" dd if=/dev/urandom of="$MUNGE_DIR/munge.key" bs=1024 count=1 status=none)
fi
"${SUDO[@]}" chmod 400 "$MUNGE_DIR/munge.key"

munge_ok() { munge -n --socket="$SOCKET" 2>/dev/null | unmunge --socket="$SOCKET" >/dev/null 2>&1; }
if ! alive "$MUNGE_DIR/munged.pid" || ! munge_ok; then
  stop_pidfile "$MUNGE_DIR/munged.pid"
  log "starting munged"
  "${SUDO[@]}" munged --key-file="$MUNGE_DIR/munge.key" --socket="$SOCKET" \
    --pid-file="$MUNGE_DIR/munged.pid" --log-file="$MUNGE_DIR/munged.log" \
    --seed-file="$MUNGE_DIR/munged.seed" --force ||
    die "munged did not start; see $MUNGE_DIR/munged.log"
  for _ in $(seq 50); do
    munge_ok && break
    sleep 0.1
  done
  munge_ok || die "munged is not answering on $SOCKET; see $MUNGE_DIR/munged.log"
fi

# ------------------------------------------------------------- slurm.conf

# The node's real topology and memory, as slurmd sees them (a node configured
# with more than it has would be drained).
hw=$(slurmd -C 2>/dev/null | head -n 1 || true)
if [[ "$hw" == NodeName=* ]]; then
  hw=${hw#NodeName=* }
  hw=$(sed -E 's/(^| )UpTime=[^ ]*//' <<<"$hw")
else
  mem=$(awk '/^MemTotal:/ {print int($2 / 1024)}' /proc/meminfo)
  hw="CPUs=$(nproc) RealMemory=$mem"
fi

new_conf=$(
  cat <<EOF
# Generated by scripts/slurm/start.sh: a single-node test cluster.
ClusterName=referee
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCKET
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/slurmd-%n
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No systemd and no cgroup delegation in a container: track processes by
# their parent pids, no task binding.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
# No slurmdbd: sacct has nothing to read; finished jobs stay visible to
# squeue/scontrol for MinJobAge seconds and are logged by jobcomp/filetxt.
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$DIR/log/jobcomp.txt
MinJobAge=600
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmdTimeout=60
InactiveLimit=0
KillWait=5
MessageTimeout=10
NodeName=$NODE NodeAddr=127.0.0.1 $hw State=UNKNOWN
# OverSubscribe: a test cluster on a few cores still runs several jobs at once.
PartitionName=$PARTITION Nodes=$NODE Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8
EOF
)

restart=0
if [[ ! -f "$CONF" ]] || [[ "$(<"$CONF")" != "$new_conf" ]]; then
  log "writing $CONF"
  printf '%s\n' "$new_conf" | "${SUDO[@]}" tee "$CONF" >/dev/null
  restart=1
fi
export SLURM_CONF=$CONF

# ------------------------------------------------------------- daemons

if ((restart)); then
  stop_pidfile "$DIR/slurmd.pid"
  stop_pidfile "$DIR/slurmctld.pid"
fi
if ! alive "$DIR/slurmctld.pid"; then
  log "starting slurmctld"
  "${SUDO[@]}" env SLURM_CONF="$CONF" slurmctld -f "$CONF" ||
    die "slurmctld did not start; see $DIR/log/slurmctld.log"
fi
if ! alive "$DIR/slurmd.pid"; then
  log "starting slurmd (node $NODE)"
  "${SUDO[@]}" env SLURM_CONF="$CONF" slurmd -f "$CONF" -N "$NODE" ||
    die "slurmd did not start; see $DIR/log/slurmd.log"
fi

# ------------------------------------------------------------- wait for idle

t0=$SECONDS
state=
resumed=0
while ((SECONDS - t0 < TIMEOUT)); do
  state=$(sinfo -h -N -n "$NODE" -o '%t' 2>/dev/null | head -n 1 || true)
  case "$state" in
    idle | mix | alloc) break ;;
    drain* | drng | down* | fail*)
      # A node left drained or down by an earlier run: put it back.
      if ((!resumed)); then
        scontrol update NodeName="$NODE" State=RESUME >/dev/null 2>&1 || true
        resumed=1
      fi
      ;;
  esac
  sleep 0.5
done
case "$state" in
  idle | mix | alloc) ;;
  *)
    echo "---- slurmctld.log (last lines)" >&2
    tail -n 20 "$DIR/log/slurmctld.log" >&2 2>/dev/null || true
    echo "---- slurmd.log (last lines)" >&2
    tail -n 20 "$DIR/log/slurmd.log" >&2 2>/dev/null || true
    die "node $NODE not idle after ${TIMEOUT} s (sinfo state: '${state:-no answer}')"
    ;;
esac
log "node $NODE is $state in partition $PARTITION ($((SECONDS - t0)) s)"
echo "export SLURM_CONF=$CONF"
