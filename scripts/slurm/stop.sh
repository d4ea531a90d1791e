#!/usr/bin/env bash
# Stops the test cluster that scripts/slurm/start.sh started: cancels its
# jobs, then stops slurmd, slurmctld and munged (by their pid files in the
# state directory). Safe to run when nothing is running.
#
#   scripts/slurm/stop.sh            # keeps the state directory (key, logs)
#   scripts/slurm/stop.sh --purge    # and removes it
#
# Environment: REFEREE_SLURM_DIR (default /tmp/referee-slurm), as for start.sh.
set -euo pipefail

DIR=${REFEREE_SLURM_DIR:-/tmp/referee-slurm}
PURGE=0
for a in "$@"; do
  case "$a" in
    --purge) PURGE=1 ;;
    *)
      echo "usage: $0 [--purge]" >&2
      exit 2
      ;;
  esac
done
PATH=$PATH:/usr/sbin:/sbin
log() { echo "slurm/stop: $*" >&2; }

alive() {
  [[ -s "$1" ]] || return 1
  local pid
  pid=$(<"$1")
  [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null
}

# stop_pidfile NAME PIDFILE: TERM, then KILL after 10 s.
stop_pidfile() {
  alive "$2" || return 0
  local pid
  pid=$(<"$2")
  log "stopping $1 (pid $pid)"
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  log "$1 did not stop after 10 s: SIGKILL"
  kill -9 "$pid" 2>/dev/null || true
}

if [[ -f "$DIR/slurm.conf" ]] && alive "$DIR/slurmctld.pid"; then
  export SLURM_CONF=$DIR/slurm.conf
  jobs=$(squeue -h -o '%i' 2>/dev/null || true)
  if [[ -n "$jobs" ]]; then
    log "cancelling jobs: ${jobs//$'\n'/ }"
    # shellcheck disable=SC2086  # job ids are digits, one word each
    scancel $jobs 2>/dev/null || true
    for _ in $(seq 50); do
      [[ -z "$(squeue -h -o '%i' 2>/dev/null || true)" ]] && break
      sleep 0.2
    done
  fi
fi

stop_pidfile slurmd "$DIR/slurmd.pid"
stop_pidfile slurmctld "$DIR/slurmctld.pid"
stop_pidfile munged "$DIR/munge/munged.pid"

if ((PURGE)); then
  log "removing $DIR"
  rm -rf -- "$DIR"
fi
log "stopped"
