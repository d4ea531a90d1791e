#include "submissions/store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/file.h"
#include "base/text.h"
#include "base/url.h"
#include "submissions/store_errors.h"

namespace referee::submissions {

// ----------------------------------------------------------------- failures

namespace {
thread_local bool t_failed_busy = false;

// Notes a statement's result code: a busy or locked store is remembered
// until clear_thread_failures().
int noted(int rc) {
  int primary = rc & 0xff;
  if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED) t_failed_busy = true;
  return rc;
}
}  // namespace

void clear_thread_failures() { t_failed_busy = false; }
bool thread_failed_busy() { return t_failed_busy; }

// ----------------------------------------------------------------- Stmt

namespace {

// Prepared statements kept per connection, by their text (a few of each, for
// nested loops over the same statement), for the connections Store opened.
struct StmtCache {
  static constexpr size_t kTexts = 512;  // texts kept per connection (SQL built with values in it is not kept past it)
  static constexpr size_t kEach = 4;     // statements of one text kept
  std::mutex mu;
  std::unordered_map<sqlite3*, std::unordered_map<std::string, std::vector<sqlite3_stmt*>>> free;
};
StmtCache& stmt_cache() {
  static StmtCache* cache = new StmtCache;  // never destroyed: Stmts may outlive static destruction at exit
  return *cache;
}

}  // namespace

void Stmt::cache_statements_of(sqlite3* db) {
  StmtCache& c = stmt_cache();
  std::lock_guard<std::mutex> lock(c.mu);
  c.free[db];
}

void Stmt::forget_statements_of(sqlite3* db) {
  StmtCache& c = stmt_cache();
  std::lock_guard<std::mutex> lock(c.mu);
  auto it = c.free.find(db);
  if (it == c.free.end()) return;
  for (auto& [text, list] : it->second)
    for (sqlite3_stmt* st : list) sqlite3_finalize(st);
  c.free.erase(it);
}

Stmt::Stmt(sqlite3* db, const char* sql) : db_(db) {
  StmtCache& c = stmt_cache();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    auto conn = c.free.find(db);
    if (conn != c.free.end()) {
      sql_ = sql;
      auto kept = conn->second.find(sql_);
      if (kept != conn->second.end() && !kept->second.empty()) {
        st_ = kept->second.back();
        kept->second.pop_back();
        return;
      }
    }
  }
  rc_ = noted(sqlite3_prepare_v3(db, sql, -1, sql_.empty() ? 0 : SQLITE_PREPARE_PERSISTENT, &st_, nullptr));
  if (!st_) prepare_error_ = sqlite3_errmsg(db);  // kept: later calls on the connection overwrite it
}

