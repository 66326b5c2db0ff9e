// The outbox in PostgreSQL (outbox/postgres_store.hpp).
#include "core/propagate.hpp"
#include "core/sql_identifier.hpp"
#include "postgres/session.hpp"

#include <babelqueue/outbox/error.hpp>
#include <babelqueue/outbox/postgres_store.hpp>

#include <chrono>
#include <mutex>
#include <set>
#include <string>
#include <utility>

namespace babelqueue {
inline namespace v1 {
namespace outbox {
namespace {

constexpr std::size_t max_error_bytes = 500;
// How long adding the deliver_at column waits for the table's lock. ADD COLUMN needs an
// ACCESS EXCLUSIVE lock: queued behind a long business transaction it would block every
// writer queued behind it, so it gives up instead (and is tried again by the next open()
// or migrate()). One literal, not concatenated at run time: GCC 12 at -O1 with
// -fsanitize=thread warns, falsely, -Warray-bounds on `std::string(...) + const char*` here.
constexpr const char* set_add_column_lock_timeout = "SET LOCAL lock_timeout = '3s'";

postgres::error_codes codes() {
  return {make_error_code(errc::invalid_argument), make_error_code(errc::unavailable),
          make_error_code(errc::backend), "outbox postgres"};
}

// Row ids are the table's BIGSERIAL keys as text; anything else names no row.
bool row_id(std::string_view id) {
  if (id.empty() || id.size() > 18) return false;  // 18 digits always fit a bigint
  for (char c : id) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// `{1,2,3}`: a bigint[] literal of the ids that can name a row.
std::string id_array(std::span<const std::string> ids) {
  std::string out = "{";
  for (const auto& id : ids) {
    if (!row_id(id)) continue;
    if (out.size() > 1) out += ',';
    out += id;
  }
  return out + "}";
}

// The first 500 bytes of `reason` as valid UTF-8 TEXT: cut on a character boundary, NULs
// and bytes that are not UTF-8 replaced by '?' (a transport's message must not make the
// mark fail).
std::string error_text(std::string_view reason) {
  std::string out;
  std::size_t i = 0;
  while (i < reason.size()) {
    const auto c = static_cast<unsigned char>(reason[i]);
    std::size_t n = c < 0x80           ? 1
                    : (c >> 5) == 0x6  ? 2
                    : (c >> 4) == 0xe  ? 3
                    : (c >> 3) == 0x1e ? 4
                                       : 0;
    bool valid = n != 0 && c != 0 && c != 0xc0 && c != 0xc1 && c <= 0xf4 && i + n <= reason.size();
    for (std::size_t k = 1; valid && k < n; ++k) {
      valid = (static_cast<unsigned char>(reason[i + k]) & 0xc0) == 0x80;
    }
    // UTF-16 surrogates (ED A0..BF ..) are not UTF-8 either.
    if (valid && c == 0xed && static_cast<unsigned char>(reason[i + 1]) >= 0xa0) valid = false;
    if (!valid) n = 1;
    if (out.size() + n > max_error_bytes) break;
    if (valid) {
      out.append(reason.substr(i, n));
    } else {
      out += '?';
    }
    i += n;
  }
  return out;
}

}  // namespace

struct postgres_store::impl {
  std::unique_ptr<postgres::session> session;
  postgres_store_options options;
  std::string park_after;
  std::mutex mutex;
  // The pass this store's fetch began (its transaction holds the rows' locks) and the
  // fetched rows not yet accounted for by a mark.
  bool pass_open = false;
  std::set<std::string, std::less<>> outstanding;
  // The deliver_at column is known to exist (only ever set: a column is never dropped;
  // while unset each call looks again, so a row with a time written by an upgraded writer
  // is never read as "at once" by a store that missed the upgrade).
  bool has_due = false;

  ~impl() { (void)end_pass(false); }

  std::string columns() const {
    return std::string(
               "SELECT id, queue, body, status, attempts, coalesce(last_error, ''),"
               " to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), ") +
           (has_due ? "deliver_at" : "NULL::bigint") + " FROM " + options.table;
  }

  // {table exists, it has deliver_at}: one catalog read, no lock on the table.
  result<std::pair<bool, bool>> probe() {
    const postgres::param p[] = {postgres::param::text(options.table)};
    BABELQUEUE_TRY_LET(
        r, in_pass("SELECT to_regclass($1) IS NOT NULL, EXISTS (SELECT 1 FROM pg_attribute"
                   " WHERE attrelid = to_regclass($1) AND attname = 'deliver_at'"
                   " AND attnum > 0 AND NOT attisdropped)",
                   p, "read the table's columns", true));
    return std::pair<bool, bool>{r->text(0, 0) == "t", r->text(0, 1) == "t"};
  }

  // Whether deliver_at can be used (a missing table: false, and the statement that follows
  // fails as it always did, 42P01).
  result<bool> due_ready() {
    if (has_due) return true;
    BABELQUEUE_TRY_LET(state, probe());
    has_due = state->second;
    return has_due;
  }

  // Adds deliver_at to a table an older version made: a NULL column, a catalog-only change
  // (no row rewritten; the rows stay due at once). Inside the caller's transaction (an
  // adopted connection in migrate()) it runs there, as the caller's CREATE would; else in a
  // transaction of its own with a lock timeout.
  result<void> add_due_column() {
    BABELQUEUE_TRY_LET(state, probe());
    if (!state->first || state->second) {
      has_due = state->second;
      return {};
    }
    const std::string ddl =
        "ALTER TABLE " + options.table + " ADD COLUMN IF NOT EXISTS deliver_at BIGINT NULL";
    auto& s = *session;
    if (s.in_transaction()) {
      BABELQUEUE_TRY_LET(r, s.exec(ddl, {}, "add the deliver_at column", false));
    } else {
      BABELQUEUE_TRY_LET(scope, postgres::scope::begin(s, "add the deliver_at column"));
      BABELQUEUE_TRY_LET(
          t, s.exec(set_add_column_lock_timeout, {}, "add the deliver_at column", false));
      BABELQUEUE_TRY_LET(r, s.exec(ddl, {}, "add the deliver_at column", false));
      BABELQUEUE_TRY((*scope)->commit());
    }
    has_due = true;
    return {};
  }

  // Ends the open pass: COMMIT, or ROLLBACK (also after an error: the transaction is then
  // aborted anyway). No-op without one.
  result<void> end_pass(bool commit) {
    if (!pass_open) return {};
    pass_open = false;
    outstanding.clear();
    if (!commit) {
      if (PQstatus(session->conn()) == CONNECTION_OK) {
        (void)session->once("ROLLBACK", {}, "rollback");
      }
      return {};
    }
    BABELQUEUE_TRY_LET(r, session->exec("COMMIT", {}, "commit pass", false));
    return {};
  }

  // A statement of the pass (no repetition after a reconnect: the transaction is gone);
  // an error ends the pass.
  result<postgres::rows> in_pass(const std::string& sql, std::span<const postgres::param> params,
                                 std::string_view what, bool retry) {
    if (pass_open && PQstatus(session->conn()) != CONNECTION_OK) {
      (void)end_pass(false);  // the pass's transaction went with the connection
      return fail(errc::unavailable, "outbox postgres: " + std::string(what) +
                                         ": the connection of the pass was lost");
    }
    auto r = session->exec(sql, params, what, retry && !pass_open);
    if (!r) (void)end_pass(false);
    return r;
  }

  static std::vector<record> to_records(const postgres::rows& rows) {
    std::vector<record> out;
    out.reserve(static_cast<std::size_t>(rows.count()));
    for (int i = 0; i < rows.count(); ++i) {
      record r;
      r.id = rows.text(i, 0);
      r.queue = rows.text(i, 1);
      r.body = rows.bytes(i, 2);
      r.status = parse_status(rows.text(i, 3)).value_or(row_status::pending);
      r.attempts = rows.integer(i, 4);
      r.last_error = rows.text(i, 5);
      r.created_at = rows.text(i, 6);
      if (!rows.is_null(i, 7)) {
        r.deliver_at = due_time(std::chrono::milliseconds(rows.integer(i, 7)));
      }
      out.push_back(std::move(r));
    }
    return out;
  }
};

postgres_store::postgres_store(std::unique_ptr<impl> state) : impl_(std::move(state)) {}
postgres_store::~postgres_store() = default;

namespace {
result<void> check(const postgres_store_options& o) {
  if (!detail::safe_sql_identifier(o.table)) {
    return fail(errc::invalid_argument, "outbox postgres: unsafe table name '" + o.table +
                                            "' (allowed: [A-Za-z_][A-Za-z0-9_]{0,62})");
  }
  return {};
}
}  // namespace

result<std::unique_ptr<postgres_store>> postgres_store::open(const std::string& conninfo,
                                                             postgres_store_options options) {
  BABELQUEUE_TRY(check(options));
  BABELQUEUE_TRY_LET(s, postgres::session::open(conninfo, codes(),
                                                {options.connect_timeout, options.call_timeout}));
  auto state = std::make_unique<impl>();
  state->session = std::move(*s);
  state->park_after = std::to_string(options.park_after);
  state->options = std::move(options);
  // A table made by an older version gets its deliver_at column on the store's own
  // connection. Should that fail (the lock timeout under a long transaction, a role that
  // may not ALTER), the store still works as before (no row has a time) and save_at()
  // answers not_supported; migrate() reports the failure.
  (void)state->add_due_column();
  return std::unique_ptr<postgres_store>(new postgres_store(std::move(state)));
}

result<std::unique_ptr<postgres_store>> postgres_store::adopt(PGconn* conn,
                                                              postgres_store_options options) {
  BABELQUEUE_TRY(check(options));
  BABELQUEUE_TRY_LET(s, postgres::session::adopt(conn, codes()));
  auto state = std::make_unique<impl>();
  state->session = std::move(*s);
  state->park_after = std::to_string(options.park_after);
  state->options = std::move(options);
  return std::unique_ptr<postgres_store>(new postgres_store(std::move(state)));
}

result<void> postgres_store::migrate() {
  std::lock_guard lock(impl_->mutex);
  const std::string& t = impl_->options.table;
  const std::string names[] = {t, t + "_pending_idx"};
  BABELQUEUE_TRY(impl_->session->migrate(
      names, "CREATE TABLE IF NOT EXISTS " + t +
                 " (id BIGSERIAL PRIMARY KEY, queue TEXT NOT NULL, body BYTEA NOT NULL,"
                 " status TEXT NOT NULL DEFAULT 'pending', attempts INTEGER NOT NULL DEFAULT 0,"
                 " last_error TEXT NULL, created_at TIMESTAMPTZ NOT NULL DEFAULT now(),"
                 " published_at TIMESTAMPTZ NULL, failed_at TIMESTAMPTZ NULL,"
                 " deliver_at BIGINT NULL);"
                 "CREATE INDEX IF NOT EXISTS " +
                 t + "_pending_idx ON " + t + " (id) WHERE status = 'pending';"));
  return impl_->add_due_column();  // a table an older version made
}

result<std::string> postgres_store::save(std::string_view body, std::string_view queue) {
  if (queue.empty()) return fail(errc::invalid_argument, "outbox: save needs a queue");
  std::lock_guard lock(impl_->mutex);
  const postgres::param p[] = {postgres::param::text(queue), postgres::param::blob(body)};
  // Never repeated after a reconnect: a row whose INSERT was committed before the
  // connection broke would be saved twice. Names no deliver_at, so it saves into a table
  // an older version made too.
  BABELQUEUE_TRY_LET(r, impl_->in_pass("INSERT INTO " + impl_->options.table +
                                           " (queue, body) VALUES ($1, $2) RETURNING id",
                                       p, "save", false));
  return r->text(0, 0);
}

result<std::string> postgres_store::save_at(std::string_view body, std::string_view queue,
                                            due_time deliver_at) {
  if (queue.empty()) return fail(errc::invalid_argument, "outbox: save needs a queue");
  std::lock_guard lock(impl_->mutex);
  BABELQUEUE_TRY_LET(due, impl_->due_ready());
  if (!*due) {
    return fail(errc::not_supported, "outbox postgres: table " + impl_->options.table +
                                         " has no deliver_at column (made by an older version):"
                                         " run migrate(); nothing was saved");
  }
  const std::string at = std::to_string(deliver_at.time_since_epoch().count());
  const postgres::param p[] = {postgres::param::text(queue), postgres::param::blob(body),
                               postgres::param::literal(at)};
  BABELQUEUE_TRY_LET(r, impl_->in_pass("INSERT INTO " + impl_->options.table +
                                           " (queue, body, deliver_at) VALUES ($1, $2, $3::bigint)"
                                           " RETURNING id",
                                       p, "save", false));
  return r->text(0, 0);
}

result<std::vector<record>> postgres_store::fetch_unpublished(std::size_t limit) {
  return fetch_due(limit, due_now());
}

result<std::vector<record>> postgres_store::fetch_due(std::size_t limit, due_time until) {
  if (limit == 0) return std::vector<record>{};
  std::lock_guard lock(impl_->mutex);
  auto& s = *impl_->session;
  // A pass left open (every row failed but the last mark did not come) ends here.
  BABELQUEUE_TRY(impl_->end_pass(true));
  BABELQUEUE_TRY_LET(due, impl_->due_ready());
  const bool own = !s.in_transaction();  // else: the caller's transaction holds the locks
  if (own) {
    BABELQUEUE_TRY(s.exec("BEGIN", {}, "fetch"));
    impl_->pass_open = true;
  }
  const std::string n = std::to_string(limit);
  const std::string bound = std::to_string(until.time_since_epoch().count());
  const postgres::param p[] = {postgres::param::literal(n), postgres::param::literal(bound)};
  // Without the column (a table an older version made, on an adopted connection) no row
  // has a time: every pending row is due.
  const std::span<const postgres::param> params(p, *due ? 2 : 1);
  BABELQUEUE_TRY_LET(
      r, impl_->in_pass(impl_->columns() + " WHERE status = 'pending'" +
                            (*due ? " AND (deliver_at IS NULL OR deliver_at <= $2::bigint)" : "") +
                            " ORDER BY id ASC LIMIT $1::bigint FOR UPDATE SKIP LOCKED",
                        params, "fetch", false));
  auto rows = impl::to_records(*r);
  if (rows.empty()) {
    BABELQUEUE_TRY(impl_->end_pass(true));
    return rows;
  }
  for (const auto& row : rows) impl_->outstanding.insert(row.id);
  return rows;
}

result<void> postgres_store::mark_published(std::span<const std::string> ids) {
  std::lock_guard lock(impl_->mutex);
  const std::string array = id_array(ids);
  if (array != "{}") {
    const postgres::param p[] = {postgres::param::literal(array)};
    BABELQUEUE_TRY_LET(r, impl_->in_pass("UPDATE " + impl_->options.table +
                                             " SET status = 'published', published_at = now()"
                                             " WHERE id = ANY($1::bigint[]) AND status = 'pending'",
                                         p, "mark published", true));
  }
  return impl_->end_pass(true);  // the pass is over: its marks commit, its locks go
}

result<void> postgres_store::mark_failed(std::string_view id, std::string_view reason) {
  if (!row_id(id)) return {};
  std::lock_guard lock(impl_->mutex);
  const std::string cut = error_text(reason);
  const postgres::param p[] = {postgres::param::literal(id), postgres::param::text(cut),
                               postgres::param::literal(impl_->park_after)};
  // One statement: the count, the reason and the parking decision change together. Not
  // repeated after a reconnect (attempts would count the failure twice).
  BABELQUEUE_TRY_LET(
      r, impl_->in_pass(
             "UPDATE " + impl_->options.table +
                 " SET attempts = attempts + 1, last_error = $2, failed_at = now(),"
                 " status = CASE WHEN $3::bigint > 0 AND attempts + 1 >= $3::bigint THEN 'parked'"
                 " ELSE status END WHERE id = $1::bigint AND status = 'pending'",
             p, "mark failed", false));
  if (impl_->pass_open) {
    if (auto it = impl_->outstanding.find(id); it != impl_->outstanding.end()) {
      impl_->outstanding.erase(it);
    }
    // Every fetched row failed: no mark_published will come, the pass ends here.
    if (impl_->outstanding.empty()) return impl_->end_pass(true);
  }
  return {};
}

result<std::vector<record>> postgres_store::list(const list_options& options) {
  std::lock_guard lock(impl_->mutex);
  BABELQUEUE_TRY_LET(due, impl_->due_ready());  // columns() reads deliver_at once it exists
  const std::string n = std::to_string(options.limit);
  if (!options.status) {
    const postgres::param p[] = {postgres::param::literal(n)};
    auto r =
        impl_->in_pass(impl_->columns() + " ORDER BY id ASC LIMIT $1::bigint", p, "list", true);
    if (!r) return failure{r.error()};
    return impl::to_records(*r);
  }
  const std::string status(to_string(*options.status));
  const postgres::param p[] = {postgres::param::literal(n), postgres::param::text(status)};
  BABELQUEUE_TRY_LET(
      r, impl_->in_pass(impl_->columns() + " WHERE status = $2 ORDER BY id ASC LIMIT $1::bigint", p,
                        "list", true));
  return impl::to_records(*r);
}

result<std::size_t> postgres_store::retry(std::span<const std::string> ids) {
  std::lock_guard lock(impl_->mutex);
  const std::string array = id_array(ids);
  if (array == "{}") return std::size_t{0};
  const postgres::param p[] = {postgres::param::literal(array)};
  BABELQUEUE_TRY_LET(r, impl_->in_pass("UPDATE " + impl_->options.table +
                                           " SET status = 'pending', attempts = 0"
                                           " WHERE id = ANY($1::bigint[]) AND status = 'parked'",
                                       p, "retry", true));
  return static_cast<std::size_t>(r->affected());
}

}  // namespace outbox
}  // namespace v1
}  // namespace babelqueue
