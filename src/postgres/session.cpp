// The libpq code the PostgreSQL stores share (session.hpp).
#include "postgres/session.hpp"

#include "core/propagate.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace babelqueue {
inline namespace v1 {
namespace postgres {
namespace {

std::string trimmed(const char* text) {
  std::string s = text == nullptr ? std::string() : std::string(text);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// Connection-level SQLSTATEs: class 08 (connection exception), 57P01 admin shutdown, 57P02
// crash shutdown, 57P03 cannot connect now, class 53 (insufficient resources).
bool transient_state(std::string_view state) {
  return state.starts_with("08") || state.starts_with("53") || state == "57P01" ||
         state == "57P02" || state == "57P03";
}

babelqueue::failure client_failure(PGconn* conn, const error_codes& codes, std::string_view what) {
  const std::string text = conn == nullptr ? "out of memory" : trimmed(PQerrorMessage(conn));
  const bool lost = conn == nullptr || PQstatus(conn) == CONNECTION_BAD;
  return babelqueue::failure{error_info{lost ? codes.unavailable : codes.backend,
                                        codes.prefix + ": " + std::string(what) + ": " + text,
                                        {},
                                        native_error{"libpq", 0, text}}};
}

// `text` with every double-quoted segment replaced by "…": libpq quotes pieces of a
// connection string it cannot parse (`invalid percent-encoded token: "<password>"`), and any
// piece may be the password.
std::string without_quoted(std::string_view text) {
  std::string out;
  bool quoted = false;
  for (const char c : text) {
    if (c == '"') {
      if (!quoted) out += "\"…\"";
      quoted = !quoted;
      continue;
    }
    if (!quoted) out += c;
  }
  return out;
}

// `text` with every occurrence of `secret` replaced by `***`.
std::string without_secret(std::string text, const std::string& secret) {
  if (secret.empty()) return text;
  for (auto at = text.find(secret); at != std::string::npos; at = text.find(secret, at + 3)) {
    text.replace(at, secret.size(), "***");
  }
  return text;
}

// A failed connect, with no part of the password in its texts: every piece libpq quotes is
// cut (a password with a raw `/` or `@` is read as a port or a host name, and quoted as one:
// `invalid integer value "<half of it>" for connection option "port"`), and the password
// itself wherever it stands. The caller names the server with a redacted URL.
babelqueue::failure connect_failure(PGconn* conn, const std::string& conninfo,
                                    const error_codes& codes) {
  if (conn == nullptr) return client_failure(conn, codes, "connect");
  std::string text = without_quoted(trimmed(PQerrorMessage(conn)));
  bool parses = false;
  char* parse_error = nullptr;
  if (PQconninfoOption* options = PQconninfoParse(conninfo.c_str(), &parse_error)) {
    for (PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
      if (std::string_view(o->keyword) == "password" && o->val != nullptr) {
        text = without_secret(std::move(text), o->val);
      }
    }
    PQconninfoFree(options);
    parses = true;
  }
  if (parse_error != nullptr) PQfreemem(parse_error);
  // A connection string libpq cannot read is the caller's mistake, not an outage.
  return babelqueue::failure{error_info{parses ? codes.unavailable : codes.invalid_argument,
                                        codes.prefix + ": connect: " + text,
                                        {},
                                        native_error{"libpq", 0, text}}};
}

// A session's own connection: NOTICEs (CREATE ... IF NOT EXISTS says "already exists,
// skipping") are not printed on stderr.
void quiet_notices(void*, const char*) {}

}  // namespace

rows& rows::operator=(rows&& other) noexcept {
  if (this != &other) {
    if (r_ != nullptr) PQclear(r_);
    r_ = std::exchange(other.r_, nullptr);
  }
  return *this;
}

rows::~rows() {
  if (r_ != nullptr) PQclear(r_);
}

int rows::count() const noexcept { return r_ == nullptr ? 0 : PQntuples(r_); }

std::int64_t rows::affected() const noexcept {
  const char* n = r_ == nullptr ? nullptr : PQcmdTuples(r_);
  return n == nullptr || *n == '\0' ? 0 : std::strtoll(n, nullptr, 10);
}

bool rows::is_null(int row, int col) const noexcept { return PQgetisnull(r_, row, col) != 0; }

std::string rows::text(int row, int col) const {
  if (is_null(row, col)) return {};
  return {PQgetvalue(r_, row, col), static_cast<std::size_t>(PQgetlength(r_, row, col))};
}

std::int64_t rows::integer(int row, int col) const {
  return is_null(row, col) ? 0 : std::strtoll(PQgetvalue(r_, row, col), nullptr, 10);
}

std::string rows::bytes(int row, int col) const {
  if (is_null(row, col)) return {};
  std::size_t n = 0;
  unsigned char* raw =
      PQunescapeBytea(reinterpret_cast<const unsigned char*>(PQgetvalue(r_, row, col)), &n);
  if (raw == nullptr) return {};
  std::string out(reinterpret_cast<const char*>(raw), n);
  PQfreemem(raw);
  return out;
}

namespace {

using clock = std::chrono::steady_clock;

// A statement's parameters in libpq's three arrays. libpq reads a text-format parameter up
// to its NUL: those are copied into strings (binary ones are sent with their length).
struct prepared {
  std::vector<const char*> values;
  std::vector<int> lengths;
  std::vector<int> formats;
  std::vector<std::string> texts;

  explicit prepared(std::span<const param> params) {
    values.reserve(params.size());
    texts.reserve(params.size());
    for (const auto& p : params) {
      values.push_back(p.null ? nullptr : p.bytes.data());
      lengths.push_back(static_cast<int>(p.bytes.size()));
      formats.push_back(p.binary ? 1 : 0);
      if (!p.null && !p.binary) {
        texts.emplace_back(p.bytes);
        values.back() = texts.back().c_str();
      }
    }
  }
  int count() const noexcept { return static_cast<int>(values.size()); }
};

// What a statement's (last) result means: rows, or the mapped error.
result<rows> outcome(PGconn* conn, const error_codes& codes, PGresult* r, std::string_view what) {
  if (r == nullptr) return client_failure(conn, codes, what);
  const ExecStatusType status = PQresultStatus(r);
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return rows(r);
  rows owned(r);  // cleared on every path below
  const char* state_field = PQresultErrorField(r, PG_DIAG_SQLSTATE);
  if (state_field == nullptr || PQstatus(conn) == CONNECTION_BAD) {
    return client_failure(conn, codes, what);
  }
  const std::string state(state_field);
  const std::string text = trimmed(PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY));
  return babelqueue::failure{error_info{
      transient_state(state) ? codes.unavailable : codes.backend,
      codes.prefix + ": " + std::string(what) + ": " + text + " (SQLSTATE " + state + ")",
      {},
      native_error{"postgres", 0, state}}};
}

enum class readiness { ready, timed_out, failed };

// Waits until the connection's socket is readable (or writable, with `write`), or the
// deadline passes.
readiness wait_socket(PGconn* conn, bool write, clock::time_point deadline) {
  const int fd = PQsocket(conn);
  if (fd < 0) return readiness::failed;
  pollfd p{fd, static_cast<short>(POLLIN | (write ? POLLOUT : 0)), 0};
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - clock::now());
    if (left.count() <= 0) return readiness::timed_out;
    const int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), INT_MAX)));
    if (n > 0) return readiness::ready;
    if (n < 0 && errno != EINTR) return readiness::failed;
  }
}