Stmt::~Stmt() {
  if (st_ && !sql_.empty()) {
    sqlite3_reset(st_);
    sqlite3_clear_bindings(st_);
    StmtCache& c = stmt_cache();
    std::lock_guard<std::mutex> lock(c.mu);
    auto conn = c.free.find(db_);
    if (conn != c.free.end() && (conn->second.size() < StmtCache::kTexts || conn->second.count(sql_))) {
      auto& list = conn->second[sql_];
      if (list.size() < StmtCache::kEach) {
        list.push_back(st_);
        return;
      }
    }
  }
  sqlite3_finalize(st_);
}
Stmt& Stmt::bind(int i, const std::string& v) {
  if (ok()) rc_ = sqlite3_bind_text(st_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  return *this;
}
Stmt& Stmt::bind(int i, double v) {
  if (ok()) rc_ = sqlite3_bind_double(st_, i, v);
  return *this;
}
Stmt& Stmt::bind(int i, long long v) {
  if (ok()) rc_ = sqlite3_bind_int64(st_, i, v);
  return *this;
}
Stmt& Stmt::bind_null(int i) {
  if (ok()) rc_ = sqlite3_bind_null(st_, i);
  return *this;
}
bool Stmt::step() {
  if (!ok()) return false;
  rc_ = noted(sqlite3_step(st_));
  return rc_ == SQLITE_ROW;
}
bool Stmt::run() {
  if (!ok()) return false;
  while ((rc_ = noted(sqlite3_step(st_))) == SQLITE_ROW) {
  }
  return rc_ == SQLITE_DONE;
}
void Stmt::reset() {
  // A statement that did not prepare (a table or column the store lacks)
  // keeps its error, so that the next run() or step() reports it.
  if (!st_) return;
  sqlite3_reset(st_);
  sqlite3_clear_bindings(st_);
  rc_ = SQLITE_OK;
}
long long Stmt::col_int(int i) const { return sqlite3_column_int64(st_, i); }
double Stmt::col_double(int i) const { return sqlite3_column_double(st_, i); }
std::string Stmt::col_text(int i) const {
  const unsigned char* t = sqlite3_column_text(st_, i);
  return t ? reinterpret_cast<const char*>(t) : "";
}
bool Stmt::col_null(int i) const { return sqlite3_column_type(st_, i) == SQLITE_NULL; }
int Stmt::columns() const { return sqlite3_column_count(st_); }
std::string Stmt::error() const { return st_ ? std::string(sqlite3_errmsg(db_)) : prepare_error_; }

// ----------------------------------------------------------------- Store

long long next_round_id(Store& s, const std::string& table, long long round_id, std::string* error) {
  const long long base = last_round_id(round_id - 1);
  const std::string sql = "SELECT MAX(id) FROM " + table + " WHERE id > ?1 AND id <= ?2";
  Stmt q(s.db(), sql.c_str());
  q.bind(1, base).bind(2, last_round_id(round_id));
  if (!q.step()) {
    *error = s.describe_error(q.rc(), "numbering a new row of " + table);
    return 0;
  }
  long long next = q.col_null(0) ? base + 1 : q.col_int(0) + 1;
  if (round_id < 1 || next > last_round_id(round_id)) {
    *error = "round " + std::to_string(round_id) + " has no numbers left for " + table;
    return 0;
  }
  return next;
}

std::string default_db_path() {
  return base::user_path("REFEREE_DB", "XDG_DATA_HOME", ".local/share", "referee/referee.db", "referee.db");
}

namespace {

// Each migration takes the schema from version i to i + 1. Never edit one
// that has shipped; add the next.
const char* const kMigrations[] = {
    // 0 -> 1: rounds, organisations, packages, systems, results, runs, curves.
    R"sql(
CREATE TABLE rounds (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,          -- training-3.1.0
  usage TEXT NOT NULL,
  version TEXT NOT NULL,
  ordinal INTEGER NOT NULL            -- major*1000000 + minor*1000 + patch, for ordering rounds
);
CREATE TABLE organisations (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE           -- folder name: NVIDIA, Azure+NVIDIA, NVIDIA_CoreWeave
);
CREATE TABLE packages (
  id INTEGER PRIMARY KEY,
  round_id INTEGER NOT NULL REFERENCES rounds(id),
  organisation_id INTEGER NOT NULL REFERENCES organisations(id),
  path TEXT NOT NULL,
  content_sha256 TEXT NOT NULL,       -- over every file imported: re-import of the same bytes changes nothing
  verdict TEXT NOT NULL,              -- pass | fail
  ruleset_sha256 TEXT NOT NULL,
  referee_version TEXT NOT NULL,
  imported_at TEXT NOT NULL,
  UNIQUE (round_id, organisation_id)
);
CREATE TABLE systems (
  id INTEGER PRIMARY KEY,
  package_id INTEGER NOT NULL REFERENCES packages(id) ON DELETE CASCADE,
  name TEXT NOT NULL,                 -- systems/<name>.json, results/<name>/
  system_name TEXT, submitter TEXT, division TEXT, availability TEXT,
  number_of_nodes INTEGER, accelerators_per_node INTEGER, accelerators_count INTEGER,
  accelerator_model_name TEXT, host_processor_model_name TEXT, host_processors_count INTEGER,
  framework TEXT,
  valid INTEGER NOT NULL,
  description_json TEXT NOT NULL,     -- the whole system.json
  UNIQUE (package_id, name)
);
CREATE TABLE results (
  id INTEGER PRIMARY KEY,
  system_id INTEGER NOT NULL REFERENCES systems(id) ON DELETE CASCADE,
  benchmark TEXT NOT NULL,
  division TEXT,
  verdict TEXT NOT NULL,              -- pass | fail
  result_count INTEGER, expected_count INTEGER,
  seeds_ok INTEGER,                   -- NULL when not checked
  rcp_status TEXT, rcp_pass INTEGER, rcp_norm_factor REAL,
  score_minutes REAL,                 -- as published (scaling.json applied)
  score_pipeline_minutes REAL,        -- with the factor the consortium's pipeline computes
  unscaled_minutes REAL,
  published_factor REAL, pipeline_factor REAL,
  resubmission INTEGER NOT NULL DEFAULT 0,  -- every run is a log from an earlier round
  UNIQUE (system_id, benchmark)
);
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  result_id INTEGER NOT NULL REFERENCES results(id) ON DELETE CASCADE,
  file TEXT NOT NULL,
  content_sha256 TEXT NOT NULL,
  fingerprint TEXT NOT NULL,          -- keys and timestamps of its MLLOG lines, submission_* left out
  run_start_ms REAL, run_stop_ms REAL, minutes REAL,
  converged INTEGER, epochs REAL, seed INTEGER,
  compliant INTEGER NOT NULL,
  counted INTEGER NOT NULL,           -- inside the olympic window
  messages_json TEXT NOT NULL,        -- findings
  resubmission_of INTEGER REFERENCES runs(id) ON DELETE SET NULL,
  UNIQUE (result_id, file)
);
CREATE INDEX runs_by_fingerprint ON runs(fingerprint);
CREATE TABLE eval_points (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  time_ms REAL NOT NULL,
  epoch REAL, samples REAL, metric REAL,
  value_json TEXT,
  PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
)sql",
    // 1 -> 2: the review workflow. Reviews and objections point at results;
    // nothing above changes.
    R"sql(
CREATE TABLE reviewers (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  organisation_id INTEGER REFERENCES organisations(id),
  UNIQUE (name, organisation_id)
);
CREATE TABLE reviews (
  id INTEGER PRIMARY KEY,
  result_id INTEGER NOT NULL REFERENCES results(id) ON DELETE CASCADE,
  reviewer_id INTEGER NOT NULL REFERENCES reviewers(id),
  status TEXT NOT NULL,               -- reviewing | approved | questioned
  note TEXT, created_at TEXT NOT NULL
);
CREATE TABLE objections (
  id INTEGER PRIMARY KEY,
  result_id INTEGER NOT NULL REFERENCES results(id) ON DELETE CASCADE,
  filed_by INTEGER NOT NULL REFERENCES organisations(id),
  reviewer_id INTEGER REFERENCES reviewers(id),
  text TEXT NOT NULL, created_at TEXT NOT NULL
);
CREATE TABLE responses (
  id INTEGER PRIMARY KEY,
  objection_id INTEGER NOT NULL REFERENCES objections(id) ON DELETE CASCADE,
  organisation_id INTEGER NOT NULL REFERENCES organisations(id),
  text TEXT NOT NULL, created_at TEXT NOT NULL
);
CREATE TABLE decisions (
  id INTEGER PRIMARY KEY,
  objection_id INTEGER NOT NULL REFERENCES objections(id) ON DELETE CASCADE,
  outcome TEXT NOT NULL,              -- upheld | rejected | withdrawn
  decided_by TEXT NOT NULL, text TEXT, created_at TEXT NOT NULL
);
)sql",
    // 2 -> 3: why a run is not counted: 'noncompliant' (dropped before the
    // olympic window) or 'olympic' (fastest or slowest); NULL when counted or
    // when its result has no score. Older rows are filled from what they hold.
    R"sql(
ALTER TABLE runs ADD COLUMN dropped TEXT;
UPDATE runs SET dropped = CASE
  WHEN counted THEN NULL
  WHEN compliant = 0 OR minutes IS NULL THEN 'noncompliant'
  WHEN (SELECT x.score_minutes FROM results x WHERE x.id = runs.result_id) IS NOT NULL THEN 'olympic'
  ELSE NULL END;
)sql",
    // 3 -> 4: energy to train, for benchmark directories with a power/
    // folder (the summarizer's "<benchmark>:Energy", joules). NULL where the
    // directory has no power results, and in rows imported before.
    R"sql(
