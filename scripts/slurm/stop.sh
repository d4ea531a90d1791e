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
# shellcheck source=pidfile.sh
source "$(dirname "${BASH_SOURCE[0]}")/pidfile.sh"

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

stop_pidfile "$DIR/slurmd.pid" slurmd
stop_pidfile "$DIR/slurmctld.pid" slurmctld
stop_pidfile "$DIR/munge/munged.pid" munged

if ((PURGE)); then
  log "removing $DIR"
  rm -rf -- "$DIR"
fi
log "stopped"
