#pragma once
// Thin RAII layer over the SQLite C API: one connection and prepared statements; their
// failures go through errors.hpp (SQLite result codes -> typed errors). Private to
// babelqueue::sqlite.
// What it shares with the idempotency and outbox SQLite stores is core/sqlite_support.hpp.
//
// Thread-safety: a `connection` (and every `statement` prepared on it) is used by one
// thread at a time; nothing here locks.

#include <babelqueue/result.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace babelqueue::inline v1::sqlite::detail {

/// Wall-clock milliseconds since the Unix epoch, the time the queue table stores: the file is
/// shared between processes and outlives reboots, so a per-boot steady clock cannot be
/// stored in it.
inline std::int64_t wall_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

class statement;

/// One open database connection. Move-only; closing is idempotent.
class connection {
 public:
  connection() = default;
  ~connection();
  connection(connection&& other) noexcept;
  connection& operator=(connection&& other) noexcept;
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  /// Opens (creating when `create` is set) the file at `path` in read-write mode.
  static result<connection> open(const std::string& path, bool create);

  /// Runs SQL text with no parameters and no result rows (PRAGMA, DDL, BEGIN/COMMIT).
  result<void> exec(const char* sql);
  /// Prepares one statement; the text must outlive nothing (SQLite copies it).
  result<statement> prepare(std::string_view sql);

  /// Rows changed by the last INSERT/UPDATE/DELETE on this connection.
  std::int64_t changes() const noexcept;
  std::int64_t last_insert_rowid() const noexcept;
  void busy_timeout(int ms) noexcept;

  sqlite3* handle() const noexcept { return db_; }
  bool is_open() const noexcept { return db_ != nullptr; }
  void close() noexcept;

 private:
  explicit connection(sqlite3* db) : db_(db) {}
  sqlite3* db_ = nullptr;
};

/// One prepared statement. Bind indexes are 1-based, column indexes 0-based (as SQLite).
class statement {
 public:
  statement() = default;
  ~statement();
  statement(statement&& other) noexcept;
  statement& operator=(statement&& other) noexcept;
  statement(const statement&) = delete;
  statement& operator=(const statement&) = delete;

  void bind(int index, std::int64_t value) noexcept;
  void bind_null(int index) noexcept;
  /// Binds bytes as a BLOB (exact bytes, no text conversion). SQLite copies them.
  void bind_blob(int index, std::string_view bytes) noexcept;
  /// Binds UTF-8 text; SQLite copies it.
  void bind_text(int index, std::string_view text) noexcept;

  /// Executes one step (or reports a failed bind since the last reset): true when a row is
  /// available, false when done, or an error.
  result<bool> step();
  /// Resets for re-execution and clears the bindings.
  void reset() noexcept;

  std::int64_t column_int(int index) const noexcept;
  bool column_is_null(int index) const noexcept;
  std::string column_bytes(int index) const;

 private:
  friend class connection;
  statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  int bind_rc_ = 0;  // first failed bind (e.g. SQLITE_TOOBIG), reported by step()
};

/// Runs `reset()` on scope exit, so a statement never keeps a read snapshot open after use
/// (an un-reset SELECT in WAL mode pins the WAL and blocks checkpoints).
class reset_guard {
 public:
  explicit reset_guard(statement& s) noexcept : s_(s) {}
  ~reset_guard() { s_.reset(); }
  reset_guard(const reset_guard&) = delete;
  reset_guard& operator=(const reset_guard&) = delete;

 private:
  statement& s_;
};

}  // namespace babelqueue::inline v1::sqlite::detail