ALTER TABLE results ADD COLUMN energy_joules REAL;           -- as published (scaling.json applied)
ALTER TABLE results ADD COLUMN energy_pipeline_joules REAL;  -- with the pipeline's factor
ALTER TABLE results ADD COLUMN energy_note TEXT;             -- why a directory with power/ has no figure
ALTER TABLE runs ADD COLUMN energy_joules REAL;
)sql",
    // 4 -> 5: the peer review of a round. The review tables of schema 2 were
    // never written by any command; they are replaced. Events are an
    // append-only log chained by hash: triggers refuse to change or delete one.
    R"sql(
DROP TABLE IF EXISTS decisions;
DROP TABLE IF EXISTS responses;
DROP TABLE IF EXISTS objections;
DROP TABLE IF EXISTS reviews;
DROP TABLE IF EXISTS reviewers;
CREATE TABLE users (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  organisation_id INTEGER REFERENCES organisations(id),  -- NULL only for administrators
  role TEXT NOT NULL CHECK (role IN ('member', 'chair', 'admin')),
  created_at TEXT NOT NULL,
  disabled_at TEXT
);
CREATE TABLE tokens (
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users(id),
  hash TEXT NOT NULL UNIQUE,          -- hex BLAKE2b-256 of the token; the token itself is never stored
  prefix TEXT NOT NULL,               -- its first characters, to name it in lists
  created_at TEXT NOT NULL,
  revoked_at TEXT
);
CREATE TABLE round_reviews (          -- a round under review: its state and schedule (UTC ISO-8601)
  round_id INTEGER PRIMARY KEY REFERENCES rounds(id),
  state TEXT NOT NULL CHECK (state IN ('review', 'final', 'published')),
  submission_deadline TEXT, objections_due TEXT, responses_due TEXT, decisions_due TEXT,
  scores_final TEXT, publication TEXT, first_meeting TEXT,
  version INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE pairings (               -- required reviews: reviewer organisation -> reviewed organisation
  id INTEGER PRIMARY KEY,
  round_id INTEGER NOT NULL REFERENCES rounds(id),
  reviewer_org INTEGER NOT NULL REFERENCES organisations(id),
  reviewed_org INTEGER NOT NULL REFERENCES organisations(id),
  reason TEXT NOT NULL,               -- rank | scale-512
  status TEXT NOT NULL DEFAULT 'assigned' CHECK (status IN ('assigned', 'in-progress', 'done')),
  version INTEGER NOT NULL DEFAULT 1,
  UNIQUE (round_id, reviewer_org, reviewed_org)
);
CREATE TABLE findings (               -- what `referee audit` found; ids stay when an audit is re-run
  id INTEGER PRIMARY KEY,
  round_id INTEGER NOT NULL REFERENCES rounds(id),
  organisation_id INTEGER NOT NULL REFERENCES organisations(id),  -- whose result it is about
  result_id INTEGER REFERENCES results(id),
  kind TEXT NOT NULL,                 -- cherry-picking | unannounced-resubmission | repeated-run-start | rcp-near-fail | power-sampling | system-mismatch | shared-hyperparameters | check-failure
  rule TEXT NOT NULL,                 -- rule file and key, or policy section
  summary TEXT NOT NULL,
  evidence_json TEXT NOT NULL,        -- [{"file","line","text"} | {"figure","value","unit"}]
  impact_minutes REAL,                -- the score if the finding holds, when it can be computed
  fingerprint TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL
);
CREATE TABLE announcements (          -- resubmitted logs of an earlier round, announced
  id INTEGER PRIMARY KEY,
  round_id INTEGER NOT NULL REFERENCES rounds(id),
  organisation_id INTEGER NOT NULL REFERENCES organisations(id),
  result_id INTEGER REFERENCES results(id),
  text TEXT NOT NULL,
  user_id INTEGER NOT NULL REFERENCES users(id),
  created_at TEXT NOT NULL
);
CREATE TABLE objections (
  id INTEGER PRIMARY KEY,
  round_id INTEGER NOT NULL REFERENCES rounds(id),
  by_org INTEGER NOT NULL REFERENCES organisations(id),
  against_org INTEGER NOT NULL REFERENCES organisations(id),
  filed_by INTEGER NOT NULL REFERENCES users(id),
  title TEXT NOT NULL,
  rule TEXT NOT NULL,                 -- rule file and key, or policy section
  text TEXT NOT NULL,
  finding_id INTEGER REFERENCES findings(id),
  state TEXT NOT NULL CHECK (state IN ('open', 'responded', 'decided', 'withdrawn')),
  impact_minutes REAL,                -- the score if the objection holds
  version INTEGER NOT NULL DEFAULT 1, -- bumped by every change: a stale update is refused
  created_at TEXT NOT NULL
);
CREATE TABLE objection_results (
  objection_id INTEGER NOT NULL REFERENCES objections(id),
  result_id INTEGER NOT NULL REFERENCES results(id),
  PRIMARY KEY (objection_id, result_id)
) WITHOUT ROWID;
CREATE TABLE evidence (
  id INTEGER PRIMARY KEY,
  objection_id INTEGER NOT NULL REFERENCES objections(id),
  kind TEXT NOT NULL CHECK (kind IN ('finding', 'lines', 'figure', 'check')),
  finding_id INTEGER REFERENCES findings(id),
  run_id INTEGER REFERENCES runs(id),
  first_line INTEGER, last_line INTEGER,
  quoted TEXT,                        -- the log lines or check message, quoted when added
  figure_name TEXT, figure_value REAL, figure_unit TEXT,
  note TEXT,
  user_id INTEGER NOT NULL REFERENCES users(id),
  created_at TEXT NOT NULL
);
CREATE TABLE responses (
  id INTEGER PRIMARY KEY,
  objection_id INTEGER NOT NULL REFERENCES objections(id),
  organisation_id INTEGER NOT NULL REFERENCES organisations(id),
  user_id INTEGER NOT NULL REFERENCES users(id),
  text TEXT NOT NULL,
  remedy TEXT CHECK (remedy IN ('none', 'fix', 'open', 'withdraw', 'normalise')),  -- what the accused proposes
  factor REAL,
  created_at TEXT NOT NULL
);
CREATE TABLE votes (                  -- one per submitting organisation; a later vote replaces it
  objection_id INTEGER NOT NULL REFERENCES objections(id),
  organisation_id INTEGER NOT NULL REFERENCES organisations(id),
  user_id INTEGER NOT NULL REFERENCES users(id),
  vote TEXT NOT NULL CHECK (vote IN ('uphold', 'reject', 'abstain')),
  remedy TEXT CHECK (remedy IN ('none', 'fix', 'open', 'withdraw', 'normalise')),
  factor REAL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (objection_id, organisation_id)
) WITHOUT ROWID;
CREATE TABLE decisions (
  id INTEGER PRIMARY KEY,
  objection_id INTEGER NOT NULL UNIQUE REFERENCES objections(id),
  outcome TEXT NOT NULL CHECK (outcome IN ('upheld', 'rejected', 'waived')),
  remedy TEXT NOT NULL CHECK (remedy IN ('none', 'fix', 'open', 'withdraw', 'normalise')),
  factor REAL,                        -- normalise: the score is the unscaled score times this
  votes_uphold INTEGER NOT NULL, votes_reject INTEGER NOT NULL, votes_abstain INTEGER NOT NULL,
  majority TEXT NOT NULL,             -- simple | two-thirds | chair-tie-break | waiver
  decided_by INTEGER NOT NULL REFERENCES users(id),
  text TEXT,
  created_at TEXT NOT NULL
);
CREATE TABLE result_status (          -- what the review did to a result; every question shows it
  result_id INTEGER PRIMARY KEY REFERENCES results(id) ON DELETE CASCADE,
  status TEXT NOT NULL CHECK (status IN ('objection-open', 'fixed', 'moved-to-open', 'withdrawn', 'normalised')),
  factor REAL,                        -- normalised: score = unscaled_minutes * factor
  objection_id INTEGER REFERENCES objections(id),
  decision_id INTEGER REFERENCES decisions(id),
  updated_at TEXT NOT NULL
);
CREATE TABLE events (                 -- the audit trail: append-only, chained by hash
  seq INTEGER PRIMARY KEY,
  at TEXT NOT NULL,                   -- UTC, ISO-8601 with milliseconds
  actor TEXT NOT NULL,                -- user name
  organisation TEXT,                  -- acting for
  role TEXT NOT NULL,
  action TEXT NOT NULL,               -- objection.file, response.add, vote.cast, decision.record, ...
  subject TEXT NOT NULL,              -- objection/12, round/training-3.1.0, user/alice
  payload_json TEXT NOT NULL,
  prev_hash TEXT NOT NULL,            -- the previous event's hash; 64 zeros for the first
  hash TEXT NOT NULL                  -- hex SHA-256 over prev_hash and the fields above
);
CREATE TRIGGER events_append_only_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'the review log is append-only: an event cannot be changed'); END;
CREATE TRIGGER events_append_only_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'the review log is append-only: an event cannot be deleted'); END;
)sql",
    // 5 -> 6: what the RCP check evaluated for a result (reference record,
    // the least mean it accepts, the runs' convergence points, unit, quality
    // target), as JSON for the result pages. NULL where the RCPs were not
    // checked, and in rows imported before (import the package again).
    R"sql(