// A statement that got no answer in time: the connection is shut (libpq then reads EOF and
// marks it broken, so the session reconnects before its next statement), and whatever libpq
// holds is dropped. The server rolls back a transaction whose connection went.
babelqueue::failure timed_out(PGconn* conn, const error_codes& codes, std::string_view what,
                              std::chrono::milliseconds bound) {
  if (const int fd = PQsocket(conn); fd >= 0) ::shutdown(fd, SHUT_RDWR);
  (void)PQconsumeInput(conn);
  while (PGresult* r = PQgetResult(conn)) PQclear(r);
  const std::string text = "no answer within call_timeout (" + std::to_string(bound.count()) +
                           " ms); the connection was closed and the statement's outcome is "
                           "unknown";
  return babelqueue::failure{error_info{codes.unavailable,
                                        codes.prefix + ": " + std::string(what) + ": " + text,
                                        {},
                                        native_error{"libpq", 0, text}}};
}

// `run` with every wait bounded: the connection in non-blocking mode, the statement sent
// and its results read with poll() until `bound` has passed.
result<rows> run_bounded(PGconn* conn, const error_codes& codes, const std::string& sql,
                         std::span<const param> params, std::string_view what, bool script,
                         std::chrono::milliseconds bound, bool& expired) {
  expired = false;
  const auto deadline = clock::now() + bound;
  if (PQsetnonblocking(conn, 1) != 0) return client_failure(conn, codes, what);
  const prepared p(params);
  const int sent = script
                       ? PQsendQuery(conn, sql.c_str())
                       : PQsendQueryParams(conn, sql.c_str(), p.count(), nullptr, p.values.data(),
                                           p.lengths.data(), p.formats.data(), 0);
  if (sent == 0) return client_failure(conn, codes, what);
  for (int left = PQflush(conn); left != 0; left = PQflush(conn)) {
    if (left < 0) return client_failure(conn, codes, what);
    const auto w = wait_socket(conn, true, deadline);
    if (w == readiness::timed_out) {
      expired = true;
      return timed_out(conn, codes, what, bound);
    }
    // Reading while sending: the server may answer (an error) before it read everything.
    if (w == readiness::failed || PQconsumeInput(conn) == 0) {
      return client_failure(conn, codes, what);
    }
  }
  // Several results for a script: like PQexec, the last one (an error ends the script).
  PGresult* latest = nullptr;
  for (;;) {
    while (PQisBusy(conn) != 0) {
      const auto w = wait_socket(conn, false, deadline);
      if (w == readiness::timed_out) {
        if (latest != nullptr) PQclear(latest);
        expired = true;
        return timed_out(conn, codes, what, bound);
      }
      if (w == readiness::failed || PQconsumeInput(conn) == 0) break;  // PQgetResult says why
    }
    PGresult* r = PQgetResult(conn);
    if (r == nullptr) break;
    if (latest != nullptr) PQclear(latest);
    latest = r;
  }
  return outcome(conn, codes, latest, what);
}

}  // namespace

