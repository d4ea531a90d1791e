# Sourced by start.sh and stop.sh: the daemons as their pid files name them.

# alive PIDFILE: true when the pid file names a running process.
alive() {
  [[ -s "$1" ]] || return 1
  local pid
  pid=$(<"$1")
  [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null
}

# stop_pidfile PIDFILE [NAME]: TERM, then KILL after 10 s. With a NAME, says
# so through the caller's `log`.
stop_pidfile() {
  alive "$1" || return 0
  local pid
  pid=$(<"$1")
  if [[ -n "${2:-}" ]]; then log "stopping $2 (pid $pid)"; fi
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  if [[ -n "${2:-}" ]]; then log "$2 did not stop after 10 s: SIGKILL"; fi
  kill -9 "$pid" 2>/dev/null || true
}