ALTER TABLE results ADD COLUMN rcp_json TEXT;
)sql",
    // 6 -> 7: an objection's score impact as referee computes it (from the
    // runs, the RCP factor or a finding) and how, beside the one the waiver
    // takes; a figure's impact as its author gave it. NULL in rows written
    // before (their impact_minutes stays as it was).
    R"sql(
ALTER TABLE objections ADD COLUMN impact_computed REAL;
ALTER TABLE objections ADD COLUMN impact_basis TEXT;
ALTER TABLE evidence ADD COLUMN impact_minutes REAL;
)sql",
    // 7 -> 8: the checks that failed a result (the rules of its folder's
    // errors, a JSON array: ["RCP"], ["result count", "seeds"]), so that a
    // committee's acceptance of a failed RCP check is told from other
    // failures. NULL in rows imported before (import the package again).
    // And the extensions a neutral chair grants: one organisation, one
    // objection, one deadline, until a later time, for a reason (the latest
    // grant for the three replaces an earlier one; each is an event).
    R"sql(
ALTER TABLE results ADD COLUMN failed_checks TEXT;
CREATE TABLE extensions (
  id INTEGER PRIMARY KEY,
  objection_id INTEGER NOT NULL REFERENCES objections(id) ON DELETE CASCADE,
  organisation_id INTEGER NOT NULL REFERENCES organisations(id),
  deadline TEXT NOT NULL,             -- objections_due | responses_due | decisions_due
  until TEXT NOT NULL,                -- as given (ISO 8601; a bare date is the end of that day, UTC)
  reason TEXT NOT NULL,
  granted_by INTEGER REFERENCES users(id),
  created_at TEXT NOT NULL,
  UNIQUE (objection_id, organisation_id, deadline)
);
)sql",
    // 8 -> 9: the review log refuses an insert over an event it holds (INSERT OR
    // REPLACE deletes the old row without firing its delete trigger).
    R"sql(
