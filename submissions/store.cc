#include "submissions/store.h"

#include <cstdlib>
#include <filesystem>

namespace referee::submissions {

// ----------------------------------------------------------------- Stmt

Stmt::Stmt(sqlite3* db, const char* sql) : db_(db) { rc_ = sqlite3_prepare_v2(db, sql, -1, &st_, nullptr); }
Stmt::~Stmt() { sqlite3_finalize(st_); }
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
  rc_ = sqlite3_step(st_);
  return rc_ == SQLITE_ROW;
}
bool Stmt::run() {
  if (!ok()) return false;
  while ((rc_ = sqlite3_step(st_)) == SQLITE_ROW) {
  }
  return rc_ == SQLITE_DONE;
}
void Stmt::reset() {
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
std::string Stmt::error() const { return sqlite3_errmsg(db_); }

// ----------------------------------------------------------------- Store

std::string default_db_path() {
  if (const char* p = std::getenv("REFEREE_DB"); p && *p) return p;
  if (const char* x = std::getenv("XDG_DATA_HOME"); x && *x) return std::string(x) + "/referee/referee.db";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.local/share/referee/referee.db";
  return "referee.db";
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
};
static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) == kSchemaVersion);

}  // namespace

std::unique_ptr<Store> Store::open(const std::string& path, std::string* error) {
  auto s = std::unique_ptr<Store>(new Store());
  s->path_ = path;
  std::error_code ec;
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (sqlite3_open_v2(path.c_str(), &s->db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                      nullptr) != SQLITE_OK) {
    *error = "cannot open database " + path + ": " + (s->db_ ? sqlite3_errmsg(s->db_) : "out of memory");
    return nullptr;
  }
  sqlite3_busy_timeout(s->db_, 60000);  // another process importing: wait for it
  if (!s->exec("PRAGMA foreign_keys = ON", error)) return nullptr;
  {
    Stmt st(s->db_, "PRAGMA journal_mode = WAL");
    st.step();
  }
  if (!s->exec("PRAGMA synchronous = NORMAL", error)) return nullptr;
  if (!s->migrate(error)) return nullptr;
  return s;
}

Store::~Store() { sqlite3_close_v2(db_); }

int Store::schema_version() const {
  Stmt st(db_, "PRAGMA user_version");
  return st.step() ? static_cast<int>(st.col_int(0)) : -1;
}

bool Store::exec(const char* sql, std::string* error) {
  char* msg = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &msg) != SQLITE_OK) {
    *error = std::string("database ") + path_ + ": " + (msg ? msg : "error");
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

bool Store::migrate(std::string* error) {
  if (!begin(error)) return false;
  int v = schema_version();
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
  return commit(error);
}

}  // namespace referee::submissions
