#!/usr/bin/env bash
# What CI runs (.ci/run), and the README's test command:
#   1. scripts/setup.sh: missing Debian packages, the pages' npm packages
#      (reports/web/node_modules), the release build in build/; Debian's
#      chromium for the browser tests of the pages
#   2. the Debian packages the differential tests need to run the consortium's
#      Python tools as their oracle (python3 with numpy, scipy, pandas, yaml;
#      referee itself never needs them), and python3-torch for the PyTorch
#      example (examples/pytorch/, the torch and slurm suites), when missing
#   3. a single-node Slurm cluster (scripts/slurm/start.sh) for the slurm
#      suite, stopped on exit; then the release build's tests (ctest), the
#      differential_mutations test among them
#   4. the differential fuzz: mutated real logs checked by referee and the
#      consortium's compliance checker for DIFF_FUZZ_SECONDS (default 60);
#      inputs they disagree on are kept in build/differential-findings/
#   5. an address + undefined-behaviour sanitizer build with clang in
#      build-asan/ (-O1 -g1: the referee binary, the test binary and the
#      libFuzzer targets) and its tests, less the suites whose time goes to
#      another program (see asan_skip below)
#   6. the libFuzzer targets of that build (reader_fuzz: the MLLOG reader;
#      expr_fuzz: the rule interpreter, each input on a line whose value is
#      built and on one whose value is not; request_fuzz: the server's request
#      path on a review store), each run for FUZZ_SECONDS (default 30) from a
#      copy of its seed corpus fuzz/corpus/<target>/
# Exits non-zero when any step fails; prints a summary at the end.
#
# Environment:
#   FUZZ_SECONDS  seconds per fuzz target (default 30; 0 skips fuzzing)
#   DIFF_FUZZ_SECONDS  seconds of differential fuzz (default 60; 0 skips it)
#   DIFF_FUZZ_SEED     its seed (default: a new one each run, printed)
#   JOBS          parallel build/test jobs (default: number of cores)
#   SKIP_ASAN=1   leave out the sanitizer build, its tests and the fuzzing
#                 (quick local runs)
#   SKIP_FUZZ=1   leave out the fuzz runs
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

FUZZ_SECONDS=${FUZZ_SECONDS:-30}
DIFF_FUZZ_SECONDS=${DIFF_FUZZ_SECONDS:-60}
DIFF_FUZZ_SEED=${DIFF_FUZZ_SEED:-}
JOBS=${JOBS:-$(nproc)}
SKIP_ASAN=${SKIP_ASAN:-0}
SKIP_FUZZ=${SKIP_FUZZ:-0}

summary=()
failed=0
t_all=$SECONDS

# step NAME COMMAND...: runs a step, records PASS/FAIL and its time.
step() {
  local name=$1
  shift
  local t0=$SECONDS
  echo
  echo "==== $name"
  if "$@"; then
    summary+=("PASS  $name ($((SECONDS - t0)) s)")
    return 0
  fi
  summary+=("FAIL  $name ($((SECONDS - t0)) s)")
  failed=1
  return 1
}

print_summary() {
  echo
  echo "==== summary ($((SECONDS - t_all)) s)"
  printf '  %s\n' "${summary[@]}"
  if ((failed)); then echo "  => FAILED"; else echo "  => all passed"; fi
}

# ------------------------------------------------------------- release

if ! step "setup + release build (build/)" scripts/setup.sh; then
  print_summary
  exit 1
fi
# The differential tests run the consortium's tools with Debian's Python
# (tests/differential/differential.py).
# The PyTorch example (examples/pytorch/train.py) trains with Debian's python3-torch.
step "oracle packages (Debian python3, numpy, scipy, pandas, yaml, torch)" \
  scripts/apt_missing.sh oracle python3 python3-numpy python3-scipy python3-pandas python3-yaml python3-torch