CREATE TRIGGER events_append_only_replace BEFORE INSERT ON events WHEN EXISTS (SELECT 1 FROM events WHERE seq = NEW.seq)
BEGIN SELECT RAISE(ABORT, 'the review log is append-only: an event cannot be replaced'); END;
)sql",
    // 9 -> 10: what a result's questions read of its runs (file, time, whether
    // counted and why not, the log's digest), from an index alone: a run's row
    // also holds its findings and fingerprint (a kilobyte or more), which a
    // leaderboard or report has no use for.
    R"sql(
CREATE INDEX runs_summary ON runs(result_id, counted, minutes, file, dropped, content_sha256);
)sql",
    // 10 -> 11: the discussion of an objection: the objector, the accused and
    // the chairs comment, in any state of the objection, until the round is
    // published; each comment is an event of the review log too.
    R"sql(
CREATE TABLE comments (
  id INTEGER PRIMARY KEY,             -- numbered per round, as responses are
  objection_id INTEGER NOT NULL REFERENCES objections(id) ON DELETE CASCADE,
  organisation_id INTEGER REFERENCES organisations(id),   -- NULL: a chair or the local administrator, for none
  user_id INTEGER REFERENCES users(id),                   -- NULL: the local administrator
  text TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX comments_by_objection ON comments(objection_id, id);
)sql",
    // 11 -> 12: a vote deadline of one objection, set by a neutral chair: its
    // votes are due then rather than at the round's decisions_due.
    R"sql(
ALTER TABLE objections ADD COLUMN votes_due TEXT;
)sql",
    // 12 -> 13: the committee's meetings: when, who attended (organisations),
    // the objections discussed and the notes; the minutes are made from them
    // and the review log.
    R"sql(
CREATE TABLE meetings (
  id INTEGER PRIMARY KEY,             -- numbered per round, as announcements are
  round_id INTEGER NOT NULL REFERENCES rounds(id),
  held_at TEXT NOT NULL,              -- UTC ISO-8601
  attendees_json TEXT NOT NULL,       -- ["Azure", "NVIDIA", ...]
  objections_json TEXT NOT NULL,      -- [3, 7, ...]
  notes TEXT NOT NULL,
  user_id INTEGER REFERENCES users(id),  -- NULL: the local administrator
  created_at TEXT NOT NULL
);
)sql",
    // 13 -> 14: a fix decision's due date, and the corrected packages that
    // delivered a fix: what the replacement changed in the objection's results.
    R"sql(
ALTER TABLE decisions ADD COLUMN fix_due TEXT;  -- remedy fix: when the corrected package is due (UTC); NULL: no date
CREATE TABLE fix_deliveries (
  id INTEGER PRIMARY KEY,
  objection_id INTEGER NOT NULL REFERENCES objections(id) ON DELETE CASCADE,
  decision_id INTEGER NOT NULL REFERENCES decisions(id) ON DELETE CASCADE,
  old_sha256 TEXT NOT NULL,           -- the package replaced
  new_sha256 TEXT NOT NULL,           -- the corrected package
  changes_json TEXT NOT NULL,         -- what it changed in the objection's results (docs/review.md, "Fixes")
  event_seq INTEGER NOT NULL,         -- the package.replace event that recorded it
  created_at TEXT NOT NULL
);
CREATE INDEX fix_deliveries_by_objection ON fix_deliveries(objection_id, id);
)sql",
    // 14 -> 15: webhooks (an organisation's or a user's) and their deliveries,
    // each attempt logged.
    R"sql(
