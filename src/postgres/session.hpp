#pragma once
// The libpq code the PostgreSQL stores share (component babelqueue::postgres; internal, this
// header is not installed): one parameterised statement with the shared error mapping, and
// a store's connection — owned (opened from a URL, reconnected once when found broken) or
// adopted (the caller's, never reconnected or closed). Table names are checked by the one
// check every SQL store shares (src/core/sql_identifier.hpp).
//
// Error mapping (docs/errors.md): no connection, a connection lost, SQLSTATE class 08
// (connection exception), 57P01-57P03 (server shutting down / starting up) and class 53
// (insufficient resources) are the component's `unavailable`; every other server error is
// `backend`. The message carries the server's own text; `native` is {"postgres", 0,
// <SQLSTATE>} for a server error and {"libpq", 0, <libpq message>} for a client-side one.
//
// Bounds (docs/errors.md "Bounded calls"): connecting (open, reconnect) gives up after
// `limits::connect_timeout` unless the URL sets libpq's own connect_timeout; a statement on
// an owned connection that gets no answer within `limits::call_timeout` is `unavailable`,
// its connection is shut (the outcome unknown: the server rolls an open transaction back)
// and the next call reconnects. Adopted connections are the caller's: their calls are
// bounded by the caller's own settings.
//
// TLS (docs/errors.md "PostgreSQL TLS"): never libpq's silent plaintext fallback —
// sslmode=prefer or allow is refused; with no sslmode (URL or PGSSLMODE) a loopback or
// unix-socket server is reached with sslmode=disable and any other with verify-full.
// Thread-safety: none; each store guards its session with its own mutex.
#include <babelqueue/error.hpp>
#include <babelqueue/result.hpp>

#include <libpq-fe.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <system_error>

namespace babelqueue {
inline namespace v1 {
namespace postgres {

/// The codes and message prefix a component reports its failures with.
struct error_codes {
  std::error_code invalid_argument;
  std::error_code unavailable;
  std::error_code backend;
  std::string prefix;  ///< e.g. "idempotency postgres"
};

/// How long connecting and one statement may take (owned connections).
struct limits {
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(10)};
  std::chrono::milliseconds call_timeout{std::chrono::seconds(30)};
};

/// The sslmode a connection string gets: its own (or PGSSLMODE's) when it names one, else
/// "disable" for a loopback or unix-socket host and "verify-full" for any other; prefer
/// and allow (libpq's silent plaintext fallback) are invalid_argument. `env_sslmode` and
/// `env_host` are PGSSLMODE and PGHOST ("" when unset). Exposed for the unit test.
result<std::string> tls_mode(const std::string& conninfo, std::string_view env_sslmode,
                             std::string_view env_host, const error_codes& codes);

/// One statement parameter. Strings and bytes are sent in binary format — their exact
/// bytes with their length: a `meta.id` with a NUL in it reaches the server whole (which
/// refuses it as text: an error, never a silently shortened id); numbers in text format.
struct param {
  std::string_view bytes;
  bool binary = false;
  bool null = false;
  /// A TEXT value (the server checks it is valid in the database encoding).
  static param text(std::string_view v) { return {v, true, false}; }
  /// A BYTEA value.
  static param blob(std::string_view v) { return {v, true, false}; }
  /// A number (or any value) in PostgreSQL's text form, e.g. "42".
  static param literal(std::string_view v) { return {v, false, false}; }
  static param none() { return {{}, false, true}; }
};

/// A statement's result (cleared on destruction); text-format columns.
class rows {
 public:
  explicit rows(PGresult* r) noexcept : r_(r) {}
  rows(rows&& other) noexcept : r_(other.r_) { other.r_ = nullptr; }
  rows& operator=(rows&& other) noexcept;
  rows(const rows&) = delete;
  rows& operator=(const rows&) = delete;
  ~rows();

  int count() const noexcept;
  /// Rows an INSERT/UPDATE/DELETE changed.
  std::int64_t affected() const noexcept;
  bool is_null(int row, int col) const noexcept;
  std::string text(int row, int col) const;
  std::int64_t integer(int row, int col) const;
  /// A BYTEA column's bytes (text format decoded).
  std::string bytes(int row, int col) const;

 private:
  PGresult* r_ = nullptr;
};

/// Runs one statement on `conn` as it is (no reconnect, no bound: the caller's connection):
/// PQexecParams with `params`, or PQexec (several statements allowed, no parameters) when
/// `params` is empty and `script` is set.
result<rows> run(PGconn* conn, const error_codes& codes, const std::string& sql,
                 std::span<const param> params, std::string_view what, bool script = false);

/// A store's connection.
class session {
 public:
  /// Connects with a libpq connection string or URL (postgresql://user@host:port/db?...).
  static result<std::unique_ptr<session>> open(const std::string& conninfo, error_codes codes,
                                               limits bounds = {});
  /// The caller's connection (not owned: never closed, never reset).
  static result<std::unique_ptr<session>> adopt(PGconn* conn, error_codes codes);
  ~session();
  session(const session&) = delete;
  session& operator=(const session&) = delete;

  PGconn* conn() const noexcept { return conn_; }
  bool owned() const noexcept { return owned_; }
  const error_codes& codes() const noexcept { return codes_; }
  /// A transaction block is open on the connection (begun by the store or by the caller).
  bool in_transaction() const noexcept;

  /// Runs one statement. An owned connection found broken is reset first; and when
  /// `retry` is set and no transaction was open, a statement that failed because the
  /// connection broke runs once more on a fresh connection (so only statements whose
  /// repetition is harmless pass `retry`). Inside a transaction a lost connection is
  /// `unavailable`: the transaction is gone, the caller starts over.
  result<rows> exec(const std::string& sql, std::span<const param> params, std::string_view what,
                    bool retry = true);
  /// Runs one statement on the connection as it is (no reset, no repetition), bounded by
  /// call_timeout on an owned connection.
  result<rows> once(const std::string& sql, std::span<const param> params, std::string_view what,
                    bool script = false);
  /// The same for a parameterless script of several statements (DDL).
  result<void> script(const std::string& sql, std::string_view what);
  /// Runs the DDL `ddl` unless every relation of `names` (tables, indexes) exists
  /// already: CREATE INDEX IF NOT EXISTS locks its table first, so a migrate() run while
  /// writers have transactions open would wait for all of them.
  result<void> migrate(std::span<const std::string> names, const std::string& ddl);

 private:
  session(PGconn* conn, bool owned, error_codes codes, limits bounds);
  result<void> ensure_connected(std::string_view what);
  result<void> reconnect(std::string_view what);
  PGconn* conn_;
  bool owned_;
  error_codes codes_;
  limits bounds_;
  bool timed_out_ = false;  ///< the last once() got no answer in time
};

/// An all-or-nothing scope on a session: BEGIN … COMMIT when no transaction is open, else
/// SAVEPOINT … RELEASE inside the caller's transaction (adopted connections). Rolled back
/// unless commit() succeeded.
class scope {
 public:
  static result<std::unique_ptr<scope>> begin(session& s, std::string_view what);
  ~scope();
  scope(const scope&) = delete;
  scope& operator=(const scope&) = delete;
  result<void> commit();
  void rollback() noexcept;

 private:
  scope(session& s, bool nested) : s_(s), nested_(nested) {}
  session& s_;
  bool nested_;
  bool done_ = false;
};

}  // namespace postgres
}  // namespace v1
}  // namespace babelqueue
