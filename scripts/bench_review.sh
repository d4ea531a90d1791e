#!/usr/bin/env bash
# Load benchmark of the review pages (docs/review.md, "Review in the browser"),
# bounded and on this machine only. Builds a round under review of ORGS
# organisations (copies of submissions/examples/ExampleOrg under other names,
# imported as round mini-1.0.0), one member each and a chair (`referee user
# import`), serves it on 127.0.0.1, files OBJECTIONS objections and COMMENTS
# comments through the API (each organisation objects to the next ones'
# results; the two sides take turns in the discussion), then sends
# build/serve_load at the pages a member opens, THREADS clients at once, and
# prints requests per second and p50/p99 of each:
#   /review/                 the dashboard
#   /review/mini-1.0.0/      the round
#   /review/objections/N     an objection with its thread
#
#   scripts/bench_review.sh
# Environment: ORGS (30), OBJECTIONS (300), COMMENTS (3000), THREADS (8),
#   PAGE_READS (400), SERVER_THREADS (8), MAX_SECONDS (60), REFEREE_BIN, LOAD_BIN.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BIN=${REFEREE_BIN:-build/referee}
LOAD=${LOAD_BIN:-build/serve_load}
for f in "$BIN" "$LOAD"; do
  [[ -x "$f" ]] || { echo "bench_review: $f is missing; build first (ninja -C build referee serve_load)" >&2; exit 2; }
done
orgs=${ORGS:-30} objections=${OBJECTIONS:-300} comments=${COMMENTS:-3000} threads=${THREADS:-8}
work=$(mktemp -d)
server_pid=
cleanup() {
  if [[ -n "$server_pid" ]]; then kill -TERM "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
db="$work/store.db"
t0=$(date +%s.%N)
pkgs=()
for i in $(seq -w 1 "$orgs"); do
  cp -R submissions/examples/ExampleOrg "$work/Org$i"
  sed -i "s/\"submitter\": *\"ExampleOrg\"/\"submitter\": \"Org$i\"/" "$work/Org$i"/systems/*.json
  pkgs+=("$work/Org$i")
done
"$BIN" import "${pkgs[@]}" --round mini-1.0.0 --db "$db" >"$work/import.log" 2>&1 ||
  { echo "bench_review: import failed:" >&2; tail -n 20 "$work/import.log" >&2; exit 2; }
"$BIN" round schedule mini-1.0.0 --from-deadline "$(date -u -d '2 days ago' +%F)" --db "$db" >/dev/null
{
  echo "name,organisation,role,email"
  echo "chair,,chair,chair@example.org"
  for i in $(seq -w 1 "$orgs"); do echo "member$i,Org$i,member,member$i@example.org"; done
} >"$work/users.csv"
"$BIN" user import "$work/users.csv" --tokens "$work/tokens" --db "$db" >/dev/null
"$BIN" serve --db "$db" --listen 127.0.0.1:0 --threads "${SERVER_THREADS:-8}" \
  --max-connections-per-address "$(( 2 * threads + 2 ))" >"$work/out" 2>"$work/log" &
server_pid=$!
for _ in $(seq 200); do grep -q '^listening on ' "$work/out" 2>/dev/null && break; sleep 0.05; done
url=$(sed -n 's/^listening on //p' "$work/out")
[[ -n "$url" ]] || { echo "bench_review: the server did not start:" >&2; cat "$work/log" >&2; exit 2; }
# The objections and the discussion, through the API as members make them.
/usr/bin/python3 - "$url" "$work/tokens" "$orgs" "$objections" "$comments" <<'PY'
import json, os, sys, urllib.request
url, tokens, orgs, objections, comments = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
width = len(str(orgs))
tok = lambda i: open(os.path.join(tokens, "member%0*d.token" % (width, i))).read().strip()
def post(path, body, token):
    req = urllib.request.Request(url.rstrip("/") + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    with urllib.request.urlopen(req) as r:
        return json.load(r)
filed = []
for n in range(objections):
    by = n % orgs + 1
    against = (by + 1 + n // orgs) % orgs + 1
    if against == by:
        against = by % orgs + 1
    o = post("/api/v1/objections", {"round": "mini-1.0.0", "against": "Org%0*d" % (width, against),
                                    "results": ["Org%0*d/cpu_2x_example/minilm" % (width, against)],
                                    "title": "objection %d" % n, "rule": "load", "text": "text of objection %d" % n}, tok(by))
    filed.append((o["objection"]["id"], by, against))
for n in range(comments):
    oid, by, against = filed[n % len(filed)]
    post("/api/v1/objections/%d/comments" % oid, {"text": "comment %d: " % n + "words " * 20}, tok(by if n % 2 == 0 else against))
PY
t1=$(date +%s.%N)
member=$(cat "$work/tokens/member$(printf '%0*d' ${#orgs} 1).token")
echo "bench_review: $(nproc) cores; $orgs organisations, $objections objections, $comments comments made in" \
  "$(printf '%.1f' "$(echo "$t1 - $t0" | bc)") s; store $(du -h "$db" | cut -f1); server threads ${SERVER_THREADS:-8}; $threads clients"
echo "bench_review: the machine's start-up cost: $("$BIN" --version >/dev/null; /usr/bin/time -f '%e s, %M KB' "$BIN" --version 2>&1 >/dev/null | tail -n 1) for referee --version"
for page in "/review/" "/review/mini-1.0.0/" "/review/objections/1"; do
  echo "bench_review: $page"
  "$LOAD" --url "$url" --token "$member" --threads "$threads" --reads "${PAGE_READS:-400}" --writes 0 \
    --max-seconds "${MAX_SECONDS:-60}" --read-path "$page" | tail -n +2
done