CREATE TABLE webhooks (
  id INTEGER PRIMARY KEY,
  organisation_id INTEGER REFERENCES organisations(id),  -- an organisation's hook
  user_id INTEGER REFERENCES users(id),                  -- a user's own hook
  url TEXT NOT NULL,
  secret TEXT NOT NULL,               -- the HMAC-SHA256 key, shown once when the hook was made
  events_json TEXT NOT NULL,          -- the kinds it takes (["*"]: all)
  created_by TEXT NOT NULL,           -- user name, or local-admin
  created_at TEXT NOT NULL,
  removed_at TEXT,
  CHECK ((organisation_id IS NULL) <> (user_id IS NULL))
);
CREATE TABLE webhook_deliveries (
  id INTEGER PRIMARY KEY,
  webhook_id INTEGER NOT NULL REFERENCES webhooks(id),
  key TEXT NOT NULL UNIQUE,           -- its name for the receiver (X-Referee-Delivery): random, the same on every retry
  kind TEXT NOT NULL,
  dedupe TEXT NOT NULL,               -- what it tells of (an event, a deadline): sent once per hook
  payload TEXT NOT NULL,              -- the JSON body
  state TEXT NOT NULL CHECK (state IN ('pending', 'sending', 'delivered', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT NOT NULL,
  lease_until TEXT,                   -- 'sending': claimed by a sender until then
  last_status INTEGER, last_error TEXT,
  log_json TEXT NOT NULL DEFAULT '[]',  -- each attempt: {at, status, error, ms}
  created_at TEXT NOT NULL,
  delivered_at TEXT,
  UNIQUE (webhook_id, dedupe)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(state, next_attempt_at);
)sql",
    // 15 -> 16: MLPerf HPC weak-scaling results (results/<system>/weak/<benchmark>):
    // many models trained at once, scored by throughput. Strong-scaling
    // results are results rows, as Training's. And where the consortium's
    // current package checker stops on a result's directory (old rounds).
    R"sql(
ALTER TABLE results ADD COLUMN consortium_stops TEXT;  -- what today's consortium checker raises there; NULL: it checks it
CREATE TABLE weak_results (
  id INTEGER PRIMARY KEY,
  system_id INTEGER NOT NULL REFERENCES systems(id) ON DELETE CASCADE,
  benchmark TEXT NOT NULL,
  division TEXT,
  verdict TEXT NOT NULL,              -- pass | fail
  result_count INTEGER,               -- result files
  expected_count INTEGER,             -- the least number of models
  seeds_ok INTEGER, rcp_status TEXT, rcp_pass INTEGER,
  number_of_models INTEGER,           -- compliant runs counted; NULL when too few (no score)
  instance_scale INTEGER,             -- accelerators one model used (number_of_nodes x accelerators_per_node)
  time_to_train_all_minutes REAL,     -- the first run_start to the last run_stop of the models counted
  note TEXT,                          -- why there is no score; where the consortium's summarizer stops
  failed_checks TEXT NOT NULL,        -- the checks that failed the directory (as results.failed_checks)
  UNIQUE (system_id, benchmark)
);
)sql",
    // 16 -> 17: the runs (result files) of a weak-scaling result, as runs
    // are kept for the others: what a publication copies and checks, and
    // which models the throughput counted.
    R"sql(
CREATE TABLE weak_runs (
  weak_result_id INTEGER NOT NULL REFERENCES weak_results(id) ON DELETE CASCADE,
  file TEXT NOT NULL,
  content_sha256 TEXT NOT NULL,
  run_start_ms REAL, run_stop_ms REAL,
  seed INTEGER,
  compliant INTEGER NOT NULL,
  counted INTEGER NOT NULL,           -- one of the models the throughput counts
  dropped TEXT,                       -- why not, when not
  messages_json TEXT NOT NULL,        -- findings
  PRIMARY KEY (weak_result_id, file)
) WITHOUT ROWID;
)sql",
};
static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) == kSchemaVersion);

// The tables every referee store has (schema 1 onwards).
const char* const kTables[] = {"rounds", "organisations", "packages", "systems", "results", "runs", "eval_points"};
// The review's tables (schema 5 onwards): a store of version 5 without one of them is damaged.
const char* const kReviewTables[] = {"users",     "tokens",     "round_reviews",     "pairings", "findings",
                                     "announcements", "objections", "objection_results", "evidence", "responses",
                                     "votes",     "decisions",  "result_status",     "events"};

// A path as an SQLite URI ("file:" + percent-escaped path).
std::string uri_of(const std::string& path, const char* query) {
  auto keep = [](unsigned char c) { return !(c == '%' || c == '?' || c == '#' || c < 0x20); };
  return "file:" + base::percent_encode(path, keep) + "?" + query;
}

bool file_exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

}  // namespace

// What to do about a damaged store, in every message that says so: an import
// rebuilds the results but never the peer review, so it is not the advice.
const char* const kDamageFix =
    "restore a copy from a backup (referee import would rebuild the results, but not the peer review's users, "
    "objections, decisions and log)";

std::string Store::describe_error(int rc, const std::string& what) const {
  int primary = rc & 0xff;
  std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
  // A write the system refused (a full disk, a quota, a file-size limit) is not damage: SQLite
  // rolls the change back, and the store is as it was.
  const int extended = db_ ? sqlite3_extended_errcode(db_) : rc;
  if (primary == SQLITE_FULL || extended == SQLITE_IOERR_WRITE || extended == SQLITE_IOERR_FSYNC ||
      extended == SQLITE_IOERR_TRUNCATE || extended == SQLITE_IOERR_SHMSIZE || rc == SQLITE_IOERR_WRITE ||
      rc == SQLITE_IOERR_FSYNC || rc == SQLITE_IOERR_TRUNCATE)
    return "cannot write to the store " + path_ + " (" + msg + " while " + what +
           "): the disk is full, or a quota or file-size limit stops the write; the change was not made. Free "
           "space (or raise the limit) and run the command again";
  if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB || primary == SQLITE_IOERR)
    return "the store " + path_ + " is damaged (" + msg + " while " + what +
           "); it cannot be trusted: " + kDamageFix;
  return "database " + path_ + ": " + msg + " while " + what;
}

// SQLite's own busy timeout sleeps in steps that grow to 100 ms, so a
// writer queued behind others (a server's threads) can wait far longer than
// the writes ahead of it take: with 8 concurrent writers through `referee
// serve`, p99 110-130 ms, max 640 ms. Polling every 0.1 ms for the first
// 20 ms, then every 1 ms, up to about 60 s in all: p99 35-43 ms, max 65-92 ms,
// at the same throughput (docs/review.md, "Load").
static int wait_while_busy(void*, int tries) {
  if (tries < 200) {
    usleep(100);
    return 1;
  }
  usleep(1000);
  return tries < 200 + 60000 ? 1 : 0;
}

