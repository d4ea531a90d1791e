#!/usr/bin/env bash
# The browser tests of the dashboards (docs/reports.md, "browser tests"), run by
# CTest as report_browser and report_browser_fixture:
#
#   tests/browser/run_report_browser.sh report REFEREE_BINARY
#     imports the reference data's rounds 3.0 and 3.1 into a temporary store,
#     writes the site with `referee report`, and checks every page of it in
#     headless Chromium (tests/browser/check_report.mjs), the pages' downloads
#     against the same report written with --data-files.
#   tests/browser/run_report_browser.sh served REFEREE_BINARY
#     the same store served by `referee serve --public` on 127.0.0.1: the first
#     page of each folder of the site loaded from the server, under the
#     server's Content-Security-Policy (check_report.mjs --served), which must
#     refuse an injected inline script and nothing the pages need.
#   tests/browser/run_report_browser.sh review REFEREE_BINARY
#     the review in the browser (docs/review.md, "Review in the browser"):
#     NVIDIA's round-3.1 RetinaNet results as submitted (without the
#     committee's scaling.json) beside Azure and Azure+NVIDIA, served with a
#     chair and one member of each; tests/browser/check_review.mjs signs in,
#     audits, files an objection from a finding, responds as the accused,
#     votes as three organisations, decides as the chair and sees the
#     leaderboard change, checking what each role sees and may do.
#   tests/browser/run_report_browser.sh fixture
#     checks the hand-made pages of tests/browser/fixture/good (a test of the
#     page script itself, with the assets from reports/web), then that the
#     checker fails on pages it must refuse: a broken chart spec, a page that
#     asks the network for data, a page script that draws other numbers than
#     its data, leaves a table row out or sorts the wrong way, and a report
#     without the libraries' licence texts.
#
# Screenshots go to $REPORT_BROWSER_ARTIFACTS (default
# $REPORT_BROWSER_ARTIFACTS_ROOT/<mode>/, which CTest sets to
# <build>/test-artifacts/report-browser; build/test-artifacts/report-browser/<mode>/
# otherwise).
# Without Node.js, Chromium, reports/web/node_modules or (report) the reference
# data, it says why and exits 77 (CTest: Skipped); with CI set that is a failure.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
repo=$(pwd)
mode=${1:-}
referee=${2:-build/referee}
artifacts=${REPORT_BROWSER_ARTIFACTS:-${REPORT_BROWSER_ARTIFACTS_ROOT:-$repo/build/test-artifacts/report-browser}/$mode}

skip() {
  if [[ -n "${CI:-}" ]]; then
    echo "FAIL: $1; CI must have it, so this fails"
    exit 1
  fi
  echo "SKIPPED: $1"
  exit 77
}

case "$mode" in
  report | served | review | fixture) ;;
  *) echo "usage: $0 report|served|review REFEREE_BINARY | fixture" >&2; exit 2 ;;
esac

command -v node >/dev/null || skip "node is missing (Debian: nodejs; scripts/setup.sh installs it)"
[[ -x "${REFEREE_CHROMIUM:-/usr/bin/chromium}" ]] || skip "${REFEREE_CHROMIUM:-/usr/bin/chromium} is missing (Debian: chromium; scripts/test.sh installs it)"
[[ -f reports/web/node_modules/playwright-core/package.json ]] ||
  skip "reports/web/node_modules is missing or incomplete (run scripts/setup.sh, or: npm ci --prefix reports/web)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/referee-browser.XXXXXX")
