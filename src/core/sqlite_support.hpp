#pragma once
// What the three users of SQLite share — the sqlite:// transport (src/sqlite/db.cpp) and the
// idempotency and outbox stores (src/idempotency_sqlite/, src/outbox_sqlite/): the native
// text of a failed call, the stores' "transient" class of codes, the exact bytes
// of a column, the stores' open (serialized, busy timeout, WAL) and their savepoints. Each
// user keeps its own mapping onto its error codes (docs/errors.md has the tables).
// Header-only and private (`#include "core/sqlite_support.hpp"`); only components that link
// SQLite::SQLite3 include it.
//
// Thread-safety: stateless functions over the caller's handles (SQLite's rules apply).

#include <sqlite3.h>

#include <chrono>
#include <cstddef>
#include <string>

namespace babelqueue::inline v1::detail::sqlite_support {

/// SQLite's text for a failed call: sqlite3_errmsg() of `db` (the most recent failure on
/// it, naming the file or constraint), or sqlite3_errstr(rc) when there is no handle.
inline std::string native_text(sqlite3* db, int rc) {
  return db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
}

/// A busy or locked database, an I/O error or a file that cannot be opened: worth another
/// try later (the stores' `unavailable`); anything else is the backend refusing.
inline bool transient(int rc) noexcept {
  const int primary = rc & 0xff;
  return primary == SQLITE_BUSY || primary == SQLITE_LOCKED || primary == SQLITE_IOERR ||
         primary == SQLITE_CANTOPEN;
}

/// The bytes of column `col` of the current row exactly as stored (empty for NULL).
inline std::string column_bytes(sqlite3_stmt* s, int col) {
  // blob() before bytes(): that order returns the stored bytes with no conversion.
  const void* data = sqlite3_column_blob(s, col);
  const int size = sqlite3_column_bytes(s, col);
  if (data == nullptr || size <= 0) return {};
  return {static_cast<const char*>(data), static_cast<std::size_t>(size)};
}

/// A store's open of `path`: read-write, created when missing, serialized (a store is used
/// from any thread). `*db` is set even when the open fails and must be closed either way
/// (SQLite's rule). On success the busy timeout is set and the journal switched to WAL (so
/// readers do not wait for writers). A failure's step is put in `*what` ("open '<path>'",
/// "set WAL").
inline int open_store(const std::string& path, std::chrono::milliseconds busy_timeout, sqlite3** db,
                      std::string* what) {
  const int rc =
      sqlite3_open_v2(path.c_str(), db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    *what = "open '" + path + "'";
    return rc;
  }
  sqlite3_busy_timeout(*db, static_cast<int>(busy_timeout.count()));
  if (const int w = sqlite3_exec(*db, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
      w != SQLITE_OK) {
    *what = "set WAL";
    return w;
  }
  return SQLITE_OK;
}

/// A savepoint rather than BEGIN: it nests inside a transaction the caller of an adopted
/// connection has open, where BEGIN would fail. begin, then release on success, or
/// rollback (which also releases) after a failure — build that failure's error first, while
/// sqlite3_errmsg() still describes it.
inline int savepoint_begin(sqlite3* db, const std::string& name) {
  return sqlite3_exec(db, ("SAVEPOINT " + name).c_str(), nullptr, nullptr, nullptr);
}
inline int savepoint_release(sqlite3* db, const std::string& name) {
  return sqlite3_exec(db, ("RELEASE " + name).c_str(), nullptr, nullptr, nullptr);
}
inline void savepoint_rollback(sqlite3* db, const std::string& name) {
  sqlite3_exec(db, ("ROLLBACK TO " + name + "; RELEASE " + name).c_str(), nullptr, nullptr,
               nullptr);
}

}  // namespace babelqueue::inline v1::detail::sqlite_support
