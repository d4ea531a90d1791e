// Failures of this thread's statements (on any store), by SQLite result
// code. A server clears them before a request and asks afterwards whether a
// statement failed because the store was busy (SQLITE_BUSY or SQLITE_LOCKED,
// after the busy timeout), to answer 503 rather than 500. Every statement of
// submissions/store.h (Stmt, Store::exec, begin, commit) is noted.
#pragma once

namespace referee::submissions {

void clear_thread_failures();
bool thread_failed_busy();

}  // namespace referee::submissions