result<rows> run(PGconn* conn, const error_codes& codes, const std::string& sql,
                 std::span<const param> params, std::string_view what, bool script) {
  if (script) return outcome(conn, codes, PQexec(conn, sql.c_str()), what);
  const prepared p(params);
  return outcome(conn, codes,
                 PQexecParams(conn, sql.c_str(), p.count(), nullptr, p.values.data(),
                              p.lengths.data(), p.formats.data(), 0),
                 what);
}

namespace {

// The value libpq would read for `keyword` from `conninfo` ("" when unset); false when the
// string does not parse (the connect then fails and says why).
bool conninfo_value(const std::string& conninfo, std::string_view keyword, std::string& value) {
  char* parse_error = nullptr;
  PQconninfoOption* options = PQconninfoParse(conninfo.c_str(), &parse_error);
  if (parse_error != nullptr) PQfreemem(parse_error);
  if (options == nullptr) return false;
  value.clear();
  for (PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
    if (keyword == o->keyword && o->val != nullptr) value = o->val;
  }
  PQconninfoFree(options);
  return true;
}

// A host of libpq's comma-separated list that is this machine: a unix socket directory (or
// the default one, ""), localhost, 127.0.0.0/8, ::1.
bool local_host(std::string_view host) {
  return host.empty() || host.front() == '/' || host.front() == '@' || host == "localhost" ||
         host.starts_with("127.") || host == "::1" || host == "[::1]";
}

bool all_local(std::string_view hosts) {
  for (;;) {
    const auto comma = hosts.find(',');
    if (!local_host(hosts.substr(0, comma))) return false;
    if (comma == std::string_view::npos) return true;
    hosts.remove_prefix(comma + 1);
  }
}

}  // namespace

