#!/usr/bin/env bash
# The dashboards' figures: a report of every published training round from
# 1.0 to 5.1, each generated at about its published size by
# scripts/gen_rounds.py (about 2,000 results and 22,000 runs in all) and
# imported into a fresh store, written on 2 cores (targets: under 60 MB and
# under 10 s); the same with --data-files; and single pages rendered on their
# own through reports::render (the served page; target < 50 ms).
#
# Environment:
#   SHARED=DIR      the shared reference data (default ../shared): the consortium's rules, for the RCP tables
#   REFEREE_BIN=F   the referee binary (default build/referee)
#   RUNS=N          timed runs, best taken (default 3)
#   CORES=LIST      CPUs to run on (default 0,1: two cores)
#   WORK=DIR        keep the generated rounds and the store there, and reuse them (default: a temporary folder)
#   SCALE=X         submitters per round times X (default 1; 0.1 for a quick try)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

SHARED=${SHARED:-../shared}
BIN=${REFEREE_BIN:-build/referee}
RUNS=${RUNS:-3}
CORES=${CORES:-0,1}
SCALE=${SCALE:-1}
RULES="$SHARED/mlperf/logging/mlperf_logging"
for need in "$BIN" "$RULES"; do
  if [[ ! -e "$need" ]]; then echo "bench_report: $need is missing (build referee; set SHARED)"; exit 2; fi
done
if [[ ! -x /usr/bin/python3 ]]; then echo "bench_report: /usr/bin/python3 is missing (Debian: python3)"; exit 2; fi
PIN=()
if command -v taskset >/dev/null; then PIN=(taskset -c "$CORES"); fi

if [[ -n "${WORK:-}" ]]; then
  work=$WORK
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
db=$work/rounds.db
if [[ ! -s "$db" ]]; then
  echo "generating rounds 1.0 to 5.1 (scale $SCALE) into $work/gen ..."
  rm -rf "$work/gen"
  /usr/bin/python3 scripts/gen_rounds.py --rules "$RULES" --out "$work/gen" --scale "$SCALE" | tr '\n' ' ' || exit 2
  echo
  while read -r round dir; do
    # Packages whose results fail their checks are imported all the same (exit 1): they are results too.
    "$BIN" import "$dir" --round "$round" --rules "$RULES" --db "$db.tmp" >/dev/null 2>&1
    (($? <= 1)) || { echo "bench_report: import of $round failed"; exit 2; }
  done < "$work/gen/rounds.txt"
  mv "$db.tmp" "$db"
fi
"$BIN" list rounds --db "$db"

now() { date +%s.%N; }
# report NAME [FLAGS...]: best wall time of RUNS writes into one folder (each
# run after the first replaces the earlier report, as a user's would), then
# CPU time and the size of what was written.
report() {
  local name=$1 best="" t0 t
  shift
  rm -rf "$work/site-$name"
  for ((i = 0; i < RUNS; i++)); do
    t0=$(now)
    "${PIN[@]}" "$BIN" report --db "$db" --out "$work/site-$name" "$@" > "$work/out.txt" || { cat "$work/out.txt"; exit 2; }
    t=$(echo "$(now) - $t0" | bc)
    if [[ -z "$best" ]] || (( $(echo "$t < $best" | bc) )); then best=$t; fi
  done
  echo "last run: $(head -1 "$work/out.txt")"
  /usr/bin/time -f '%U %S %M' -o "$work/cpu.txt" "${PIN[@]}" "$BIN" report --db "$db" --out "$work/site-$name" "$@" >/dev/null
  read -r user sys rss < "$work/cpu.txt"
  local bytes files gz
  # The site's files (the marker .referee-report, referee's list of them, left out).
  bytes=$(find "$work/site-$name" -type f ! -name .referee-report -printf '%s\n' | awk '{s += $1} END {print s}')
  files=$(find "$work/site-$name" -type f ! -name .referee-report | wc -l)
  # What a web server that compresses would send: every page gzipped.
  gz=$(find "$work/site-$name" -type f -name '*.html' -print0 | xargs -0 -n 200 gzip -6 -c | wc -c)
  printf 'report %-11s CPU %.2f s user + %.2f s system, peak memory %d MB\n' "$name" "$user" "$sys" $((rss / 1024))
  printf 'report %-11s %d files, %.1f MB (pages gzipped: %.1f MB) (target < 60 MB)\n' "$name" "$files" \
    "$(echo "$bytes / 1000000" | bc -l)" "$(echo "$gz / 1000000" | bc -l)"
  printf 'report %-11s on %s: best of %d %.2f s wall (target < 10 s)\n' "$name" "$CORES" "$RUNS" "$best"
}
report default
report data-files --data-files

site=$work/site-default
first_result=$(ls "$site/results" | sort -n | head -1)
for page in index.html results.html benchmarks/gpt3.html rounds/training-3.1.0/gpt3.html rounds/training-3.1.0/index.html \
            "results/$first_result" scaling/gpt3/NVIDIA.html; do
  bestp=""
  for ((i = 0; i < RUNS; i++)); do
    ms=$("${PIN[@]}" "$BIN" report --db "$db" --page "$page" 2>&1 >/dev/null | sed -n 's/.* in \([0-9.]*\) ms$/\1/p')
    if [[ -z "$ms" ]]; then echo "bench_report: could not render $page"; break; fi
    if [[ -z "$bestp" ]] || (( $(echo "$ms < $bestp" | bc) )); then bestp=$ms; fi
  done
  [[ -n "$bestp" ]] && printf 'render %-36s best of %d %6.1f ms (target < 50 ms)\n' "$page" "$RUNS" "$bestp"
done
