#!/usr/bin/env bash
# Load benchmark of `referee serve`, bounded and on this machine only: copies a
# store (default: a fresh one holding submissions/examples/ExampleOrg), adds a
# load-test member of the example organisation with a token to the copy,
# serves the copy on 127.0.0.1 (a free port), runs build/serve_load against
# it (reads: a leaderboard question; writes: resubmission announcements,
# POST /api/v1/rounds/R/announcements, on the example store only) and stops
# the server with SIGTERM. The original store is never written.
#
#   scripts/bench_serve.sh                      the example store: reads and writes
#   ROUND=R BENCHMARK=B scripts/bench_serve.sh STORE   a copy of STORE: reads only
#     (the load user is an administrator there)
#   REPORTS=1 [ROUND=R BENCHMARK=B] scripts/bench_serve.sh [STORE]   report pages instead:
#     GET /reports/rounds/R/B.html (the leaderboard) and /reports/benchmarks/B.html
#     (round over round), PAGE_READS (200) each, one client at a time, then THREADS at once
# Environment: THREADS (client threads, 8), READS (4000), WRITES (600),
#   SERVER_THREADS (8), MAX_SECONDS (60), REFEREE_BIN, LOAD_BIN.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BIN=${REFEREE_BIN:-build/referee}
LOAD=${LOAD_BIN:-build/serve_load}
for f in "$BIN" "$LOAD"; do
  [[ -x "$f" ]] || { echo "bench_serve: $f is missing; build first (ninja -C build referee serve_load)" >&2; exit 2; }
done
work=$(mktemp -d)
server_pid=
cleanup() {
  if [[ -n "$server_pid" ]]; then kill -TERM "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
db="$work/store.db"
if [[ $# -ge 1 ]]; then
  cp "$1" "$db"
  [[ -f "$1-wal" ]] && cp "$1-wal" "$db-wal"
  round=${ROUND:?set ROUND and BENCHMARK to the question to ask of STORE}
  benchmark=${BENCHMARK:?set ROUND and BENCHMARK}
  org= role=admin writes=0
else
  "$BIN" import submissions/examples/ExampleOrg --round mini-1.0.0 --db "$db" >/dev/null
  round=mini-1.0.0 benchmark=minilm org=ExampleOrg role=member writes=${WRITES:-600}
fi
token="load-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
/usr/bin/python3 - "$db" "$token" "$org" "$role" "$round" <<'PY'
import hashlib, sqlite3, sys
db, token, org, role, round_ = sys.argv[1:6]
c = sqlite3.connect(db)
c.execute("INSERT INTO users(name, organisation_id, role, created_at) VALUES('load-user', (SELECT id FROM organisations WHERE name = ?), ?, '2026-01-01T00:00:00Z')", (org, role))
c.execute("INSERT INTO tokens(user_id, hash, prefix, created_at) VALUES((SELECT id FROM users WHERE name='load-user'), ?, ?, '2026-01-01T00:00:00Z')",
          (hashlib.blake2b(token.encode(), digest_size=32).hexdigest(), token[:8]))
if org:  # writes announce resubmissions: the round must be under review
    c.execute("INSERT OR IGNORE INTO round_reviews(round_id, state) SELECT id, 'review' FROM rounds WHERE name = ?", (round_,))
c.commit()
PY
# Every client is on the loopback, one address: the per-address limit is lifted
# to the client count (docs/review.md, "Slow clients").
"$BIN" serve --db "$db" --listen 127.0.0.1:0 --threads "${SERVER_THREADS:-8}" \
  --max-connections-per-address "$(( ${THREADS:-8} > 8 ? ${THREADS:-8} : 8 ))" >"$work/out" 2>"$work/log" &
server_pid=$!
for _ in $(seq 200); do grep -q '^listening on ' "$work/out" 2>/dev/null && break; sleep 0.05; done
url=$(sed -n 's/^listening on //p' "$work/out")
[[ -n "$url" ]] || { echo "bench_serve: the server did not start:" >&2; cat "$work/log" >&2; exit 2; }
echo "bench_serve: $(nproc) cores; store $(du -h "$db" | cut -f1); server threads ${SERVER_THREADS:-8}"
if [[ -n "${REPORTS:-}" ]]; then
  for page in "/reports/rounds/$round/$benchmark.html" "/reports/benchmarks/$benchmark.html"; do
    for clients in 1 "${THREADS:-8}"; do
      echo "bench_serve: $page, $clients client(s)"
      "$LOAD" --url "$url" --token "$token" --threads "$clients" --reads "${PAGE_READS:-200}" --writes 0 \
        --max-seconds "${MAX_SECONDS:-60}" --read-path "$page" | tail -n +2
    done
  done
  exit 0
fi
"$LOAD" --url "$url" --token "$token" --threads "${THREADS:-8}" --reads "${READS:-4000}" \
  --max-seconds "${MAX_SECONDS:-60}" --read-path "/api/v1/query/leaderboard?round=$round&benchmark=$benchmark" \
  --writes "$writes" --write-path "/api/v1/rounds/$round/announcements" \
  --write-body '{"results":["ExampleOrg/cpu_2x_example/minilm"],"text":"load {n}"}'
"$LOAD" --url "$url" --token "$token" --threads "${THREADS:-8}" --reads "${READS:-4000}" --writes 0 \
  --max-seconds "${MAX_SECONDS:-60}" --read-path "/api/v1/health" | tail -n +2 | sed 's/^reads /health/'
