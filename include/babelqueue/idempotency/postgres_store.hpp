#pragma once
/// @file idempotency/postgres_store.hpp
/// @brief The idempotency seen-set in PostgreSQL with the claim extension (component
/// babelqueue::idempotency_postgres, libpq).
///
/// Committed ids use Go's table exactly (wire-helpers §1.4, decision D8), so a Go worker
/// and this one share it — each reads the other's marks as seen:
///   CREATE TABLE IF NOT EXISTS babelqueue_idempotency (
///     message_id TEXT NOT NULL PRIMARY KEY,
///     created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
///     expires_at TIMESTAMPTZ NULL);                      -- NULL = never expires
///   CREATE INDEX IF NOT EXISTS babelqueue_idempotency_expires_at_idx
///     ON babelqueue_idempotency (expires_at);
/// seen = `SELECT 1 … WHERE message_id = $1 AND (expires_at IS NULL OR expires_at > now())`,
/// remember = Go's conditional upsert (`INSERT … ON CONFLICT (message_id) DO UPDATE …
/// WHERE <t>.expires_at IS NOT NULL AND <t>.expires_at <= now()`: a live mark is kept, an
/// expired one renewed), forget = `DELETE … WHERE message_id = $1`.
/// Ids are stored verbatim, except one that holds a NUL (JSON `"\u0000"`), which TEXT
/// cannot store: it is kept under `bq-nul:` + the hex of all its bytes (exact; Go cannot
/// store such an id at all). Bytes that are not UTF-8 are refused by the server (`backend`).
/// One difference from Go, by choice: `expires_at` is computed by the SERVER
/// (`now() + ttl`), where Go sends its client clock's `now + ttl`. The expiry is compared
/// with the server's `now()` in every statement, so a client clock that runs ahead or behind
/// would shift every TTL by the skew; the row layout and its meaning are unchanged.
///
/// Claims (store.hpp, PHP's two-state model) live in a table of their own,
/// `<table>_claims (message_id TEXT PRIMARY KEY, token TEXT NOT NULL, expires_at
/// TIMESTAMPTZ NOT NULL, created_at TIMESTAMPTZ NOT NULL DEFAULT now())`, so the committed
/// table stays byte-for-byte Go's (a Go worker never sees an in-flight claim as seen).
/// claim() is one upsert that takes an absent or expired claim (a random token per call
/// marks it as this caller's), then — in the same transaction, after any concurrent
/// remember() on that id has committed — gives it up again when the id is committed;
/// release() deletes only a live claim, and only the one this store took (a worker whose
/// claim expired and was taken over cannot release its successor's); remember() commits the
/// id and deletes its claim in one statement.
///
/// Connections: open(url) owns a libpq connection (`postgresql://user@host:port/db`, any
/// libpq connection string) and, finding it broken (server restart), reconnects once and
/// runs the statement again; adopt(conn) uses the caller's `PGconn*` (not owned, never
/// reset). Either way every statement is parameterised (PQexecParams); the table names are
/// the only text put into SQL, and they are validated.
///
/// Transactional mode (wrap.hpp, `wrap_options{.remember = false}`): the handler marks the
/// id on ITS OWN connection, inside the transaction that holds its business change, so the
/// effect and the mark commit or roll back together — the "handler succeeded, mark failed"
/// window of the plain wrap is closed:
///
///     std::shared_ptr<idempotency::postgres_store> seen =
///         idempotency::postgres_store::open(url).value();  // wrap's seen() check
///     app.handle(urn, idempotency::wrap(seen, [&](message& m) {
///       begin(app_conn);                           // the handler's own transaction
///       ... the business change on app_conn ...
///       seen->remember_in(app_conn, m.id()).value();  // the mark, same transaction
///       commit(app_conn);  // effect + mark, or neither; throw on failure (redelivered)
///     }, {.remember = false}));
///
/// Errors (idempotency/error.hpp): a connection that cannot be made or was lost, and
/// SQLSTATE classes 08 / 53 / 57P01-57P03, are `unavailable`; other server errors are
/// `backend` with the server's message (native: {"postgres", 0, SQLSTATE}); an unsafe table
/// name or a null connection is `invalid_argument`.
/// @note Thread-safety: every member takes the store's mutex (one connection per store), so
/// a store may be shared by all consume() workers; an adopted connection must not be used
/// by another thread while a call runs.

#include <babelqueue/export/idempotency_postgres.hpp>
#include <babelqueue/idempotency/store.hpp>
#include <babelqueue/result.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

using PGconn = struct pg_conn;  // libpq-fe.h's handle

namespace babelqueue {
inline namespace v1 {
namespace idempotency {

struct BABELQUEUE_IDEMPOTENCY_POSTGRES_EXPORT postgres_store_options {
  /// The committed-id table: `[A-Za-z_][A-Za-z0-9_]{0,62}` (Go's WithTable rule).
  std::string table = "babelqueue_idempotency";
  /// The claims table; "" = `<table>_claims` (which must then fit in 63 characters).
  std::string claims_table = {};
  /// How long a committed mark lasts; 0 (or negative) = forever (Go's WithTTL).
  std::chrono::milliseconds ttl{0};
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

class BABELQUEUE_IDEMPOTENCY_POSTGRES_EXPORT postgres_store final : public claiming_store {
 public:
  /// Connects with `conninfo` (URL or key=value string); the tables are made by migrate().
  static result<std::unique_ptr<postgres_store>> open(const std::string& conninfo,
                                                      postgres_store_options options = {});
  /// Uses the caller's open connection (not owned; must outlive the store).
  static result<std::unique_ptr<postgres_store>> adopt(PGconn* conn,
                                                       postgres_store_options options = {});
  ~postgres_store() override;
  postgres_store(const postgres_store&) = delete;
  postgres_store& operator=(const postgres_store&) = delete;

  /// Creates both tables and the expires_at index if they do not exist (no DDL at all when
  /// all three exist: CREATE INDEX would wait for the table's open writers). Needed before
  /// remember() even on a table Go made: remember() also ends the id's claim.
  result<void> migrate();

  result<bool> seen(std::string_view id) override;
  result<void> remember(std::string_view id) override;
  result<void> forget(std::string_view id) override;
  result<bool> claim(std::string_view id, std::chrono::milliseconds ttl) override;
  result<void> release(std::string_view id) override;

  /// remember(id) on `conn` — the caller's connection, inside the transaction it has open
  /// (the transactional mode above); committed or rolled back with it. Never reconnects.
  result<void> remember_in(PGconn* conn, std::string_view id);

  /// The table names in use.
  const std::string& table() const noexcept;
  const std::string& claims_table() const noexcept;

 private:
  struct impl;
  explicit postgres_store(std::unique_ptr<impl> state);
  std::unique_ptr<impl> impl_;
};

}  // namespace idempotency
}  // namespace v1
}  // namespace babelqueue
