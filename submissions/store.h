// The SQLite store: rounds, organisations, packages, systems, benchmark
// results, runs and their evaluation curves, with room for reviews.
//
// One file, WAL mode, foreign keys on, prepared statements only, a schema
// version in PRAGMA user_version with migrations. Every write is one
// transaction; a failure or a kill leaves the file as it was before it.
// Questions open the store read-only and never create anything; a file that
// is not a referee store, or a damaged one, is reported as such.
#pragma once

#include <sqlite3.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace referee::submissions {

inline constexpr int kSchemaVersion = 17;

// Rows that belong to a round are numbered per round, not by a counter of
// the whole store: round r's rows (rounds.id r) take the ids
// (r - 1) x kIdsPerRound + 1, + 2, ... in each table (packages, systems,
// results, runs, and the review's objections, findings, pairings, decisions,
// responses, evidence, announcements, extensions), so that the numbers
// anyone sees of a round count what that round holds, never what a round
// hidden from them holds.
inline constexpr long long kIdsPerRound = 1000000;

// The highest id round `round_id`'s block holds.
inline constexpr long long last_round_id(long long round_id) { return round_id * kIdsPerRound; }

// A prepared statement with bound values; throws nothing, reports via ok().
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql);
  ~Stmt();
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  Stmt& bind(int i, const std::string& v);
  Stmt& bind(int i, double v);
  Stmt& bind(int i, long long v);
  Stmt& bind(int i, int v) { return bind(i, static_cast<long long>(v)); }
  Stmt& bind(int i, bool v) { return bind(i, static_cast<long long>(v)); }
  Stmt& bind_null(int i);
  bool step();  // true while a row is available
  bool run();   // execute to completion; false on error
  void reset();
  long long col_int(int i) const;
  double col_double(int i) const;
  std::string col_text(int i) const;
  bool col_null(int i) const;
  int columns() const;  // the number of columns a row of the statement has
  // A number column that may be NULL: `has` = not NULL, `value` as col_double
  // (0 for NULL). For row().
  struct Maybe {
    bool& has;
    double& value;
  };
  static Maybe maybe(bool& has, double& value) { return {has, value}; }
  // Reads the row's columns 0, 1, 2, ... into `out...` in order, each by its
  // type: long long and int (col_int; NULL = 0), double, std::string (NULL =
  // ""), bool (an integer not 0), Maybe.
  template <typename... T>
  void row(T&&... out) const {
    int i = 0;
    (read_col(i++, out), ...);
  }
  bool ok() const { return rc_ == SQLITE_OK || rc_ == SQLITE_DONE || rc_ == SQLITE_ROW; }
  int rc() const { return rc_; }
  std::string error() const;

 private:
  void read_col(int i, long long& v) const { v = col_int(i); }
  void read_col(int i, int& v) const { v = static_cast<int>(col_int(i)); }
  void read_col(int i, double& v) const { v = col_double(i); }
  void read_col(int i, std::string& v) const { v = col_text(i); }
  void read_col(int i, bool& v) const { v = col_int(i) != 0; }
  void read_col(int i, Maybe m) const {
    m.has = !col_null(i);
    m.value = col_double(i);
  }
  sqlite3* db_;
  sqlite3_stmt* st_ = nullptr;
  int rc_ = SQLITE_OK;
  std::string prepare_error_;  // why the statement did not prepare
  std::string sql_;  // the text it was prepared from, when it goes back to its connection's cache

 public:
  // The statements of a connection a Store opened are prepared once and kept
  // (reset) for the next Stmt of the same text: a question that asks the same
  // few statements for each of hundreds of rows parses each once. Store calls
  // these when it opens and closes its connection; Stmts on any other
  // connection are prepared and finalized each time.
  static void cache_statements_of(sqlite3* db);
  static void forget_statements_of(sqlite3* db);
};

enum class OpenMode {
  ReadWrite,  // create the file (and its folders) if needed, migrate: imports
  ReadOnly,   // the file must exist; nothing is created or written: questions
};

class Store {
 public:
  // ReadWrite: opens (creating if needed) and migrates. ReadOnly: opens an
  // existing store with SQLITE_OPEN_READONLY; when no other process has it
  // open (no -wal file beside it) as immutable, so that nothing is created
  // beside it and a store in a read-only folder can be read. Both modes check
  // that the file is an undamaged referee store (a SQLite header, the
  // schema's tables, a size that matches the header, PRAGMA quick_check).
  // Returns null with *error. `quick_check` false leaves out PRAGMA
  // quick_check (it reads every page): for a second connection to a store
  // this process has already checked, e.g. a server's per-thread ones.
  static std::unique_ptr<Store> open(const std::string& path, std::string* error,
                                     OpenMode mode = OpenMode::ReadWrite, bool quick_check = true);
  ~Store();

  sqlite3* db() const { return db_; }
  const std::string& path() const { return path_; }
  bool read_only() const { return read_only_; }
  int schema_version() const;
  // Why a store whose schema version is below 0 is refused.
  std::string negative_version_message(int version) const;
  // The version found when the store was opened (after migration for
  // ReadWrite); a ReadOnly store may be older than kSchemaVersion.
  int opened_version() const { return opened_version_; }

  // What to say when a statement failed: "the store PATH is damaged: ..."
  // for corruption, else the SQLite message with the path.
  std::string describe_error(int rc, const std::string& what) const;

  // BEGIN IMMEDIATE (waits for other writers up to the busy timeout).
  bool begin(std::string* error);
  bool commit(std::string* error);
  void rollback();
  bool exec(const char* sql, std::string* error);

  // Called inside the migration's transaction when a store that holds data is
  // taken from a schema before 9 to 9 or later (after the SQL steps), so that
  // the review records the packages the store already holds
  // (review::adopt_packages): from schema 9 every package must have an event.
  // False (with *error) rolls the migration back. Set once, at start.
  using UpgradeHook = std::function<bool(Store& store, int from_version, std::string* error)>;
  static void set_upgrade_hook(UpgradeHook hook);

 private:
  bool migrate(std::string* error);
  bool verify(std::string* error);
  sqlite3* db_ = nullptr;
  std::string path_;
  bool read_only_ = false;
  bool quick_check_ = true;
  int opened_version_ = 0;
};

// The first id of the next row of `table` in round `round_id` (kIdsPerRound):
// one more than the highest of that round's block. Inside the writing
// transaction. Post: > 0; 0 with *error on a store error or a full block.
long long next_round_id(Store& s, const std::string& table, long long round_id, std::string* error);

// The default database: $REFEREE_DB, else $XDG_DATA_HOME/referee/referee.db,
// else ~/.local/share/referee/referee.db.
std::string default_db_path();

}  // namespace referee::submissions