std::unique_ptr<Store> Store::open(const std::string& path, std::string* error, OpenMode mode, bool quick_check) {
  auto s = std::unique_ptr<Store>(new Store());
  s->path_ = path;
  s->quick_check_ = quick_check;
  s->read_only_ = mode == OpenMode::ReadOnly;
  int rc;
  if (mode == OpenMode::ReadOnly) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      *error = "no store at " + path + " (nothing has been imported there; referee import DIR --round R --db " + path +
               " creates it)";
      return nullptr;
    }
    if (std::filesystem::is_directory(path, ec)) {
      *error = path + " is a folder, not a store file (give the store's file, e.g. --db " +
               (std::filesystem::path(path) / "referee.db").string() + ")";
      return nullptr;
    }
    if (!std::filesystem::is_regular_file(path, ec)) {
      *error = path + " is not a file, so not a referee store";
      return nullptr;
    }
    // Without a -wal file no process has the store open in WAL mode, so it can be
    // read as immutable: SQLite then creates no -wal/-shm files beside it, which
    // also makes a store in a read-only folder readable. Otherwise read it
    // through the WAL like any reader.
    bool immutable = !file_exists(path + "-wal");
    std::string uri = uri_of(path, immutable ? "mode=ro&immutable=1" : "mode=ro");
    rc = sqlite3_open_v2(uri.c_str(), &s->db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_FULLMUTEX, nullptr);
  } else {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      *error = path + " is a folder, not a store file (give a file in it, e.g. --db " +
               (std::filesystem::path(path) / "referee.db").string() + ")";
      return nullptr;
    }
    auto parent = std::filesystem::path(path).parent_path();
    // The default store's folder is made; a folder the user named must exist,
    // so a mistyped --db is not a new store in a new folder.
    if (!parent.empty() && !std::filesystem::exists(parent, ec)) {
      if (path != default_db_path()) {
        *error = "no folder " + parent.string() + " for the store " + path + " (check the path; mkdir -p " + parent.string() +
                 " to make it)";
        return nullptr;
      }
      std::filesystem::create_directories(parent, ec);
    }
    rc = sqlite3_open_v2(path.c_str(), &s->db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                         nullptr);
  }
  if (rc != SQLITE_OK) {
    *error = "cannot open database " + path + ": " + (s->db_ ? sqlite3_errmsg(s->db_) : "out of memory");
    return nullptr;
  }
  // Another connection writing (another process importing, a server's other
  // threads): wait for it, up to about 60 s.
  sqlite3_busy_handler(s->db_, wait_while_busy, nullptr);
  Stmt::cache_statements_of(s->db_);
  if (!s->verify(error)) return nullptr;
  if (s->read_only_) return s;
  if (!s->exec("PRAGMA foreign_keys = ON", error)) return nullptr;
  {
    Stmt st(s->db_, "PRAGMA journal_mode = WAL");
    st.step();
  }
  if (!s->exec("PRAGMA synchronous = NORMAL", error)) return nullptr;
  if (!s->migrate(error)) return nullptr;
  s->opened_version_ = kSchemaVersion;
  return s;
}

