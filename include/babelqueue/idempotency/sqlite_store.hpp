#pragma once
/// @file idempotency/sqlite_store.hpp
/// @brief The idempotency seen-set with claims in a SQLite database (component
/// babelqueue::idempotency_sqlite).
///
/// Tables (the Go PostgreSQL layout, wire-helpers §1.4, adapted to SQLite; migrate() creates
/// them IF NOT EXISTS):
///   `<table>` (default `babelqueue_idempotency`): message_id TEXT NOT NULL PRIMARY KEY,
///     created_at INTEGER NOT NULL, expires_at INTEGER NULL (NULL = never expires), index
///     `<table>_expires_at_idx` on (expires_at). Times are Unix epoch MILLISECONDS (UTC):
///     SQLite has no timestamp type, and claims need sub-second TTLs. A row is committed
///     while `expires_at IS NULL OR expires_at > now`.
///   `<table>_claims`: message_id TEXT NOT NULL PRIMARY KEY, owner TEXT NOT NULL (a random
///     token per claim), expires_at INTEGER NOT NULL — the in-flight marks of the claim
///     extension (store.hpp), apart from the committed ones so seen() never reports them.
///
/// Every operation is ONE statement or one SAVEPOINT (remember: upsert the mark + drop the
/// claim), so it is atomic against other connections and processes on the same file, and
/// nests inside a transaction the caller has open on an adopted connection.
/// claim() is a single `INSERT … SELECT … WHERE NOT EXISTS (committed) ON CONFLICT DO UPDATE
/// … WHERE expired`: SQLite serialises writers, so of two connections claiming one id
/// exactly one inserts. "now" is this process's system clock (all users of one file share a
/// host, so there is no skew to speak of).
///
/// ## Transactional mode
/// remember_in(db, id) writes the mark on the CALLER's connection, inside the transaction
/// that holds the handler's business change, so both commit or roll back together:
///
///     auto seen = idempotency::sqlite_store::open("app.db").value();  // its own connection
///     app.handle(urn, idempotency::wrap(seen, [&](message& m) {
///       sqlite3_exec(db, "BEGIN IMMEDIATE", …);
///       … the business change on db …
///       seen->remember_in(db, m.id()).value();  // throws (rolls back below) on failure
///       sqlite3_exec(db, "COMMIT", …);
///     }, {.remember = false}));  // wrap() only checks seen(); the handler commits the mark
///
/// @note Thread-safety: every member takes the store's mutex, so a store may be shared by
/// all consume() workers; an adopted connection must not be used by another thread while a
/// call runs. remember_in() uses only the connection it is given.

#include <babelqueue/export/idempotency_sqlite.hpp>
#include <babelqueue/idempotency/store.hpp>
#include <babelqueue/result.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

struct sqlite3;

namespace babelqueue {
inline namespace v1 {
namespace idempotency {

struct BABELQUEUE_IDEMPOTENCY_SQLITE_EXPORT sqlite_store_options {
  /// Table name: `[A-Za-z_][A-Za-z0-9_]{0,62}` (it is the only text put into SQL); the
  /// claims live in `<table>_claims`, so the name must leave room for that suffix
  /// (at most 56 bytes).
  std::string table = "babelqueue_idempotency";
  /// How long a committed mark lasts; 0 (or negative) = forever, as Go's default.
  std::chrono::milliseconds ttl{0};
  /// How long a call waits for a lock held by another connection (open() only).
  std::chrono::milliseconds busy_timeout{5000};
};

class BABELQUEUE_IDEMPOTENCY_SQLITE_EXPORT sqlite_store final : public claiming_store {
 public:
  /// Opens (creating) the database file at `path` in WAL mode with the busy timeout; the
  /// tables are created by migrate(). errc::unavailable when the file cannot be opened.
  static result<std::unique_ptr<sqlite_store>> open(const std::string& path,
                                                    sqlite_store_options options = {});
  /// Uses the caller's open connection (not owned; it must outlive the store).
  static result<std::unique_ptr<sqlite_store>> adopt(sqlite3* db,
                                                     sqlite_store_options options = {});
  ~sqlite_store() override;
  sqlite_store(const sqlite_store&) = delete;
  sqlite_store& operator=(const sqlite_store&) = delete;

  /// Creates both tables and the index if they do not exist.
  result<void> migrate();

  result<bool> seen(std::string_view id) override;
  /// Upserts the committed mark (a second remember refreshes its TTL) and drops any claim.
  result<void> remember(std::string_view id) override;
  result<void> forget(std::string_view id) override;
  result<bool> claim(std::string_view id, std::chrono::milliseconds ttl) override;
  /// Drops the claim only when this store instance took it (its owner token matches): a
  /// claim that expired and was taken over by another worker is left to that worker.
  result<void> release(std::string_view id) override;

  /// remember(id) on `db` — the caller's connection, inside the caller's transaction (see
  /// "Transactional mode"). `db` may be the adopted connection or any other one on the same
  /// file; errc::invalid_argument when it is null.
  result<void> remember_in(sqlite3* db, std::string_view id);

 private:
  struct impl;
  explicit sqlite_store(std::unique_ptr<impl> state);
  std::unique_ptr<impl> impl_;
};

}  // namespace idempotency
}  // namespace v1
}  // namespace babelqueue
