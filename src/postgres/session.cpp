// The libpq code the PostgreSQL stores share (session.hpp).
#include "postgres/session.hpp"

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

result<rows> run(PGconn* conn, const error_codes& codes, const std::string& sql,
                 std::span<const param> params, std::string_view what, bool script) {
  PGresult* r = nullptr;
  if (script) {
    r = PQexec(conn, sql.c_str());
  } else {
    std::vector<const char*> values;
    std::vector<int> lengths;
    std::vector<int> formats;
    values.reserve(params.size());
    for (const auto& p : params) {
      values.push_back(p.null ? nullptr : p.bytes.data());
      lengths.push_back(static_cast<int>(p.bytes.size()));
      formats.push_back(p.binary ? 1 : 0);
    }
    // libpq reads a text-format parameter up to its NUL: those are copied into strings
    // (binary ones are sent with their length).
    std::vector<std::string> texts;
    texts.reserve(params.size());
    for (std::size_t i = 0; i < params.size(); ++i) {
      if (!params[i].null && !params[i].binary) {
        texts.emplace_back(params[i].bytes);
        values[i] = texts.back().c_str();
      }
    }
    r = PQexecParams(conn, sql.c_str(), static_cast<int>(params.size()), nullptr, values.data(),
                     lengths.data(), formats.data(), 0);
  }
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

session::session(PGconn* conn, bool owned, error_codes codes)
    : conn_(conn), owned_(owned), codes_(std::move(codes)) {}

session::~session() {
  if (owned_ && conn_ != nullptr) PQfinish(conn_);
}

result<std::unique_ptr<session>> session::open(const std::string& conninfo, error_codes codes) {
  PGconn* conn = PQconnectdb(conninfo.c_str());
  // Owned from here (PQfinish is due even when the connection failed).
  std::unique_ptr<session> s(new session(conn, true, std::move(codes)));
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
  return std::unique_ptr<session>(new session(conn, false, std::move(codes)));
}

bool session::in_transaction() const noexcept {
  const PGTransactionStatusType t = PQtransactionStatus(conn_);
  return t == PQTRANS_INTRANS || t == PQTRANS_INERROR || t == PQTRANS_ACTIVE;
}

result<void> session::ensure_connected(std::string_view what) {
  if (PQstatus(conn_) == CONNECTION_OK) return {};
  if (!owned_) return client_failure(conn_, codes_, what);
  PQreset(conn_);
  if (PQstatus(conn_) != CONNECTION_OK) return client_failure(conn_, codes_, what);
  return {};
}

result<rows> session::exec(const std::string& sql, std::span<const param> params,
                           std::string_view what, bool retry) {
  if (auto up = ensure_connected(what); !up) return babelqueue::failure{up.error()};
  const bool idle = PQtransactionStatus(conn_) == PQTRANS_IDLE;
  auto r = run(conn_, codes_, sql, params, what);
  if (r || !owned_ || !retry || !idle || PQstatus(conn_) != CONNECTION_BAD) return r;
  // The connection broke (server restarted, idle connection cut) outside any transaction:
  // reconnect once and run the statement again.
  PQreset(conn_);
  if (PQstatus(conn_) != CONNECTION_OK) return client_failure(conn_, codes_, what);
  return run(conn_, codes_, sql, params, what);
}

result<void> session::script(const std::string& sql, std::string_view what) {
  if (auto up = ensure_connected(what); !up) return up;
  const bool idle = PQtransactionStatus(conn_) == PQTRANS_IDLE;
  auto r = run(conn_, codes_, sql, {}, what, true);
  if (!r && owned_ && idle && PQstatus(conn_) == CONNECTION_BAD) {
    PQreset(conn_);
    if (PQstatus(conn_) != CONNECTION_OK) return client_failure(conn_, codes_, what);
    r = run(conn_, codes_, sql, {}, what, true);
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
    auto r = run(s_.conn(), s_.codes(), "ROLLBACK TO SAVEPOINT bq_scope", {}, "rollback");
    if (r) (void)run(s_.conn(), s_.codes(), "RELEASE SAVEPOINT bq_scope", {}, "rollback");
  } else {
    (void)run(s_.conn(), s_.codes(), "ROLLBACK", {}, "rollback");
  }
}

}  // namespace postgres
}  // namespace v1
}  // namespace babelqueue
