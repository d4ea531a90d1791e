#!/usr/bin/env bash
# Benchmarks: builds the release binary and the Google Benchmark programs and
# runs them; then, in this one run and on the same data, times the
# consortium's package checker and `referee check-package` side by side (two
# small packages and the whole rounds 3.0 and 3.1 of ../shared/mlperf; referee
# with --jobs 1 and with its default) and prints the ratio; then referee's
# per-process start-up cost and an import of both rounds into a fresh store.
# The consortium's checker needs Debian's python3-numpy, -scipy, -pandas and
# -yaml (scripts/test.sh installs them); without them referee is timed alone.
#
# Environment:
#   SHARED=DIR      the shared reference data (default ../shared)
#   RUNS=N          timed runs per referee command, best taken (default 3);
#                   the consortium's checker runs once
#   SKIP_MICRO=1    leave out the Google Benchmark programs
#   REFEREE_BIN=F   time this referee binary; skips scripts/setup.sh (no build)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

SHARED=${SHARED:-../shared}
if [[ -d "$SHARED" ]]; then SHARED=$(cd "$SHARED" && pwd); fi  # the consortium's checker runs elsewhere
RUNS=${RUNS:-3}
SKIP_MICRO=${SKIP_MICRO:-0}
RULES="$SHARED/mlperf/logging/mlperf_logging"

if [[ -n "${REFEREE_BIN:-}" ]]; then
  BIN=$REFEREE_BIN
else
  scripts/setup.sh || exit 1
  BIN=build/referee
fi

# ------------------------------------------------------- micro benchmarks

if [[ "$SKIP_MICRO" != 1 ]]; then
  for b in reader_bench interp_bench writer_bench store_bench live_bench; do
    if [[ ! -x "build/$b" ]]; then
      echo "bench: build/$b missing (is libbenchmark-dev installed? REFEREE_BENCH=ON?)" >&2
      continue
    fi
    echo
    echo "==== $b"
    if [[ "$b" == reader_bench && -d "$SHARED/mlperf/training_results_v3.1" ]]; then
      REFEREE_BENCH_DATA="$SHARED/mlperf/training_results_v3.1" "build/$b"
    elif [[ "$b" == store_bench || "$b" == live_bench ]]; then
      REFEREE_REFERENCE_DATA="$SHARED" "build/$b"
    else
      "build/$b"
    fi
  done
fi

# ------------------------------------------- side by side with the consortium

# Both tools on the same data in this one run: the consortium's package
# checker (Debian's /usr/bin/python3, mlperf_logging from $SHARED, one process
# per organisation, on a temporary copy since it writes scaling.json files and
# a log) and `referee check-package` (one process; --jobs 1, then the default).
# ratio = consortium's wall time / referee's wall time.

if [[ ! -d "$RULES" ]]; then
  echo "bench: no rules at $RULES; skipping whole-command timings" >&2
  exit 0
fi
PY=/usr/bin/python3
have_consortium=1
if ! PYTHONPATH="$SHARED/mlperf/logging" "$PY" -c 'import numpy, scipy, pandas, yaml, mlperf_logging.package_checker' 2>/dev/null; then
  echo "bench: the consortium's package checker does not import (Debian: python3-numpy python3-scipy" \
    "python3-pandas python3-yaml); timing referee alone" >&2
  have_consortium=0
fi

