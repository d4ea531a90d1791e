#!/usr/bin/env bash
# Peak memory of `referee run` from the first line a workload prints to the
# package checked, and of `referee check-package` on that package, for logs
# far larger than any real one: a run that prints 300 MB of progress chatter
# around its log, one whose log has 1.5 million MLLOG lines (333 MB), and one
# that prints a 200 MB line without a line end before its log. The figure to
# watch is the peak resident memory beside the log's size: it should stay a
# few tens of MB whatever the size. Peak memory of `referee --version` is
# printed first (the program's own size on this machine).
#
# Environment:
#   REFEREE_BIN=F   the referee binary (default build/referee)
#   WORK=DIR        keep the generated logs and packages there (default: a temporary folder)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BIN=$(realpath "${REFEREE_BIN:-build/referee}")
EX=$(realpath submissions/examples/ExampleOrg)
if [[ ! -x "$BIN" ]]; then echo "bench_memory: $BIN is missing (build referee first)"; exit 2; fi
if [[ ! -x /usr/bin/time ]]; then echo "bench_memory: /usr/bin/time is missing (Debian: time)"; exit 2; fi
if [[ -n "${WORK:-}" ]]; then
  work=$(realpath -m "$WORK")
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
log=$EX/results/cpu_2x_example/minilm/result_0.txt

# The logs, made once.
if [[ ! -s $work/many.log ]]; then
  # 1.5 million evaluation lines after run_start (not converged), then the rest of the log.
  eval_line=$(grep -m1 '"eval_accuracy"' "$log")
  start=$(grep -n '"run_start"' "$log" | cut -d: -f1)
  { head -n "$start" "$log"
    yes "$eval_line" | head -n 1500000
    tail -n +"$((start + 1))" "$log"; } > "$work/many.log.tmp" && mv "$work/many.log.tmp" "$work/many.log"
fi

spec() {  # name, command (YAML list)
  cat > "$work/$1.yaml" <<SPEC
benchmark: minilm
ruleset: mini-1.0.0
backend: exec
runs: 1
org: ExampleOrg
system_description: $EX/systems/cpu_2x_example.json
command: $2
SPEC
}
spec chatter "[/bin/sh, -c, \"yes 'step 12 loss 3.1 lr 0.001 and more words of progress chatter' | head -c 300000000; cat $log\"]"
spec many "[/bin/cat, $work/many.log]"
spec longline "[/bin/sh, -c, \"head -c 200000000 /dev/zero | tr '\\\\000' x; echo; cat $log\"]"

peak() {  # label, command...: prints the peak resident memory and the wall time
  local label=$1
  shift
  /usr/bin/time -f "%M %e" -o "$work/time.txt" "$@" > "$work/out.txt" 2>&1
  read -r kb secs < <(tail -n 1 "$work/time.txt")
  awk -v l="$label" -v kb="$kb" -v s="$secs" 'BEGIN { printf "%-44s %8.1f MB %8.2f s\n", l, kb / 1024, s }'
}

echo "machine: $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
peak "referee --version (start-up)" "$BIN" --version
for case in chatter many longline; do
  rm -rf "$work/out-$case"
  peak "referee run ($case)" "$BIN" run "$work/$case.yaml" --out "$work/out-$case" --progress=plain
  result=$work/out-$case/ExampleOrg/results/cpu_2x_example/minilm/result_0.txt
  size=$(stat -c %s "$result" 2>/dev/null || echo 0)
  awk -v b="$size" 'BEGIN { printf "%-44s %8.1f MB\n", "  its result file", b / 1048576 }'
  peak "referee check-package ($case)" "$BIN" check-package "$work/out-$case/ExampleOrg" --ruleset mini-1.0.0
done
