// The idempotency seen-set in PostgreSQL (idempotency/postgres_store.hpp).
#include "core/propagate.hpp"
#include "core/sql_identifier.hpp"
#include "postgres/session.hpp"

#include <babelqueue/idempotency/error.hpp>
#include <babelqueue/idempotency/postgres_store.hpp>
#include <babelqueue/uuid.hpp>

#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace babelqueue {
inline namespace v1 {
namespace idempotency {
namespace {

postgres::error_codes codes() {
  return {make_error_code(errc::invalid_argument), make_error_code(errc::unavailable),
          make_error_code(errc::backend), "idempotency postgres"};
}

// The statements, built once per store from the validated table names.
struct statements {
  std::string seen, remember, forget, claim, committed, release_own, release_any, ddl;

  statements(const std::string& t, const std::string& c) {
    // Go's Seen, verbatim.
    seen = "SELECT 1 FROM " + t +
           " WHERE message_id = $1 AND (expires_at IS NULL OR expires_at > now())";
    // Go's Claim/Remember upsert (a live mark is kept, an expired one renewed), with
    // expires_at computed by the server, plus the end of this id's claim — one statement,
    // so it is atomic on its own and inside a caller's transaction (remember_in).
    remember = "WITH ended AS (DELETE FROM " + c + " WHERE message_id = $1) INSERT INTO " + t +
               " (message_id, created_at, expires_at) VALUES ($1, now(),"
               " CASE WHEN $2::bigint > 0 THEN now() + $2::bigint * interval '1 millisecond'"
               " END) ON CONFLICT (message_id) DO UPDATE SET created_at = now(),"
               " expires_at = EXCLUDED.expires_at WHERE " +
               t + ".expires_at IS NOT NULL AND " + t + ".expires_at <= now()";
    forget = "DELETE FROM " + t + " WHERE message_id = $1";
    // Takes an absent or expired claim (a row back = this caller holds it).
    claim = "INSERT INTO " + c +
            " (message_id, token, expires_at) VALUES ($1, $2,"
            " now() + $3::bigint * interval '1 millisecond') ON CONFLICT (message_id) DO UPDATE"
            " SET token = EXCLUDED.token, expires_at = EXCLUDED.expires_at, created_at = now()"
            " WHERE " +
            c + ".expires_at <= now() RETURNING 1";
    committed = seen;
    release_own =
        "DELETE FROM " + c + " WHERE message_id = $1 AND token = $2 AND expires_at > now()";
    release_any = "DELETE FROM " + c + " WHERE message_id = $1 AND expires_at > now()";
    // Go's Migrate / schema.sql for the committed table, then the claims table.
    ddl = "CREATE TABLE IF NOT EXISTS " + t +
          " (message_id TEXT NOT NULL PRIMARY KEY,"
          " created_at TIMESTAMPTZ NOT NULL DEFAULT now(), expires_at TIMESTAMPTZ NULL);"
          "CREATE INDEX IF NOT EXISTS " +
          t + "_expires_at_idx ON " + t +
          " (expires_at);"
          "CREATE TABLE IF NOT EXISTS " +
          c +
          " (message_id TEXT NOT NULL PRIMARY KEY, token TEXT NOT NULL,"
          " expires_at TIMESTAMPTZ NOT NULL, created_at TIMESTAMPTZ NOT NULL DEFAULT now());";
  }
};

// The message_id an id is stored under. TEXT cannot hold a NUL (the server refuses it), and
// a JSON meta.id may contain one ("\u0000"): such an id is stored as `bq-nul:` + the hex of
// all its bytes — exact and reversible, and an id no NUL-free one can equal unless a
// producer chose that very text. Every other id is stored verbatim (Go's key; Go cannot
// store a NUL id at all, so nothing is lost for a shared table).
std::string key_of(std::string_view id) {
  if (id.find('\0') == std::string_view::npos) return std::string(id);
  static constexpr char hex[] = "0123456789abcdef";
  std::string out = "bq-nul:";
  out.reserve(out.size() + id.size() * 2);
  for (char c : id) {
    const auto u = static_cast<unsigned char>(c);
    out += hex[u >> 4];
    out += hex[u & 0xf];
  }
  return out;
}

// Validates the options; fills in the claims table's default name.
result<void> check(postgres_store_options& o) {
  if (!detail::safe_sql_identifier(o.table)) {
    return fail(errc::invalid_argument, "idempotency postgres: unsafe table name '" + o.table +
                                            "' (allowed: [A-Za-z_][A-Za-z0-9_]{0,62})");
  }
  const bool derived = o.claims_table.empty();
  if (derived) o.claims_table = o.table + "_claims";
  if (!detail::safe_sql_identifier(o.claims_table)) {
    return fail(errc::invalid_argument,
                "idempotency postgres: unsafe claims table name '" + o.claims_table + "'" +
                    (derived ? " (the table name is too long for the _claims suffix: set "
                               "claims_table)"
                             : ""));
  }
  if (o.ttl < std::chrono::milliseconds::zero()) o.ttl = std::chrono::milliseconds::zero();
  return {};
}

}  // namespace

struct postgres_store::impl {
  impl(std::unique_ptr<postgres::session> s, postgres_store_options o)
      : session(std::move(s)),
        options(std::move(o)),
        sql(options.table, options.claims_table),
        ttl_ms(std::to_string(options.ttl.count())) {}

  std::unique_ptr<postgres::session> session;
  postgres_store_options options;
  statements sql;
  std::string ttl_ms;
  std::mutex mutex;
  // The token of each claim this store holds (release() deletes only its own).
  std::map<std::string, std::string, std::less<>> tokens;

  void forget_token(std::string_view id) {
    if (auto it = tokens.find(id); it != tokens.end()) tokens.erase(it);
  }
};

postgres_store::postgres_store(std::unique_ptr<impl> state) : impl_(std::move(state)) {}
postgres_store::~postgres_store() = default;

result<std::unique_ptr<postgres_store>> postgres_store::open(const std::string& conninfo,
                                                             postgres_store_options options) {
  BABELQUEUE_TRY(check(options));
  BABELQUEUE_TRY_LET(s, postgres::session::open(conninfo, codes(),
                                                {options.connect_timeout, options.call_timeout}));
  return std::unique_ptr<postgres_store>(
      new postgres_store(std::make_unique<impl>(std::move(*s), std::move(options))));
}

result<std::unique_ptr<postgres_store>> postgres_store::adopt(PGconn* conn,
                                                              postgres_store_options options) {
  BABELQUEUE_TRY(check(options));
  BABELQUEUE_TRY_LET(s, postgres::session::adopt(conn, codes()));
  return std::unique_ptr<postgres_store>(
      new postgres_store(std::make_unique<impl>(std::move(*s), std::move(options))));
}

const std::string& postgres_store::table() const noexcept { return impl_->options.table; }
const std::string& postgres_store::claims_table() const noexcept {
  return impl_->options.claims_table;
}

result<void> postgres_store::migrate() {
  std::lock_guard lock(impl_->mutex);
  const std::string names[] = {impl_->options.table, impl_->options.table + "_expires_at_idx",
                               impl_->options.claims_table};
  return impl_->session->migrate(names, impl_->sql.ddl);
}

result<bool> postgres_store::seen(std::string_view id) {
  const std::string key = key_of(id);
  std::lock_guard lock(impl_->mutex);
  const postgres::param p[] = {postgres::param::text(key)};
  BABELQUEUE_TRY_LET(r, impl_->session->exec(impl_->sql.seen, p, "seen"));
  return r->count() > 0;
}

result<void> postgres_store::remember(std::string_view id) {
  const std::string key = key_of(id);
  std::lock_guard lock(impl_->mutex);
  const postgres::param p[] = {postgres::param::text(key), postgres::param::literal(impl_->ttl_ms)};
  BABELQUEUE_TRY_LET(r, impl_->session->exec(impl_->sql.remember, p, "remember"));
  impl_->forget_token(id);
  return {};
}

result<void> postgres_store::remember_in(PGconn* conn, std::string_view id) {
  if (conn == nullptr) {
    return fail(errc::invalid_argument,
                "idempotency postgres: remember_in: the connection is null");
  }
  const std::string key = key_of(id);
  std::lock_guard lock(impl_->mutex);
  const postgres::param p[] = {postgres::param::text(key), postgres::param::literal(impl_->ttl_ms)};
  BABELQUEUE_TRY_LET(
      r, postgres::run(conn, impl_->session->codes(), impl_->sql.remember, p, "remember_in"));
  impl_->forget_token(id);
  return {};
}

result<void> postgres_store::forget(std::string_view id) {
  const std::string key = key_of(id);
  std::lock_guard lock(impl_->mutex);
  const postgres::param p[] = {postgres::param::text(key)};
  BABELQUEUE_TRY_LET(r, impl_->session->exec(impl_->sql.forget, p, "forget"));
  return {};
}

result<bool> postgres_store::claim(std::string_view id, std::chrono::milliseconds ttl) {
  if (ttl <= std::chrono::milliseconds::zero()) {
    return fail(errc::invalid_argument, "idempotency claim: the ttl must be positive");
  }
  const std::string key = key_of(id);
  const std::string token = uuid_v4();
  const std::string ttl_ms = std::to_string(ttl.count());
  std::lock_guard lock(impl_->mutex);
  BABELQUEUE_TRY_LET(tx, postgres::scope::begin(*impl_->session, "claim"));
  const postgres::param take[] = {postgres::param::text(key), postgres::param::text(token),
                                  postgres::param::literal(ttl_ms)};
  BABELQUEUE_TRY_LET(taken, impl_->session->exec(impl_->sql.claim, take, "claim", false));
  if (taken->count() == 0) return false;  // another worker's live claim (rolled back)
  // A new statement sees every commit made before it began, including a remember() of this
  // id that the upsert above had to wait for: a committed id is never claimed.
  const postgres::param by_id[] = {postgres::param::text(key)};
  auto committed = impl_->session->exec(impl_->sql.committed, by_id, "claim", false);
  if (!committed) return failure{committed.error()};
  if (committed->count() > 0) return false;  // the claim is rolled back with the scope
  BABELQUEUE_TRY((*tx)->commit());
  impl_->tokens.insert_or_assign(std::string(id), token);
  return true;
}

result<void> postgres_store::release(std::string_view id) {
  const std::string key = key_of(id);
  std::lock_guard lock(impl_->mutex);
  auto it = impl_->tokens.find(id);
  if (it != impl_->tokens.end()) {
    const postgres::param p[] = {postgres::param::text(key), postgres::param::text(it->second)};
    BABELQUEUE_TRY_LET(r, impl_->session->exec(impl_->sql.release_own, p, "release"));
    impl_->tokens.erase(it);
    return {};
  }
  // A claim this store did not take (another instance's, e.g. an operator's tool): PHP's
  // release, any live claim on the id.
  const postgres::param p[] = {postgres::param::text(key)};
  BABELQUEUE_TRY_LET(r, impl_->session->exec(impl_->sql.release_any, p, "release"));
  return {};
}

}  // namespace idempotency
}  // namespace v1
}  // namespace babelqueue