# Wall clock without starting a process (bash 5's EPOCHREALTIME; date where it is missing):
# a `date` costs a process start, which on some machines is several milliseconds.
if [[ -n "${EPOCHREALTIME:-}" ]]; then now() { echo "${EPOCHREALTIME/,/.}"; }; else now() { date +%s.%N; }; fi
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
# Sets cpu_now: CPU seconds (user + system) used so far by this shell's
# finished children (`times` runs in this shell, not in a subshell).
cpu_now=0
child_cpu() {
  times >"$TMP/times"
  cpu_now=$(awk 'NR == 2 { s = 0; for (i = 1; i <= 2; i++) { split($i, p, "m"); sub("s", "", p[2]); s += p[1] * 60 + p[2] } printf "%.3f", s }' "$TMP/times")
}
# best_time CMD...: runs CMD RUNS times; sets best (the shortest wall time, in
# seconds), best_cpu (that run's CPU seconds) and last_rc (the exit status of
# the last run).
best="" best_cpu="" last_rc=0
best_time() {
  local t0 t1 c0 c1 d i
  best=""
  for ((i = 0; i < RUNS; i++)); do
    child_cpu
    c0=$cpu_now
    t0=$(now)
    "$@" >/dev/null 2>&1
    last_rc=$?
    t1=$(now)
    child_cpu
    c1=$cpu_now
    d=$(elapsed "$t0" "$t1")
    if [[ -z "$best" ]] || awk -v d="$d" -v b="$best" 'BEGIN { exit !(d < b) }'; then
      best=$d
      best_cpu=$(elapsed "$c0" "$c1")
    fi
  done
}
result_mb() {
  find -L "$@" -type f -name 'result_*.txt' -printf '%s\n' | awk '{ s += $1 } END { printf "%.1f", s / 1e6 }'
}
ratio() { awk -v c="$1" -v r="$2" 'BEGIN { if (c == "" || r <= 0) print "-"; else printf "%.0fx", c / r }'; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/referee-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# consortium ORG_COPY... RULESET: runs the package checker once per
# organisation (its unit of work), from $TMP; sets cons_s (total wall time) and
# cons_verdict (pass when every organisation passed).
cons_s="" cons_cpu="" cons_verdict=""
consortium() {
  local ruleset=${*: -1} n=$(($# - 1)) t0 t1 c0 c1 org
  cons_verdict=pass
  child_cpu
  c0=$cpu_now
  t0=$(now)
  for org in "${@:1:$n}"; do
    (cd "$TMP" && PYTHONPATH="$SHARED/mlperf/logging" "$PY" -m mlperf_logging.package_checker "$org" training "$ruleset" \
      --log_output "$TMP/package_checker.log" >"$TMP/cons.out" 2>&1)
    grep -q 'PACKAGE CHECKER FOUND NO ERRORS' "$TMP/cons.out" || cons_verdict=fail
  done
  t1=$(now)
  child_cpu
  c1=$cpu_now
  cons_s=$(elapsed "$t0" "$t1")
  cons_cpu=$(elapsed "$c0" "$c1")
}

# side_by_side LABEL RULESET PATH...: one table row; PATH is organisations of
# one round or a round folder.
rows=()
row() { rows+=("$(printf '%-26s %6s %10s %8s %7s %8s %7s %9s  %s' "$@")"); }
row "work" "MB" "consortium" "ref -j1" "ratio" "ref -j$(nproc)" "ratio" "CPU ratio" "verdicts (consortium / referee)"
side_by_side() {
  local label=$1 ruleset=$2
  shift 2
  local mb orgs=() copies=() p o
  mb=$(result_mb "$@")
  for p in "$@"; do
    if [[ -d "$p/results" ]]; then orgs+=("$p"); else for o in "$p"/*/; do [[ -d "$o/results" ]] && orgs+=("${o%/}"); done; fi
  done
  cons_s="" cons_cpu="" cons_verdict="-"
  if ((have_consortium)); then
    rm -rf "$TMP/copy" && mkdir -p "$TMP/copy"
    for o in "${orgs[@]}"; do
      cp -RL "$o" "$TMP/copy/" && chmod -R u+w "$TMP/copy/$(basename "$o")"
      copies+=("$TMP/copy/$(basename "$o")")
    done
    consortium "${copies[@]}" "$ruleset"
  fi
  best_time "$BIN" check-package "$@" --ruleset "training-$ruleset" --rules "$RULES" --jobs 1
  local r1=$best c1=$best_cpu rv
  case $last_rc in 0) rv=pass ;; 1) rv=fail ;; *) rv="exit $last_rc" ;; esac
  best_time "$BIN" check-package "$@" --ruleset "training-$ruleset" --rules "$RULES"
  local rn=$best
  row "$label" "$mb" "${cons_s:--}" "$r1" "$(ratio "$cons_s" "$r1")" "$rn" "$(ratio "$cons_s" "$rn")" \
    "$(ratio "$cons_cpu" "$c1")" "$cons_verdict / $rv"
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
R30="$SHARED/mlperf/training_results_v3.0"
R31="$SHARED/mlperf/training_results_v3.1"
[[ -d "$R31/Azure+NVIDIA" ]] && side_by_side "3.1 Azure+NVIDIA" 3.1.0 "$R31/Azure+NVIDIA"
[[ -d "$R30/Azure" ]] && side_by_side "3.0 Azure" 3.0.0 "$R30/Azure"
[[ -d "$R30" ]] && side_by_side "round 3.0 (whole folder)" 3.0.0 "$R30"
[[ -d "$R31" ]] && side_by_side "round 3.1 (whole folder)" 3.1.0 "$R31"

# ------------------------------------------------------------ start-up

# Per-process cost before any work: the mean of 20 runs of each command.
mean_time() {
  local t0 t1 i
  t0=$(now)
  for ((i = 0; i < 20; i++)); do "$@" >/dev/null 2>&1; done
  t1=$(now)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 20 * 1000 }'
}
startup_version=$(mean_time "$BIN" --version)
startup_true=$(mean_time /bin/true)
# What a page fault costs here: dd reading 64 MiB into a fresh buffer (16,384
# faults of 4 KiB, each with the zeroing of its page) against 4 KiB, best of 5.
fault_cost=""
if [[ -x /usr/bin/time ]]; then
  fault_run() {
    local t0 t1 f d b="" bf=""
    for ((i = 0; i < 5; i++)); do
      t0=$(now)
      f=$(/usr/bin/time -f %R dd if=/dev/zero of=/dev/null bs="$1" count=1 2>&1 >/dev/null | tail -1)
      t1=$(now)
      d=$(elapsed "$t0" "$t1")
      if [[ -z "$b" ]] || awk -v d="$d" -v b="$b" 'BEGIN { exit !(d < b) }'; then b=$d bf=$f; fi
    done
    echo "$b $bf"
  }
  read -r small_s small_f < <(fault_run 4K)
  read -r big_s big_f < <(fault_run 64M)
  fault_cost=$(awk -v a="$small_s" -v b="$big_s" -v fa="$small_f" -v fb="$big_f" \
    'BEGIN { n = fb - fa; if (n > 0) printf "%.2f us per fault (%d faults in %.1f ms)", (b - a) / n * 1e6, n, (b - a) * 1000; else print "-" }')
fi
startup_rules=$(mean_time "$BIN" check /dev/null --ruleset training-3.1.0 --rules "$RULES")

# ------------------------------------------------------------ import

db="$TMP/bench.db"
t0=$(now)
ok=1
for round in v3.0 v3.1; do
  dir="$SHARED/mlperf/training_results_$round"
  [[ -d "$dir" ]] || continue
  "$BIN" import "$dir" --round "training-${round#v}.0" --rules "$RULES" --db "$db" >/dev/null 2>&1 || ok=0
done
t1=$(now)
import_s=$(elapsed "$t0" "$t1")

echo
echo "==== side by side: the consortium's package checker and referee check-package on the same data"
echo "     (wall seconds; referee best of $RUNS; ratio = consortium / referee; CPU ratio: the same with"
echo "     CPU seconds, consortium / referee -j1; $(nproc) cores, load average $load_before before, $(cut -d' ' -f1-3 /proc/loadavg) after)"
printf '%s\n' "${rows[@]}"
echo
echo "==== referee per process"
echo "start-up (referee --version):                          $startup_version ms (/bin/true: $startup_true ms)"
echo "page faults (64 MiB read into a fresh buffer):          ${fault_cost:-not measured (no /usr/bin/time)}"
echo "start-up + one round's rules (referee check /dev/null): $startup_rules ms"
echo "import both rounds into a fresh store:                  ${import_s} s$([[ $ok == 1 ]] || echo " (failed)")"
