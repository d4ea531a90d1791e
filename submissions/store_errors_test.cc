// A busy store is told by SQLite's result code (submissions/store_errors.h).
#include <doctest/doctest.h>

#include "submissions/store.h"
#include "submissions/store_errors.h"
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
}

}  // namespace referee::submissions