server_pid=
cleanup() {
  [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
rm -rf "$artifacts"
mkdir -p "$artifacts"

# The assets as the binary embeds them (reports/assets_test.cc holds the
# binary to these same bytes; LICENSES.txt here only has the same headings).
copy_assets() {
  local to=$1/assets
  mkdir -p "$to"
  cp reports/web/node_modules/vega/build/vega.min.js reports/web/node_modules/vega-lite/build/vega-lite.min.js \
    reports/web/node_modules/vega-embed/build/vega-embed.min.js reports/web/referee.js reports/web/referee.css "$to/"
  local lib
  for lib in vega vega-lite vega-embed; do
    printf '%s (npm package %s)\n\n' "$lib" "$lib"
    cat "reports/web/node_modules/$lib/LICENSE"
  done >"$to/LICENSES.txt"
}

check() {
  node tests/browser/check_report.mjs "$@"
}

if [[ "$mode" == fixture ]]; then
  failed=0
  cp -R tests/browser/fixture/good "$tmp/good"
  copy_assets "$tmp/good"
  echo "== the fixture pages pass"
  check "$tmp/good" --artifacts "$artifacts/good" || failed=1

  # expect_failure NAME FOLDER TEXT: the checker must fail on FOLDER and say TEXT.
  expect_failure() {
    local name=$1 dir=$2 text=$3 out rc
    out=$(check "$dir" --artifacts "$artifacts/$name" 2>&1)
    rc=$?
    if [[ $rc == 1 && "$out" == *"$text"* ]]; then
      echo "== self-test $name: the checker fails as it must (\"$text\")"
    else
      echo "== self-test $name FAILED: exit $rc, expected 1 with \"$text\"; its output:"
      echo "$out"
      failed=1
    fi
  }
  for bad in broken-spec network; do
    cp -R "tests/browser/fixture/$bad" "$tmp/$bad"
    copy_assets "$tmp/$bad"
  done
  expect_failure broken-spec "$tmp/broken-spec" "the page script failed: chart c1"
  expect_failure network "$tmp/network" "a request left the machine: https://example.invalid/data.json"
  # A page script that draws numbers other than its data's.
  cp -R "$tmp/good" "$tmp/tampered"
  sed -i 's|^    delete copy.\$schema;$|&\n    copy.data = { values: copy.data.values.map(function (r) { var o = Object.assign({}, r); Object.keys(o).forEach(function (k) { if (typeof o[k] === "number") o[k] += 1; }); return o; }) };|' \
    "$tmp/tampered/assets/referee.js"
  if ! grep -q 'o\[k\] += 1' "$tmp/tampered/assets/referee.js"; then
    echo "== self-test tampered FAILED: could not alter the page script (reports/web/referee.js changed?)"
    failed=1
  else
    expect_failure tampered "$tmp/tampered" "which is not in the spec's data"
  fi
  # A page script that leaves a row out.
  cp -R "$tmp/good" "$tmp/short"
  sed -i 's|^      order.forEach(function (i) {$|      order = order.slice(1);\n&|' "$tmp/short/assets/referee.js"
  if ! grep -q 'order = order.slice(1);' "$tmp/short/assets/referee.js"; then
    echo "== self-test short FAILED: could not alter the page script (reports/web/referee.js changed?)"
    failed=1
  else
    expect_failure short "$tmp/short" "rows shown, 4 in the JSON"
  fi
  # A page script that sorts the wrong way.
  cp -R "$tmp/good" "$tmp/unsorted"
  sed -i 's|: state.dir \* compareKeys(ka, kb);$|: -state.dir * compareKeys(ka, kb);|' "$tmp/unsorted/assets/referee.js"
  if ! grep -q -- '-state.dir \* compareKeys' "$tmp/unsorted/assets/referee.js"; then
    echo "== self-test unsorted FAILED: could not alter the page script (reports/web/referee.js changed?)"
    failed=1
  else
    expect_failure unsorted "$tmp/unsorted" "sorted ascending by"
  fi
  # A report without the libraries' licence texts.
  cp -R "$tmp/good" "$tmp/unlicensed"
  rm "$tmp/unlicensed/assets/LICENSES.txt"
  expect_failure unlicensed "$tmp/unlicensed" "assets/LICENSES.txt: missing"
  if ((failed)); then echo "0 passed, 1 failed"; exit 1; fi
  echo "1 passed, 0 failed"
  exit 0
fi

# The server started by start_server ARGS...: its URL in $url (exits on failure).
start_server() {
  "$referee" serve "$@" --listen 127.0.0.1:0 >"$tmp/serve.out" 2>"$tmp/serve.err" &
  server_pid=$!
  url=
  for _ in $(seq 1 100); do
    url=$(sed -n 's/^listening on \(http[^ ]*\).*/\1/p' "$tmp/serve.out" | head -n 1)
    [[ -n "$url" ]] && break
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  if [[ -z "$url" ]]; then
    echo "FAIL: referee serve did not start:"
    cat "$tmp/serve.err"
    exit 1
  fi
}

# ---------------------------------------------------------------- report
ref=${REFEREE_REFERENCE_DATA:-$repo/../shared}
[[ -d "$ref/mlperf/expected" ]] || skip "reference data not found at $ref (set REFEREE_REFERENCE_DATA)"
[[ -x "$referee" ]] || { echo "FAIL: $referee is not an executable"; exit 1; }
if ! "$referee" report --help >/dev/null 2>&1; then
  # Not a missing prerequisite of the machine: the binary under test lacks the command.
  echo "SKIPPED: $referee has no report command"
  exit 77
fi
db="$tmp/store.db"
if [[ "$mode" == review ]]; then
  src="$ref/mlperf/training_results_v3.1"
  rules="$ref/mlperf/logging/mlperf_logging"
  [[ -d "$src/NVIDIA" && -d "$src/Azure" && -d "$src/Azure+NVIDIA" ]] || skip "reference data has no $src/{NVIDIA,Azure,Azure+NVIDIA}"
  # NVIDIA's RetinaNet results as submitted: the committee's scaling.json left out.
  pkg="$tmp/pkg/NVIDIA"
  mkdir -p "$pkg/systems"
  for d in "$src"/NVIDIA/results/*/ssd; do
    sys=$(basename "$(dirname "$d")")
    mkdir -p "$pkg/results/$sys/ssd"
    find "$d" -maxdepth 1 -type f ! -name scaling.json -exec cp {} "$pkg/results/$sys/ssd/" \;
    cp "$src/NVIDIA/systems/$sys.json" "$pkg/systems/"
  done
  run() {
    if ! "$@" >"$tmp/step.log" 2>&1; then
      echo "FAIL: $*"
      cat "$tmp/step.log"
      exit 1
    fi
  }
  run "$referee" import "$pkg" "$src/Azure" "$src/Azure+NVIDIA" --round 3.1.0 --rules "$rules" --db "$db"
  run "$referee" round schedule 3.1.0 --from-deadline "$(date -u -d '2 days ago' +%F)" --db "$db"
  tokens="$tmp/tokens"
  mkdir -p "$tokens"
  for who in chair:chair: alice:member:Azure bob:member:NVIDIA carol:member:Azure+NVIDIA eve:member:Google; do
    IFS=: read -r name role org <<<"$who"
    args=(user add "$name" --role "$role" --db "$db")
    [[ -n "$org" ]] && args+=(--org "$org")
    [[ "$org" == Google ]] && args+=(--create-org)  # a member of no submitter of the round
    run "$referee" "${args[@]}"
    sed -n 's/^token: //p' "$tmp/step.log" >"$tokens/$name"
    [[ -s "$tokens/$name" ]] || { echo "FAIL: no token for $name"; cat "$tmp/step.log"; exit 1; }
  done
  # The server's audit reads the round's rule set (RCPs) from the reference data.
  REFEREE_RULES="$rules" start_server --db "$db"
  echo "== served by $url"
  REFEREE_SERVER="$url" REFEREE_TOKEN="$(cat "$tokens/chair")" run "$referee" review assign --round 3.1.0
  node tests/browser/check_review.mjs --url "${url%/}" --tokens "$tokens" --artifacts "$artifacts"
  rc=$?
  ((rc == 0)) || tail -n 20 "$tmp/serve.err"
  exit $rc
fi
for round in 3.0 3.1; do
  dir="$ref/mlperf/training_results_v$round"
  [[ -d "$dir" ]] || skip "reference data has no $dir"
  if ! "$referee" import "$dir" --round "training-$round.0" --rules "$ref/mlperf/logging/mlperf_logging" --db "$db" \
    >"$tmp/import-$round.log" 2>&1; then
    echo "FAIL: referee import of round $round failed:"
    tail -n 30 "$tmp/import-$round.log"
    exit 1
  fi
done
# Served pages link their data files (the server makes them): the folder that lists them has them too.
data_flag=()
[[ "$mode" == served ]] && data_flag=(--data-files)
if ! "$referee" report --db "$db" --out "$tmp/site" "${data_flag[@]}" >"$tmp/report.log" 2>&1; then
  echo "FAIL: referee report failed:"
  cat "$tmp/report.log"
  exit 1
fi
cat "$tmp/report.log"
if [[ "$mode" == report ]]; then
  # The same report with its data files: what each page's downloads must equal.
  if ! "$referee" report --db "$db" --out "$tmp/site-data" --data-files >"$tmp/report-data.log" 2>&1; then
    echo "FAIL: referee report --data-files failed:"
    cat "$tmp/report-data.log"
    exit 1
  fi
  check "$tmp/site" --artifacts "$artifacts" --data-files "$tmp/site-data"
  exit
fi

# ---------------------------------------------------------------- served
# The rounds have no review record, so they read as published: --public serves them to anyone.
start_server --db "$db" --public
echo "== served by $url"
# One browser, as one member has (six connections to a server at most: within --max-connections-per-address).
check "$tmp/site" --artifacts "$artifacts" --served "${url%/}/reports/" --one-per-folder --jobs 1
rc=$?
((rc == 0)) || tail -n 20 "$tmp/serve.err"
exit $rc
