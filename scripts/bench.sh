#!/usr/bin/env bash
# Benchmarks: builds the release binary and the Google Benchmark programs,
# runs them, then times whole `referee check-package` runs over the real
# packages in ../shared/mlperf and compares with the consortium's package
# checker (about 0.9 s per MB of result logs on one core of this machine class).
#
# Environment:
#   SHARED=DIR      the shared reference data (default ../shared)
#   RUNS=N          timed runs per command, best taken (default 3)
#   JOBS_LIST="1 2" --jobs values to time
#   SKIP_MICRO=1    leave out the Google Benchmark programs
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

SHARED=${SHARED:-../shared}
RUNS=${RUNS:-3}
JOBS_LIST=${JOBS_LIST:-"1 2"}
SKIP_MICRO=${SKIP_MICRO:-0}
RULES="$SHARED/mlperf/logging/mlperf_logging"
CONSORTIUM_S_PER_MB=0.9

scripts/setup.sh || exit 1
BIN=build/referee

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

# ---------------------------------------------------- whole commands

now() { date +%s.%N; }
# best_time CMD...: sets best (the shortest wall time of RUNS runs, in
# seconds) and last_rc (the exit status of the last run).
best="" last_rc=0
best_time() {
  local t0 t1 d i
  best=""
  for ((i = 0; i < RUNS; i++)); do
    t0=$(now)
    "$@" >/dev/null 2>&1
    last_rc=$?
    t1=$(now)
    d=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
    if [[ -z "$best" ]] || awk -v d="$d" -v b="$best" 'BEGIN { exit !(d < b) }'; then best=$d; fi
  done
}

# MB of result logs under a folder.
result_mb() {
  find "$1" -type f -name 'result_*.txt' -printf '%s\n' | awk '{ s += $1 } END { printf "%.2f", s / 1e6 }'
}
cat_results() { find "$1" -type f -name 'result_*.txt' -print0 | xargs -0 cat >/dev/null; }

have_check_package=0
if "$BIN" check-package --help >/dev/null 2>&1; then have_check_package=1; fi
if ((!have_check_package)); then
  echo "bench: $BIN has no check-package command yet; timing only the floor (cat)" >&2
fi
if [[ ! -d "$RULES" ]]; then
  echo "bench: no rules at $RULES; skipping whole-command timings" >&2
  exit 0
fi

rows=()
row() { rows+=("$(printf '%-28s %-10s %8s %8s %9s %9s  %s' "$@")"); }
row "package" "command" "MB" "seconds" "MB/s" "vs 0.9s/MB" "note"

declare -A tot_mb=() tot_s=()
for round in v3.0 v3.1; do
  dir="$SHARED/mlperf/training_results_$round"
  [[ -d "$dir" ]] || continue
  ruleset="training-${round#v}.0"
  for org in "$dir"/*/; do
    org=${org%/}
    [[ -d "$org/results" ]] || continue
    name="$round/$(basename "$org")"
    mb=$(result_mb "$org")
    cat_results "$org"  # warm the page cache
    best_time cat_results "$org"
    s=$best
    row "$name" "cat" "$mb" "$s" "$(awk -v m="$mb" -v s="$s" 'BEGIN { printf "%.0f", m / s }')" "" "floor"
    if ((have_check_package)); then
      for n in $JOBS_LIST; do
        best_time "$BIN" check-package "$org" --ruleset "$ruleset" --rules "$RULES" --jobs "$n"
        s=$best
        note=""
        case $last_rc in
          0) note="compliant" ;;
          1) note="not compliant" ;;
          *) note="exit $last_rc (could not check)" ;;
        esac
        mbps=$(awk -v m="$mb" -v s="$s" 'BEGIN { printf "%.1f", m / s }')
        ratio=$(awk -v m="$mb" -v s="$s" -v c="$CONSORTIUM_S_PER_MB" 'BEGIN { printf "%.0fx", m * c / s }')
        row "$name" "-j$n" "$mb" "$s" "$mbps" "$ratio" "$note"
        tot_mb[$n]=$(awk -v a="${tot_mb[$n]:-0}" -v b="$mb" 'BEGIN { printf "%.2f", a + b }')
        tot_s[$n]=$(awk -v a="${tot_s[$n]:-0}" -v b="$s" 'BEGIN { printf "%.3f", a + b }')
      done
    fi
  done
done
# A whole round in one process: start-up (dynamic loading, rule compilation) paid once.
if ((have_check_package)); then
  declare -A round_mb=() round_s=()
  for round in v3.0 v3.1; do
    dir="$SHARED/mlperf/training_results_$round"
    [[ -d "$dir" ]] || continue
    ruleset="training-${round#v}.0"
    mb=$(result_mb "$dir")
    for n in $JOBS_LIST; do
      best_time "$BIN" check-package "$dir" --ruleset "$ruleset" --rules "$RULES" --jobs "$n"
      row "$round (one process)" "-j$n" "$mb" "$best" "$(awk -v m="$mb" -v s="$best" 'BEGIN { printf "%.1f", m / s }')" \
        "$(awk -v m="$mb" -v s="$best" -v c="$CONSORTIUM_S_PER_MB" 'BEGIN { printf "%.0fx", m * c / s }')" ""
      round_mb[$n]=$(awk -v a="${round_mb[$n]:-0}" -v b="$mb" 'BEGIN { printf "%.2f", a + b }')
      round_s[$n]=$(awk -v a="${round_s[$n]:-0}" -v b="$best" 'BEGIN { printf "%.3f", a + b }')
    done
  done
  for n in $JOBS_LIST; do
    [[ -n "${round_mb[$n]:-}" ]] || continue
    m=${round_mb[$n]} s=${round_s[$n]}
    row "both rounds (2 processes)" "-j$n" "$m" "$s" "$(awk -v m="$m" -v s="$s" 'BEGIN { printf "%.1f", m / s }')" \
      "$(awk -v m="$m" -v s="$s" -v c="$CONSORTIUM_S_PER_MB" 'BEGIN { printf "%.0fx", m * c / s }')" ""
  done
  # Importing both rounds into a fresh store.
  db=$(mktemp -d)/bench.db
  t0=$(now)
  ok=1
  for round in v3.0 v3.1; do
    dir="$SHARED/mlperf/training_results_$round"
    [[ -d "$dir" ]] || continue
    "$BIN" import "$dir" --round "training-${round#v}.0" --rules "$RULES" --db "$db" >/dev/null 2>&1 || ok=0
  done
  t1=$(now)
  row "import both rounds" "-j$(nproc)" "" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')" "" "" \
    "$([[ $ok == 1 ]] && echo "store $(du -h "$db" | cut -f1)" || echo failed)"
  rm -rf "$(dirname "$db")"
fi

for n in $JOBS_LIST; do
  [[ -n "${tot_mb[$n]:-}" ]] || continue
  m=${tot_mb[$n]} s=${tot_s[$n]}
  row "all packages" "-j$n" "$m" "$s" "$(awk -v m="$m" -v s="$s" 'BEGIN { printf "%.1f", m / s }')" \
    "$(awk -v m="$m" -v s="$s" -v c="$CONSORTIUM_S_PER_MB" 'BEGIN { printf "%.0fx", m * c / s }')" \
    "consortium: $(awk -v m="$m" -v c="$CONSORTIUM_S_PER_MB" 'BEGIN { printf "%.0f s", m * c }')"
done

echo
echo "==== whole commands (best of $RUNS; ratio = consortium's 0.9 s/MB time / referee's time)"
printf '%s\n' "${rows[@]}"