# The browser tests of the pages (report_browser, report_browser_served, report_browser_review,
# report_browser_fixture) drive
# Debian's Chromium through playwright-core (reports/web/node_modules, from
# scripts/setup.sh).
step "browser for the page tests (Debian chromium)" scripts/apt_missing.sh browser chromium
# ------------------------------------------------------- slurm cluster
# The slurm suite runs against a real single-node cluster (docs/slurm.md);
# start.sh installs slurm-wlm and munge when they are missing. Stopped on exit.
slurm_start() {
  local line
  line=$(scripts/slurm/start.sh) || return 1
  export SLURM_CONF=${line#export SLURM_CONF=}
}
trap 'scripts/slurm/stop.sh >/dev/null 2>&1 || true' EXIT
step "slurm test cluster (scripts/slurm/start.sh)" slurm_start

step "release tests (ctest build/)" ctest --test-dir build --output-on-failure -j"$JOBS"

diff_fuzz() {
  local seed=()
  [[ -n "$DIFF_FUZZ_SEED" ]] && seed=(--seed "$DIFF_FUZZ_SEED")
  /usr/bin/python3 tests/differential/differential.py fuzz "${seed[@]}" --seconds "$DIFF_FUZZ_SECONDS" \
    --referee build/referee --keep build/differential-findings
}
if [[ "$DIFF_FUZZ_SECONDS" != 0 ]]; then
  step "differential fuzz (${DIFF_FUZZ_SECONDS} s, referee vs the consortium's checker)" diff_fuzz
fi

# ----------------------------------------------------------- sanitizers

# -O1 -g1: stack traces keep file and line; the tests run several times faster
# than at -O0 and the link is far smaller. clang (libFuzzer's compiler) builds
# this tree in less than half the time GCC 12 takes with the sanitizers on; the
# release build stays with GCC, so both compile the code. A unity build (eight
# sources compiled as one, CMakeLists.txt's REFEREE_UNITY_SKIP apart) parses
# and instruments each shared header and template once per eight sources, not
# once per source. The fuzz targets are
# built here too (REFEREE_FUZZ: the libraries they reach carry libFuzzer's
# coverage hooks, which do nothing outside a fuzz target), so that the code is
# compiled twice in all, not three times.
fuzz_targets=()
for src in fuzz/*_fuzz.cc; do
  [[ -e "$src" ]] && fuzz_targets+=("$(basename "$src" .cc)")
done
asan_build() {
  if [[ -f build-asan/CMakeCache.txt ]] && ! grep -q '^CMAKE_CXX_COMPILER:.*clang' build-asan/CMakeCache.txt; then
    rm -rf build-asan  # configured with another compiler
  fi
  CC=clang CXX=clang++ cmake -S . -B build-asan -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
    -DREFEREE_SANITIZE=ON -DREFEREE_FUZZ=ON -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" -DCMAKE_C_FLAGS_DEBUG="-O1 -g1" \
    -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=8 -DREFEREE_BENCH=OFF >/dev/null &&
    ninja -C build-asan -j"$JOBS" referee referee_tests "${fuzz_targets[@]}"
}
asan_test() {
  ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1} \
  UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
    ctest --test-dir build-asan --output-on-failure -j"$JOBS" -E "$asan_skip"
}
# Left out under the sanitizers: suites whose time goes to another program
# (the consortium's Python tools, Chromium, PyTorch) or that run no referee
# code. They run in the release step; the referee code they reach is reached
# in-process by the other suites here, and by the fuzz targets.
# slurm: its time goes to the Slurm daemons and to waiting for jobs; the
# harness code it drives runs under the sanitizers in the harness, signals
# and manifest suites with the exec backend.
asan_skip='^(differential|differential_mutations|differential_selftest|report_browser|report_browser_served|report_browser_fixture|torch|floors|slurm)$'
asan_built=0
if [[ "$SKIP_ASAN" != 1 ]]; then
  if step "sanitizer build (build-asan/, address+undefined, and the fuzz targets)" asan_build; then
    asan_built=1
    step "sanitizer tests (ctest build-asan/)" asan_test
  fi
fi

# ---------------------------------------------------------------- fuzz

# Runs every target at once (one core each), from a temporary copy of its
# seed corpus so that the repository is not modified. Findings are kept in
# build-asan/findings/<target>/.
fuzz_run() {
  local tmp
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/referee-fuzz.XXXXXX")
  local -A pids=()
  local t
  for t in "${fuzz_targets[@]}"; do
    mkdir -p "$tmp/$t/corpus" "$tmp/$t/artifacts"
    if [[ -d "fuzz/corpus/$t" ]]; then cp -R "fuzz/corpus/$t/." "$tmp/$t/corpus/"; fi
    # Reference cycles that rule code builds (s['a'] = s) are not freed by
    # the interpreter's reference counting: leaks are not findings here.
    local leaks=1
    [[ "$t" == expr_fuzz ]] && leaks=0
    ASAN_OPTIONS="detect_leaks=$leaks:abort_on_error=1" \
      "build-asan/$t" -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 -detect_leaks="$leaks" \
      -print_final_stats=1 -artifact_prefix="$tmp/$t/artifacts/" "$tmp/$t/corpus" \
      >"$tmp/$t/log" 2>&1 &
    pids[$t]=$!
  done
  local bad=0
  for t in "${fuzz_targets[@]}"; do
    local rc=0
    wait "${pids[$t]}" || rc=$?
    local runs
    runs=$(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$tmp/$t/log" | grep -o '[0-9]*$' || true)
    if ((rc != 0)) || compgen -G "$tmp/$t/artifacts/*" >/dev/null; then
      bad=1
      echo "---- $t FAILED (exit $rc); last lines of its log:"
      tail -n 60 "$tmp/$t/log"
      mkdir -p "build-asan/findings/$t"
      cp "$tmp/$t/artifacts/"* "build-asan/findings/$t/" 2>/dev/null || true
      cp "$tmp/$t/log" "build-asan/findings/$t/log"
      echo "---- inputs kept in build-asan/findings/$t/ (rerun: build-asan/$t <file>)"
      summary+=("FAIL  fuzz $t: ${runs:-?} runs in ${FUZZ_SECONDS} s, finding kept")
    else
      echo "---- $t: ${runs:-?} runs in ${FUZZ_SECONDS} s, no findings"
      summary+=("PASS  fuzz $t: ${runs:-?} runs in ${FUZZ_SECONDS} s")
    fi
  done
  rm -rf "$tmp"
  return $bad
}

if ((asan_built)) && [[ "$SKIP_FUZZ" != 1 && "$FUZZ_SECONDS" != 0 && ${#fuzz_targets[@]} -gt 0 ]]; then
  echo
  echo "==== fuzzing ${fuzz_targets[*]} for ${FUZZ_SECONDS} s each"
  fuzz_run || failed=1
fi

print_summary
exit $failed
