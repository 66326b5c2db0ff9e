#pragma once
/// @file outbox/sqlite_store.hpp
/// @brief The outbox in a SQLite database (component babelqueue::outbox_sqlite).
///
/// Table (default `babelqueue_outbox`, wire-helpers §2.6 adapted to SQLite):
///   id INTEGER PRIMARY KEY AUTOINCREMENT, queue TEXT NOT NULL, body BLOB NOT NULL (the
///   exact bytes), status TEXT NOT NULL DEFAULT 'pending' (pending | published | parked),
///   attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT (first 500 bytes),
///   created_at / published_at / failed_at TEXT (RFC 3339 UTC), deliver_at INTEGER (the row's
///   delivery time in Unix epoch milliseconds, NULL = at once; store.hpp), index
///   `<table>_pending_idx` on (status, id). migrate() creates them IF NOT EXISTS.
///
/// A table made by an older version of this SDK (no deliver_at) is upgraded with
/// `ALTER TABLE … ADD COLUMN deliver_at INTEGER` (no row rewritten; its rows stay due at
/// once) by migrate(), and by open() on the store's own connection (a failure there is not
/// fatal: the store goes on as before and save_at() answers errc::not_supported until
/// migrate() succeeds). adopt() issues no DDL on the caller's connection; until the column
/// exists its store reads every row as due at once and refuses save_at() (not_supported).
///
/// Two ways to hold the connection:
///  - open(path): the store owns its connection (WAL, busy timeout) — for the relay;
///  - adopt(db): the CALLER's `sqlite3*` (not owned, must outlive the store) — for the
///    writer, so save() runs inside the transaction the caller has open on that connection
///    and commits or rolls back with the business change.
/// SQLite has no row locks to claim pending rows with (PostgreSQL's FOR UPDATE SKIP LOCKED),
/// so two relays on one file would publish the same rows: run ONE relay per SQLite file.
/// @note Thread-safety: every member takes the store's mutex, so a store may be shared by
/// threads; an adopted connection must not be used by another thread while a call runs.

#include <babelqueue/export/outbox_sqlite.hpp>
#include <babelqueue/outbox/store.hpp>
#include <babelqueue/result.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

struct sqlite3;

namespace babelqueue {
inline namespace v1 {
namespace outbox {

struct BABELQUEUE_OUTBOX_SQLITE_EXPORT sqlite_store_options {
  /// Table name: `[A-Za-z_][A-Za-z0-9_]{0,62}` (it is the only text put into SQL).
  std::string table = "babelqueue_outbox";
  /// A row is parked when its publish failed this many times; 0 = never park.
  std::int64_t park_after = 5;
  /// How long a call waits for a lock held by another connection (open() only).
  std::chrono::milliseconds busy_timeout{5000};
};

class BABELQUEUE_OUTBOX_SQLITE_EXPORT sqlite_store final : public store {
 public:
  /// Opens (creating) the database file at `path`; the table is created by migrate().
  static result<std::unique_ptr<sqlite_store>> open(const std::string& path,
                                                    sqlite_store_options options = {});
  /// Uses the caller's open connection (not owned).
  static result<std::unique_ptr<sqlite_store>> adopt(sqlite3* db,
                                                     sqlite_store_options options = {});
  ~sqlite_store() override;
  sqlite_store(const sqlite_store&) = delete;
  sqlite_store& operator=(const sqlite_store&) = delete;

  /// Creates the table and its index if they do not exist.
  result<void> migrate();

  result<std::string> save(std::string_view body, std::string_view queue) override;
  result<std::string> save_at(std::string_view body, std::string_view queue,
                              due_time deliver_at) override;
  result<std::vector<record>> fetch_unpublished(std::size_t limit) override;
  result<std::vector<record>> fetch_due(std::size_t limit, due_time until) override;
  result<void> mark_published(std::span<const std::string> ids) override;
  result<void> mark_failed(std::string_view id, std::string_view reason) override;
  result<std::vector<record>> list(const list_options& options) override;
  result<std::size_t> retry(std::span<const std::string> ids) override;

 private:
  struct impl;
  explicit sqlite_store(std::unique_ptr<impl> state);
  result<std::string> insert(std::string_view body, std::string_view queue,
                             std::optional<due_time> deliver_at);
  std::unique_ptr<impl> impl_;
};

}  // namespace outbox
}  // namespace v1
}  // namespace babelqueue