result<std::string> tls_mode(const std::string& conninfo, std::string_view env_sslmode,
                             std::string_view env_host, const error_codes& codes) {
  std::string mode;
  if (!conninfo_value(conninfo, "sslmode", mode)) return std::string();
  if (mode.empty()) mode = std::string(env_sslmode);
  if (mode == "prefer" || mode == "allow") {
    return babelqueue::failure{error_info{
        codes.invalid_argument,
        codes.prefix + ": sslmode=" + mode +
            " falls back to plaintext without a word: say sslmode=verify-full (TLS, the "
            "server's certificate checked; sslrootcert=<CA file>), sslmode=require (TLS, "
            "unchecked) or sslmode=disable (no TLS)"}};
  }
  if (!mode.empty()) return mode;
  std::string host;
  std::string hostaddr;
  (void)conninfo_value(conninfo, "host", host);
  (void)conninfo_value(conninfo, "hostaddr", hostaddr);
  if (host.empty() && hostaddr.empty()) host = std::string(env_host);
  const bool local = host.empty() && !hostaddr.empty() ? all_local(hostaddr) : all_local(host);
  return std::string(local ? "disable" : "verify-full");
}

session::session(PGconn* conn, bool owned, error_codes codes, limits bounds)
    : conn_(conn), owned_(owned), codes_(std::move(codes)), bounds_(bounds) {}

session::~session() {
  if (owned_ && conn_ != nullptr) PQfinish(conn_);
}

result<std::unique_ptr<session>> session::open(const std::string& conninfo, error_codes codes,
                                               limits bounds) {
  for (const auto& [name, value] : {std::pair{"connect_timeout", bounds.connect_timeout},
                                    std::pair{"call_timeout", bounds.call_timeout}}) {
    if (value.count() <= 0) {
      return babelqueue::failure{error_info{codes.invalid_argument,
                                            codes.prefix + ": " + name + " must be positive, got " +
                                                std::to_string(value.count()) + " ms"}};
    }
  }
  const char* env_sslmode = std::getenv("PGSSLMODE");
  const char* env_host = std::getenv("PGHOST");
  BABELQUEUE_TRY_LET(mode, tls_mode(conninfo, env_sslmode == nullptr ? "" : env_sslmode,
                                    env_host == nullptr ? "" : env_host, codes));
  // libpq's connect_timeout is whole seconds (it takes 2 for 1): rounded up.
  const auto seconds = std::max<long long>(
      1, std::chrono::ceil<std::chrono::seconds>(bounds.connect_timeout).count());
  const std::string timeout = std::to_string(seconds);
  // Array entries before the expanded dbname are defaults the connection string overrides.
  const char* keywords[] = {"connect_timeout", "sslmode", "dbname", nullptr};
  const char* values[] = {timeout.c_str(), mode->c_str(), conninfo.c_str(), nullptr};
  PGconn* conn = PQconnectdbParams(keywords, values, 1);
  // Owned from here (PQfinish is due even when the connection failed).
  std::unique_ptr<session> s(new session(conn, true, std::move(codes), bounds));
  if (conn == nullptr || PQstatus(conn) != CONNECTION_OK) {
    return connect_failure(conn, conninfo, s->codes_);
  }
  PQsetNoticeProcessor(conn, quiet_notices, nullptr);
  return s;
}

result<std::unique_ptr<session>> session::adopt(PGconn* conn, error_codes codes) {
  if (conn == nullptr) {
    return babelqueue::failure{
        error_info{codes.invalid_argument, codes.prefix + ": the connection is null"}};
  }
  return std::unique_ptr<session>(new session(conn, false, std::move(codes), limits{}));
}