// Is this file a referee store, and undamaged? Cheap checks first: SQLite's
// header (reading the schema), the version, the tables, the file's size
// against the page count its header gives; then PRAGMA quick_check (every
// page and index entry, no cross-checks: about 12 ms for two rounds, 1.9 MB).
bool Store::verify(std::string* error) {
  std::vector<std::string> tables;
  {
    Stmt st(db_, "SELECT name FROM sqlite_master WHERE type = 'table'");
    while (st.step()) tables.push_back(st.col_text(0));
    if (!st.ok()) {
      int primary = st.rc() & 0xff;
      if (primary == SQLITE_NOTADB)
        *error = path_ + " is not a referee store: it is not an SQLite database (" + st.error() + ")";
      else if (primary == SQLITE_CANTOPEN && read_only_)
        *error = "cannot read the store " + path_ + ": " + st.error() +
                 " (its write-ahead log needs a -shm file that cannot be created there, e.g. in a read-only folder; "
                 "open it once where the folder is writable)";
      else
        *error = describe_error(st.rc(), "reading its schema");
      return false;
    }
  }
  int version = schema_version();
  if (tables.empty() && version == 0) {
    if (read_only_) {
      std::error_code ec;
      const bool empty = std::filesystem::file_size(path_, ec) == 0 && !ec;
      *error = path_ + (empty ? " is an empty file" : " is an SQLite database with no tables") +
               ", not a referee store (import into it first)";
      return false;
    }
    return true;  // a new (or empty) file: migrate() creates the schema
  }
  if (version > kSchemaVersion) {
    *error = "database " + path_ + " has schema version " + std::to_string(version) + ", newer than this referee knows (" +
             std::to_string(kSchemaVersion) + "); use a newer referee";
    return false;
  }
  if (version < 0) {
    *error = negative_version_message(version);
    return false;
  }
  std::string missing;
  for (const char* t : kTables)
    if (std::find(tables.begin(), tables.end(), t) == tables.end()) missing += (missing.empty() ? "" : ", ") + std::string(t);
  std::string review_missing;
  if (version >= 5)
    for (const char* t : kReviewTables)
      if (std::find(tables.begin(), tables.end(), t) == tables.end())
        review_missing += (review_missing.empty() ? "" : ", ") + std::string(t);
  // Schema 16 onwards: MLPerf HPC weak-scaling results.
  if (version >= 16 && std::find(tables.begin(), tables.end(), "weak_results") == tables.end())
    missing += (missing.empty() ? "" : ", ") + std::string("weak_results");
  if (version >= 17 && std::find(tables.begin(), tables.end(), "weak_runs") == tables.end())
    missing += (missing.empty() ? "" : ", ") + std::string("weak_runs");
  if (version == 0) {
    *error = path_ + " is an SQLite database but not a referee store (no schema version; tables: ";
    for (size_t i = 0; i < tables.size(); ++i) *error += (i ? ", " : "") + tables[i];
    *error += ")";
    return false;
  }
  if (!missing.empty()) {
    *error = "the store " + path_ + " is damaged: table(s) " + missing + " missing (schema version " +
             std::to_string(version) + "); " + kDamageFix;
    return false;
  }
  if (!review_missing.empty()) {
    *error = "the store " + path_ + " is damaged: review table(s) " + review_missing + " missing (schema version " +
             std::to_string(version) + "); the peer review's records cannot be rebuilt by an import: restore the store "
             "from a backup";
    return false;
  }
  opened_version_ = version;  // a question reads an older store as it is (the queries know every version)
  // A truncated file: the header's page count says more pages than the file
  // holds (only meaningful without a write-ahead log, whose pages are not yet
  // in the file).
  if (!file_exists(path_ + "-wal")) {
    long long pages = -1, page_size = 0;
    {
      Stmt st(db_, "PRAGMA page_count");
      if (st.step()) pages = st.col_int(0);
    }
    {
      Stmt st(db_, "PRAGMA page_size");
      if (st.step()) page_size = st.col_int(0);
    }
    std::error_code ec;
    auto size = std::filesystem::file_size(path_, ec);
    if (!ec && pages >= 0 && static_cast<unsigned long long>(pages * page_size) > size) {
      *error = "the store " + path_ + " is damaged: truncated (its header counts " + std::to_string(pages) +
               " pages of " + std::to_string(page_size) + " bytes, the file holds " + std::to_string(size) +
               " bytes); " + kDamageFix;
      return false;
    }
  }
  if (!quick_check_) return true;
  Stmt qc(db_, "PRAGMA quick_check(5)");
  std::string problems;
  while (qc.step()) {
    std::string line = qc.col_text(0);
    if (line != "ok") problems += "\n  " + line;
  }
  if (!qc.ok()) {
    *error = describe_error(qc.rc(), "checking it (PRAGMA quick_check)");
    return false;
  }
  if (!problems.empty()) {
    *error = "the store " + path_ + " is damaged (PRAGMA quick_check):" + problems +
             "\n  " + kDamageFix;
    return false;
  }
  return true;
}

Store::~Store() {
  Stmt::forget_statements_of(db_);
  sqlite3_close_v2(db_);
}

std::string Store::negative_version_message(int version) const {
  // PRAGMA user_version is a signed number; referee writes 1 and up.
  return "database " + path_ + " has schema version " + std::to_string(version) +
         ", which no referee writes: the file was changed outside referee (PRAGMA user_version); restore it from a "
         "backup, or set the version it was at if you know it";
}

int Store::schema_version() const {
  Stmt st(db_, "PRAGMA user_version");
  return st.step() ? static_cast<int>(st.col_int(0)) : -1;
}

bool Store::exec(const char* sql, std::string* error) {
  char* msg = nullptr;
  if (int rc = noted(sqlite3_exec(db_, sql, nullptr, nullptr, &msg)); rc != SQLITE_OK) {
    std::string what(sql);
    what = base::one_line(what.substr(0, what.find_first_of("(;")));
    *error = describe_error(rc, "running " + base::trim(what));
    sqlite3_free(msg);
    return false;
  }
  return true;
}

bool Store::begin(std::string* error) { return exec("BEGIN IMMEDIATE", error); }
bool Store::commit(std::string* error) { return exec("COMMIT", error); }
void Store::rollback() {
  std::string ignored;
  exec("ROLLBACK", &ignored);
}

namespace {
Store::UpgradeHook& upgrade_hook() {
  static Store::UpgradeHook hook;
  return hook;
}
}  // namespace

void Store::set_upgrade_hook(UpgradeHook hook) { upgrade_hook() = std::move(hook); }

bool Store::migrate(std::string* error) {
  if (!begin(error)) return false;
  int v = schema_version();
  if (v < 0) {
    rollback();
    *error = negative_version_message(v);
    return false;
  }
  if (v > kSchemaVersion) {
    rollback();
    *error = "database " + path_ + " has schema version " + std::to_string(v) + ", newer than this referee knows (" +
             std::to_string(kSchemaVersion) + "); use a newer referee";
    return false;
  }
  for (int i = v; i < kSchemaVersion; ++i) {
    if (!exec(kMigrations[i], error)) {
      rollback();
      *error = "migrating " + path_ + " to schema version " + std::to_string(i + 1) + " failed: " + *error;
      return false;
    }
  }
  if (v != kSchemaVersion) {
    std::string pragma = "PRAGMA user_version = " + std::to_string(kSchemaVersion);
    if (!exec(pragma.c_str(), error)) {
      rollback();
      return false;
    }
  }
  if (v > 0 && v < 9 && kSchemaVersion >= 9 && upgrade_hook()) {
    std::string herr;
    if (!upgrade_hook()(*this, v, &herr)) {
      rollback();
      *error = "migrating " + path_ + " to schema version " + std::to_string(kSchemaVersion) + " failed: " + herr;
      return false;
    }
  }
  return commit(error);
}

}  // namespace referee::submissions
