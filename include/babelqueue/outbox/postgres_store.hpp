#pragma once
/// @file outbox/postgres_store.hpp
/// @brief The outbox in PostgreSQL (component babelqueue::outbox_postgres, libpq), for
/// fleets: several relays may work one table.
///
/// Table (default `babelqueue_outbox`, wire-helpers §2.6 for PostgreSQL):
///   id BIGSERIAL PRIMARY KEY, queue TEXT NOT NULL, body BYTEA NOT NULL (the exact bytes:
///   BYTEA, not TEXT, so no encoding rule or NUL can ever change or refuse a body),
///   status TEXT NOT NULL DEFAULT 'pending' (pending | published | parked),
///   attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT (at most 500 bytes, cut on a
///   UTF-8 boundary), created_at TIMESTAMPTZ NOT NULL DEFAULT now(), published_at /
///   failed_at TIMESTAMPTZ, deliver_at BIGINT (the row's delivery time in Unix epoch
///   milliseconds, NULL = at once; store.hpp); partial index `<table>_pending_idx` on (id)
///   WHERE status = 'pending'. migrate() creates them IF NOT EXISTS, and issues no DDL at all
///   when they exist (CREATE INDEX would wait for every open transaction that writes the
///   table).
///
/// A table made by an older version of this SDK (no deliver_at) is upgraded with
/// `ALTER TABLE … ADD COLUMN IF NOT EXISTS deliver_at BIGINT NULL` (catalog only, no row
/// rewritten; its rows stay due at once) by migrate(), and by open() on the store's own
/// connection. Its ACCESS EXCLUSIVE lock waits at most 3 s (lock_timeout), so it never
/// holds up the writers behind a long transaction; a failure in open() is not fatal (the
/// store goes on as before and save_at() answers errc::not_supported until migrate()
/// succeeds). adopt() issues no DDL on the caller's connection; until the column exists its
/// store reads every row as due at once and refuses save_at() (not_supported). Relays of an
/// older version read every pending row as due: upgrade the relays before writers save
/// rows with a time.
///
/// Two ways to hold the connection:
///  - open(url): the store owns its connection — for a relay. Found broken (server
///    restart), it reconnects once; a statement that cannot safely run twice (save,
///    mark_failed) is not repeated;
///  - adopt(conn): the CALLER's `PGconn*` (not owned, never reset) — for the writer, so
///    save() runs inside the transaction the caller has open and commits or rolls back
///    with the business change.
///
/// Claiming rows (two relays never publish the same row while both are alive):
/// fetch_unpublished() BEGINs a transaction and reads the oldest pending rows
/// `FOR UPDATE SKIP LOCKED`; the row locks hold for the whole pass, while the relay
/// publishes, and another relay's fetch skips the locked rows and takes the next ones.
/// The pass's transaction ends with it: mark_published() commits it (and so does the
/// mark_failed() that accounts for the last fetched row when every row of the pass
/// failed); the next fetch commits a pass that was left open, and any error rolls it back.
/// A relay that dies mid-pass loses its connection, the server rolls its transaction back,
/// and the rows it held are pending again for the next relay (those it had published go
/// out again: at-least-once — consumers dedupe on `meta.id`). A row lock does not expire
/// while its relay lives, however long a pass takes (back-off sleeps included), which a
/// lease column could not promise. On an adopted connection whose caller already has a
/// transaction open, fetch runs inside it and the caller's COMMIT ends the pass.
/// @note Thread-safety: every member takes the store's mutex. A pass is state of the
/// store's one connection, so one store serves ONE relay; run each relay with its own
/// store (its own connection). A save() on the relay's own store during a pass is committed
/// with that pass.

#include <babelqueue/export/outbox_postgres.hpp>
#include <babelqueue/outbox/store.hpp>
#include <babelqueue/result.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

using PGconn = struct pg_conn;  // libpq-fe.h's handle

namespace babelqueue {
inline namespace v1 {
namespace outbox {

struct BABELQUEUE_OUTBOX_POSTGRES_EXPORT postgres_store_options {
  /// Table name: `[A-Za-z_][A-Za-z0-9_]{0,62}` (it is the only text put into SQL).
  std::string table = "babelqueue_outbox";
  /// A row is parked when its publish failed this many times; 0 = never park.
  std::int64_t park_after = 5;
  /// open(): connecting (and each reconnect) gives up after this long, unless the URL sets
  /// libpq's connect_timeout (whole seconds; rounded up).
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(10)};
  /// open(): a statement that gets no answer within this is errc::unavailable (a server that
  /// stalls, a network that drops packets); the connection is closed — the statement's
  /// outcome is unknown, the server rolls back an open transaction — and the next call
  /// reconnects. An adopted connection is the caller's: its calls are bounded by the
  /// caller's own settings (e.g. tcp_user_timeout, keepalives).
  std::chrono::milliseconds call_timeout{std::chrono::seconds(30)};
};

class BABELQUEUE_OUTBOX_POSTGRES_EXPORT postgres_store final : public store {
 public:
  /// Connects with `conninfo` (URL or key=value string); the table is made by migrate().
  static result<std::unique_ptr<postgres_store>> open(const std::string& conninfo,
                                                      postgres_store_options options = {});
  /// Uses the caller's open connection (not owned; must outlive the store).
  static result<std::unique_ptr<postgres_store>> adopt(PGconn* conn,
                                                       postgres_store_options options = {});
  /// Rolls back a pass it left open.
  ~postgres_store() override;
  postgres_store(const postgres_store&) = delete;
  postgres_store& operator=(const postgres_store&) = delete;

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
  explicit postgres_store(std::unique_ptr<impl> state);
  std::unique_ptr<impl> impl_;
};

}  // namespace outbox
}  // namespace v1
}  // namespace babelqueue
