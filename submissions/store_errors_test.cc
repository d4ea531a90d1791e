// A busy store is told by SQLite's result code (submissions/store_errors.h).
#include <doctest/doctest.h>

#include "submissions/store.h"
#include "submissions/store_errors.h"
#include "tests/run_referee.h"
#include "tests/temp_dir.h"

namespace referee::submissions {

TEST_SUITE("store") {
  TEST_CASE("a write refused because another connection holds the write lock is noted as busy; other failures are not") {
    testing::TempDir dir("referee-busy-");
    std::string db = (dir.path / "s.db").string(), error;
    auto first = Store::open(db, &error);
    REQUIRE_MESSAGE(first, error);
    auto second = Store::open(db, &error, OpenMode::ReadWrite, false);
    REQUIRE_MESSAGE(second, error);
    sqlite3_busy_handler(second->db(), nullptr, nullptr);  // no waiting: SQLITE_BUSY at once
    clear_thread_failures();
    CHECK_FALSE(second->exec("SELECT * FROM no_such_table", &error));
    CHECK_FALSE(thread_failed_busy());  // an error, but not a busy store
    REQUIRE(first->begin(&error));
    CHECK_FALSE(second->begin(&error));
    CHECK(thread_failed_busy());
    clear_thread_failures();
    CHECK_FALSE(thread_failed_busy());
    first->rollback();
    REQUIRE(second->begin(&error));
    second->rollback();
    CHECK_FALSE(thread_failed_busy());
  }

  TEST_CASE("a write the system refuses (a file-size limit, as a full disk) is said as such, not as a damaged store") {
    testing::TempDir dir("referee-full-");
    const std::string db = (dir.path / "s.db").string();
    std::string out;
    const std::string import = std::string(REFEREE_BINARY) + " import " + REFEREE_SOURCE_DIR +
                               "/submissions/examples/ExampleOrg --round mini-1.0.0 --db " + db;
    int rc = testing::run_shell_capture("(ulimit -f 8; trap '' XFSZ; " + import + ")", &out);
    CHECK(rc == 2);
    CHECK_MESSAGE(out.find("cannot write to the store " + db + " (") != std::string::npos, out);
    CHECK_MESSAGE(out.find("a quota or file-size limit stops the write; the change was not made") != std::string::npos, out);
    CHECK(out.find("damaged") == std::string::npos);
    // Without the limit, the same command works on the same file.
    rc = testing::run_shell_capture(import, &out);
    CHECK_MESSAGE(rc == 0, out);
  }
}

}  // namespace referee::submissions
