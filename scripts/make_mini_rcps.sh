#!/usr/bin/env bash
# Regenerates the reference convergence points of rule set mini-1.0.0 from real
# runs of the mini workloads:
#
#   rules/sets/rcp_checker/mini_1.0.0/rcps_minilm.json
#   rules/sets/rcp_checker/mini_1.0.0/rcps_miniclf.json
#   rules/sets/rcp_checker/mini_1.0.0/rcps_torchclf.json
#
# For each workload, 3 batch sizes x 10 seeds of `referee workload run` (minilm,
# miniclf) or of the PyTorch example examples/pytorch/train.py with Debian's
# /usr/bin/python3 and python3-torch (torchclf), with the default
# (batch-size-scaled) hyperparameters. Each run's convergence point is read
# the way the RCP checker reads it: metadata.epoch_num of the last eval_accuracy
# line before a run_stop whose status is "success". The hyperparameters recorded
# with each batch size are the opt_* keys the runs log. A reference run that does
# not converge stops the script: every reference point must be a converged run.
#
# The workloads are deterministic, so rerunning this script rewrites the same
# bytes unless the workloads (or their defaults) change. The seeds are reserved
# for reference runs: harness demos and tests use other seeds.
#
# Usage: scripts/make_mini_rcps.sh [--check] [BENCHMARK...]
#   --check   regenerate into a temporary folder and compare with the files in
#             the tree (exit 1 when they differ) instead of replacing them
#   BENCHMARK minilm, miniclf, torchclf (default: all three)
# Environment: REFEREE (default build/referee), PYTHON (default /usr/bin/python3),
# OUT (default the folder above). torchclf's logger, mlperf_logging, is found as
# the example finds it (installed, else under $REFEREE_REFERENCE_DATA).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
referee=${REFEREE:-$root/build/referee}
out=${OUT:-$root/rules/sets/rcp_checker/mini_1.0.0}
python=${PYTHON:-/usr/bin/python3}
check=0
if [[ ${1:-} == --check ]]; then check=1; shift; fi
benches=("$@")
if [[ ${#benches[@]} -eq 0 ]]; then benches=(minilm miniclf torchclf); fi

seeds=(900001 900002 900003 900004 900005 900006 900007 900008 900009 900010)
declare -A batches=([minilm]="32 64 128" [miniclf]="64 128 256" [torchclf]="64 128 256")
for bench in "${benches[@]}"; do
  if [[ -z ${batches[$bench]:-} ]]; then
    echo "make_mini_rcps.sh: unknown benchmark '$bench' (minilm, miniclf, torchclf)" >&2
    exit 2
  fi
done

version=""
if [[ " ${benches[*]} " == *" minilm "* || " ${benches[*]} " == *" miniclf "* ]]; then
  if [[ ! -x $referee ]]; then
    echo "make_mini_rcps.sh: $referee not found; build referee first (or set REFEREE)" >&2
    exit 2
  fi
  version=$("$referee" --version | awk '{print $NF}')
fi
torch_version=""
if [[ " ${benches[*]} " == *" torchclf "* ]]; then
  if ! torch_version=$("$python" -c 'import torch; print(torch.__version__)' 2>/dev/null); then
    echo "make_mini_rcps.sh: torchclf needs PyTorch for $python (Debian: apt-get install python3-torch)" >&2
    exit 2
  fi
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Prints the convergence epoch of a result log, or nothing when the run did not
# converge. Also writes the run's opt_* keys, "key": value per line, to $2.
read_log() {
  awk -v hp="$2" '
    function value(line,   a, b) {
      a = index(line, "\"value\": ") + 9
      b = index(line, ", \"metadata\"")
      return substr(line, a, b - a)
    }
    function key(line,   a, s) {
      a = index(line, "\"key\": \"") + 8
      s = substr(line, a)
      return substr(s, 1, index(s, "\"") - 1)
    }
    /:::MLLOG / {
      k = key($0)
      if (k ~ /^opt_/) print "\"" k "\": " value($0) > hp
      if (k == "eval_accuracy" && match($0, /"epoch_num": [-+0-9.eE]+/)) {
        last = substr($0, RSTART + 13, RLENGTH - 13)
      }
      if (k == "run_stop") {
        if (index($0, "\"status\": \"success\"") && last != "") print last
        exit
      }
    }' "$1"
}

generate() {
  local bench=$1 dest=$2 first=1
  {
    printf '{\n'
    for bs in ${batches[$bench]}; do
      local epochs=() hp=""
      for seed in "${seeds[@]}"; do
        local log="$tmp/$bench-$bs-$seed.txt"
        local rc=0
        if [[ $bench == torchclf ]]; then
          "$python" "$root/examples/pytorch/train.py" --seed "$seed" --batch-size "$bs" --log "$log" \
            >/dev/null 2>"$tmp/stderr" || rc=$?
          if [[ $rc -eq 2 ]]; then cat "$tmp/stderr" >&2; exit 2; fi
        else
          "$referee" workload run "$bench" --seed "$seed" --batch-size "$bs" --log "$log" --quiet || rc=$?
        fi
        local e
        e=$(read_log "$log" "$tmp/hp")
        if [[ $rc -ne 0 || -z $e ]]; then
          echo "make_mini_rcps.sh: $bench batch $bs seed $seed did not converge (exit $rc)" >&2
          exit 1
        fi
        epochs+=("$e")
        hp=$(awk 'NR > 1 { printf ",\n" } { printf "      %s", $0 }' "$tmp/hp")
      done
      [[ $first -eq 1 ]] || printf ',\n'
      first=0
      printf '\n  "%s_ref_%s":\n  {\n' "$bench" "$bs"
      printf '    "Benchmark": "%s",\n' "$bench"
      printf '    "Creator": "referee scripts/make_mini_rcps.sh",\n'
      if [[ $bench == torchclf ]]; then
        printf '    "When": "Reference runs of examples/pytorch/train.py (PyTorch %s), seeds %s-%s",\n' "$torch_version" "${seeds[0]}" "${seeds[-1]}"
        printf '    "Platform": "PyTorch on CPU (1 thread, deterministic)",\n'
      else
        printf '    "When": "Reference runs of referee %s, seeds %s-%s",\n' "$version" "${seeds[0]}" "${seeds[-1]}"
        printf '    "Platform": "referee workload run (1 CPU thread, deterministic)",\n'
      fi
      printf '    "BS": %s,\n' "$bs"
      printf '    "Hyperparams": {\n%s\n    },\n' "$hp"
      printf '    "Epochs to converge": [\n      %s, %s, %s, %s, %s,\n      %s, %s, %s, %s, %s]\n  }' "${epochs[@]}"
      echo "$bench batch $bs: ${epochs[*]}" >&2
    done
    printf '\n}\n'
  } > "$dest"
}

status=0
for bench in "${benches[@]}"; do
  if [[ $check -eq 1 ]]; then
    generate "$bench" "$tmp/rcps_$bench.json"
    if ! cmp -s "$tmp/rcps_$bench.json" "$out/rcps_$bench.json"; then
      echo "make_mini_rcps.sh: $out/rcps_$bench.json is out of date" >&2
      status=1
    fi
  else
    generate "$bench" "$tmp/rcps_$bench.json"
    mv "$tmp/rcps_$bench.json" "$out/rcps_$bench.json"
    echo "wrote $out/rcps_$bench.json" >&2
  fi
done
exit $status