bool session::in_transaction() const noexcept {
  const PGTransactionStatusType t = PQtransactionStatus(conn_);
  return t == PQTRANS_INTRANS || t == PQTRANS_INERROR || t == PQTRANS_ACTIVE;
}

result<void> session::reconnect(std::string_view what) {
  PQreset(conn_);  // bounded by the connect_timeout the connection was opened with
  if (PQstatus(conn_) != CONNECTION_OK) return client_failure(conn_, codes_, what);
  return {};
}

result<void> session::ensure_connected(std::string_view what) {
  if (PQstatus(conn_) == CONNECTION_OK) return {};
  if (!owned_) return client_failure(conn_, codes_, what);
  return reconnect(what);
}

result<rows> session::once(const std::string& sql, std::span<const param> params,
                           std::string_view what, bool script) {
  timed_out_ = false;
  if (!owned_) return run(conn_, codes_, sql, params, what, script);
  return run_bounded(conn_, codes_, sql, params, what, script, bounds_.call_timeout, timed_out_);
}

result<rows> session::exec(const std::string& sql, std::span<const param> params,
                           std::string_view what, bool retry) {
  BABELQUEUE_TRY(ensure_connected(what));
  const bool idle = PQtransactionStatus(conn_) == PQTRANS_IDLE;
  auto r = once(sql, params, what);
  // A statement that timed out is never repeated (its outcome is unknown); one that failed
  // because the connection broke (server restarted, idle connection cut) outside any
  // transaction is run again once on a fresh connection.
  if (r || !owned_ || !retry || !idle || timed_out_ || PQstatus(conn_) != CONNECTION_BAD) {
    return r;
  }
  BABELQUEUE_TRY(reconnect(what));
  return once(sql, params, what);
}

result<void> session::script(const std::string& sql, std::string_view what) {
  BABELQUEUE_TRY(ensure_connected(what));
  const bool idle = PQtransactionStatus(conn_) == PQTRANS_IDLE;
  auto r = once(sql, {}, what, true);
  if (!r && owned_ && idle && !timed_out_ && PQstatus(conn_) == CONNECTION_BAD) {
    BABELQUEUE_TRY(reconnect(what));
    r = once(sql, {}, what, true);
  }
  if (!r) return babelqueue::failure{r.error()};
  return {};
}

result<void> session::migrate(std::span<const std::string> names, const std::string& ddl) {
  bool all = true;
  for (const auto& name : names) {
    const param p[] = {param::text(name)};
    auto r = exec("SELECT to_regclass($1) IS NOT NULL", p, "migrate");
    if (!r) return babelqueue::failure{r.error()};
    if (r->text(0, 0) != "t") {
      all = false;
      break;
    }
  }
  if (all) return {};
  return script(ddl, "migrate");
}

result<std::unique_ptr<scope>> scope::begin(session& s, std::string_view what) {
  const bool nested = s.in_transaction();
  if (auto r = s.exec(nested ? "SAVEPOINT bq_scope" : "BEGIN", {}, what); !r) {
    return babelqueue::failure{r.error()};
  }
  return std::unique_ptr<scope>(new scope(s, nested));
}

scope::~scope() { rollback(); }

result<void> scope::commit() {
  if (done_) return {};
  done_ = true;
  auto r = s_.exec(nested_ ? "RELEASE SAVEPOINT bq_scope" : "COMMIT", {}, "commit", false);
  if (!r) return babelqueue::failure{r.error()};
  return {};
}

void scope::rollback() noexcept {
  if (done_) return;
  done_ = true;
  if (PQstatus(s_.conn()) != CONNECTION_OK) return;  // the server ended the transaction
  if (nested_) {
    auto r = s_.once("ROLLBACK TO SAVEPOINT bq_scope", {}, "rollback");
    if (r) (void)s_.once("RELEASE SAVEPOINT bq_scope", {}, "rollback");
  } else {
    (void)s_.once("ROLLBACK", {}, "rollback");
  }
}

}  // namespace postgres
}  // namespace v1
}  // namespace babelqueue
