// The outbox in SQLite (outbox/sqlite_store.hpp).
#include "core/propagate.hpp"
#include "core/sql_identifier.hpp"
#include "core/sqlite_support.hpp"

#include <babelqueue/outbox/error.hpp>
#include <babelqueue/outbox/sqlite_store.hpp>

#include <sqlite3.h>

#include <chrono>
#include <ctime>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace babelqueue {
inline namespace v1 {
namespace outbox {
namespace {

namespace sqlite = babelqueue::detail::sqlite_support;

constexpr std::size_t max_error_bytes = 500;

// A SQLite failure as an outbox error: a busy/locked database or I/O is transient.
babelqueue::failure db_error(sqlite3* db, int rc, const std::string& what) {
  const std::string text = sqlite::native_text(db, rc);
  return fail(sqlite::transient(rc) ? errc::unavailable : errc::backend,
              "outbox sqlite: " + what + ": " + text, native_error{"sqlite", rc, text});
}

std::string utc_now() {
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

// Whether the table has the deliver_at column (store.hpp): a table made before delivery
// times existed lacks it until open() or migrate() adds it.
enum class due_column { no_table, missing, present };

// One prepared statement, finalized on scope exit.
struct stmt {
  sqlite3_stmt* s = nullptr;
  ~stmt() { sqlite3_finalize(s); }
};

// Row ids are the table's integer keys as text; anything else names no row.
bool parse_id(std::string_view id, sqlite3_int64& out) {
  if (id.empty() || id.size() > 19) return false;
  sqlite3_int64 v = 0;
  for (char c : id) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  out = v;
  return true;
}

}  // namespace

struct sqlite_store::impl {
  sqlite3* db = nullptr;
  bool owned = false;
  sqlite_store_options options;
  std::mutex mutex;
  // The deliver_at column is known to exist. Only ever set (a column is never dropped);
  // while unset every call looks again (one schema read), so rows with a time written by
  // an upgraded writer are never read as "at once" by a store that missed the upgrade.
  bool has_due = false;

  ~impl() {
    if (owned) sqlite3_close_v2(db);
  }

  result<void> prepare(stmt& st, const std::string& sql) {
    const int rc =
        sqlite3_prepare_v2(db, sql.c_str(), static_cast<int>(sql.size()), &st.s, nullptr);
    if (rc != SQLITE_OK) return db_error(db, rc, "prepare");
    return {};
  }

  result<due_column> probe() {
    stmt st;
    BABELQUEUE_TRY(prepare(st, "SELECT name FROM pragma_table_info(?1)"));
    sqlite3_bind_text(st.s, 1, options.table.c_str(), -1, SQLITE_TRANSIENT);
    bool any = false;
    for (;;) {
      const int rc = sqlite3_step(st.s);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) return db_error(db, rc, "read the table's columns");
      any = true;
      if (sqlite::column_bytes(st.s, 0) == "deliver_at") return due_column::present;
    }
    return any ? due_column::missing : due_column::no_table;
  }

  // Whether deliver_at can be used (the table may not exist yet: then false, and the
  // statement that follows fails as it always did, "no such table").
  result<bool> due_ready() {
    if (has_due) return true;
    BABELQUEUE_TRY_LET(state, probe());
    has_due = *state == due_column::present;
    return has_due;
  }

  // Adds deliver_at to a table made by an older version (a NULL column: its rows are due
  // at once, as they always were). SQLite's ADD COLUMN rewrites no row.
  result<void> add_due_column() {
    BABELQUEUE_TRY_LET(state, probe());
    if (*state != due_column::missing) {
      has_due = *state == due_column::present;
      return {};
    }
    const std::string ddl = "ALTER TABLE " + options.table + " ADD COLUMN deliver_at INTEGER";
    if (const int rc = sqlite3_exec(db, ddl.c_str(), nullptr, nullptr, nullptr); rc != SQLITE_OK) {
      auto failed = db_error(db, rc, "add the deliver_at column");
      // Another process added it first ("duplicate column name"): done all the same.
      if (auto again = probe(); again && *again == due_column::present) {
        has_due = true;
        return {};
      }
      return failed;
    }
    has_due = true;
    return {};
  }

  // Rows oldest first: `where` uses ?2 = status text when given, ?3 = a due bound in epoch
  // ms when given.
  result<std::vector<record>> select_rows(const std::string& where, std::size_t limit,
                                          const char* status, std::optional<due_time> until) {
    BABELQUEUE_TRY_LET(due, due_ready());
    stmt st;
    const std::string sql = std::string(
                                "SELECT id, queue, body, status, attempts,"
                                " coalesce(last_error, ''), created_at, ") +
                            (*due ? "deliver_at" : "NULL") + " FROM " + options.table + where +
                            (until && *due ? " AND (deliver_at IS NULL OR deliver_at <= ?3)" : "") +
                            " ORDER BY id ASC LIMIT ?1";
    BABELQUEUE_TRY(prepare(st, sql));
    sqlite3_bind_int64(st.s, 1, static_cast<sqlite3_int64>(limit));
    if (status != nullptr) sqlite3_bind_text(st.s, 2, status, -1, SQLITE_STATIC);
    if (until && *due) {
      sqlite3_bind_int64(st.s, 3, static_cast<sqlite3_int64>(until->time_since_epoch().count()));
    }
    std::vector<record> out;
    for (;;) {
      const int rc = sqlite3_step(st.s);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) return db_error(db, rc, "read rows");
      record r;
      r.id = std::to_string(sqlite3_column_int64(st.s, 0));
      r.queue = sqlite::column_bytes(st.s, 1);
      r.body = sqlite::column_bytes(st.s, 2);
      r.status = parse_status(sqlite::column_bytes(st.s, 3)).value_or(row_status::pending);
      r.attempts = sqlite3_column_int64(st.s, 4);
      r.last_error = sqlite::column_bytes(st.s, 5);
      r.created_at = sqlite::column_bytes(st.s, 6);
      if (sqlite3_column_type(st.s, 7) != SQLITE_NULL) {
        r.deliver_at = due_time(std::chrono::milliseconds(sqlite3_column_int64(st.s, 7)));
      }
      out.push_back(std::move(r));
    }
    return out;
  }

  // Runs an UPDATE keyed on ?1 = each row id (ids that name no row are skipped, as unknown
  // ids are) with ?2 = `stamp` when given; returns how many rows changed.
  result<std::size_t> update_each(const std::string& sql, std::span<const std::string> ids,
                                  const std::string* stamp, const char* what) {
    stmt st;
    BABELQUEUE_TRY(prepare(st, sql));
    // One savepoint for the whole list: one commit (one sync) per pass instead of one per
    // row, and all-or-nothing. A SAVEPOINT nests inside a transaction the caller of an
    // adopted connection has open, where BEGIN would fail.
    if (const int rc = sqlite::savepoint_begin(db, "bq_outbox_update"); rc != SQLITE_OK) {
      return db_error(db, rc, what);
    }
    std::size_t changed = 0;
    for (const auto& id : ids) {
      sqlite3_int64 key = 0;
      if (!parse_id(id, key)) continue;
      sqlite3_reset(st.s);
      sqlite3_bind_int64(st.s, 1, key);
      if (stamp != nullptr) sqlite3_bind_text(st.s, 2, stamp->c_str(), -1, SQLITE_TRANSIENT);
      if (const int rc = sqlite3_step(st.s); rc != SQLITE_DONE) {
        auto failed = db_error(db, rc, what);
        sqlite::savepoint_rollback(db, "bq_outbox_update");
        return failed;
      }
      changed += static_cast<std::size_t>(sqlite3_changes(db));
    }
    if (const int rc = sqlite::savepoint_release(db, "bq_outbox_update"); rc != SQLITE_OK) {
      return db_error(db, rc, what);
    }
    return changed;
  }
};

sqlite_store::sqlite_store(std::unique_ptr<impl> state) : impl_(std::move(state)) {}
sqlite_store::~sqlite_store() = default;

result<std::unique_ptr<sqlite_store>> sqlite_store::open(const std::string& path,
                                                         sqlite_store_options options) {
  if (!babelqueue::detail::safe_sql_identifier(options.table)) {
    return fail(errc::invalid_argument, "outbox sqlite: unsafe table name '" + options.table + "'");
  }
  sqlite3* db = nullptr;
  std::string failed_step;
  // WAL lets the business writers and the relay work side by side.
  const int rc = sqlite::open_store(path, options.busy_timeout, &db, &failed_step);
  auto state = std::make_unique<impl>();
  state->db = db;
  state->owned = true;  // closed by ~impl even when the open failed (SQLite's rule)
  if (rc != SQLITE_OK) return db_error(db, rc, failed_step);
  state->options = std::move(options);
  // A table made by an older version gets its deliver_at column on the store's own
  // connection. Should that fail (a lock held past the busy timeout, a read-only file), the
  // store still works as before (no row has a time) and save_at() answers not_supported;
  // migrate() reports the failure.
  (void)state->add_due_column();
  return std::unique_ptr<sqlite_store>(new sqlite_store(std::move(state)));
}

result<std::unique_ptr<sqlite_store>> sqlite_store::adopt(sqlite3* db,
                                                          sqlite_store_options options) {
  if (db == nullptr) return fail(errc::invalid_argument, "outbox sqlite: the connection is null");
  if (!babelqueue::detail::safe_sql_identifier(options.table)) {
    return fail(errc::invalid_argument, "outbox sqlite: unsafe table name '" + options.table + "'");
  }
  auto state = std::make_unique<impl>();
  state->db = db;
  state->options = std::move(options);
  return std::unique_ptr<sqlite_store>(new sqlite_store(std::move(state)));
}

result<void> sqlite_store::migrate() {
  std::lock_guard lock(impl_->mutex);
  const std::string& t = impl_->options.table;
  const std::string ddl =
      "CREATE TABLE IF NOT EXISTS " + t +
      " (id INTEGER PRIMARY KEY AUTOINCREMENT, queue TEXT NOT NULL, body BLOB NOT NULL,"
      " status TEXT NOT NULL DEFAULT 'pending', attempts INTEGER NOT NULL DEFAULT 0,"
      " last_error TEXT, created_at TEXT NOT NULL, published_at TEXT, failed_at TEXT,"
      " deliver_at INTEGER);"
      "CREATE INDEX IF NOT EXISTS " +
      t + "_pending_idx ON " + t + " (status, id);";
  if (const int rc = sqlite3_exec(impl_->db, ddl.c_str(), nullptr, nullptr, nullptr);
      rc != SQLITE_OK) {
    return db_error(impl_->db, rc, "migrate");
  }
  return impl_->add_due_column();  // a table an older version made
}

result<std::string> sqlite_store::save(std::string_view body, std::string_view queue) {
  return insert(body, queue, std::nullopt);
}

result<std::string> sqlite_store::save_at(std::string_view body, std::string_view queue,
                                          due_time deliver_at) {
  return insert(body, queue, deliver_at);
}

result<std::string> sqlite_store::insert(std::string_view body, std::string_view queue,
                                         std::optional<due_time> deliver_at) {
  if (queue.empty()) return fail(errc::invalid_argument, "outbox: save needs a queue");
  std::lock_guard lock(impl_->mutex);
  if (deliver_at) {
    BABELQUEUE_TRY_LET(due, impl_->due_ready());
    if (!*due) {
      return fail(errc::not_supported, "outbox sqlite: table " + impl_->options.table +
                                           " has no deliver_at column (made by an older version):"
                                           " run migrate(); nothing was saved");
    }
  }
  stmt st;
  // A plain row names no deliver_at, so it saves into a table an older version made too.
  if (auto r =
          impl_->prepare(st, "INSERT INTO " + impl_->options.table +
                                 (deliver_at ? " (queue, body, created_at, deliver_at)"
                                               " VALUES (?1, ?2, ?3, ?4)"
                                             : " (queue, body, created_at) VALUES (?1, ?2, ?3)"));
      !r) {
    return failure{r.error()};
  }
  if (deliver_at) {
    sqlite3_bind_int64(st.s, 4, static_cast<sqlite3_int64>(deliver_at->time_since_epoch().count()));
  }
  const std::string now = utc_now();
  sqlite3_bind_text(st.s, 1, queue.data(), static_cast<int>(queue.size()), SQLITE_TRANSIENT);
  // A BLOB keeps the bytes exactly, whatever they are (the envelope is UTF-8 JSON, but the
  // store must never be the place where bytes change).
  sqlite3_bind_blob(st.s, 2, body.data(), static_cast<int>(body.size()), SQLITE_TRANSIENT);
  sqlite3_bind_text(st.s, 3, now.c_str(), -1, SQLITE_TRANSIENT);
  if (const int rc = sqlite3_step(st.s); rc != SQLITE_DONE) return db_error(impl_->db, rc, "save");
  return std::to_string(sqlite3_last_insert_rowid(impl_->db));
}

result<std::vector<record>> sqlite_store::fetch_unpublished(std::size_t limit) {
  return fetch_due(limit, due_now());
}

result<std::vector<record>> sqlite_store::fetch_due(std::size_t limit, due_time until) {
  if (limit == 0) return std::vector<record>{};
  std::lock_guard lock(impl_->mutex);
  return impl_->select_rows(" WHERE status = ?2", limit, "pending", until);
}

result<void> sqlite_store::mark_published(std::span<const std::string> ids) {
  std::lock_guard lock(impl_->mutex);
  const std::string now = utc_now();
  BABELQUEUE_TRY_LET(r, impl_->update_each("UPDATE " + impl_->options.table +
                                               " SET status = 'published', published_at = ?2"
                                               " WHERE id = ?1 AND status = 'pending'",
                                           ids, &now, "mark published"));
  return {};
}

result<void> sqlite_store::mark_failed(std::string_view id, std::string_view reason) {
  sqlite3_int64 key = 0;
  if (!parse_id(id, key)) return {};
  std::lock_guard lock(impl_->mutex);
  stmt st;
  // One statement: the count, the reason and the parking decision change together.
  if (auto r = impl_->prepare(
          st, "UPDATE " + impl_->options.table +
                  " SET attempts = attempts + 1, last_error = ?2, failed_at = ?3,"
                  " status = CASE WHEN ?4 > 0 AND attempts + 1 >= ?4 THEN 'parked' ELSE status END"
                  " WHERE id = ?1 AND status = 'pending'");
      !r) {
    return r;
  }
  const std::string_view cut = reason.substr(0, max_error_bytes);
  const std::string now = utc_now();
  sqlite3_bind_int64(st.s, 1, key);
  sqlite3_bind_text(st.s, 2, cut.data(), static_cast<int>(cut.size()), SQLITE_TRANSIENT);
  sqlite3_bind_text(st.s, 3, now.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(st.s, 4, impl_->options.park_after);
  if (const int rc = sqlite3_step(st.s); rc != SQLITE_DONE)
    return db_error(impl_->db, rc, "mark failed");
  return {};
}

result<std::vector<record>> sqlite_store::list(const list_options& options) {
  std::lock_guard lock(impl_->mutex);
  if (!options.status) return impl_->select_rows("", options.limit, nullptr, std::nullopt);
  const std::string status(to_string(*options.status));
  return impl_->select_rows(" WHERE status = ?2", options.limit, status.c_str(), std::nullopt);
}

result<std::size_t> sqlite_store::retry(std::span<const std::string> ids) {
  std::lock_guard lock(impl_->mutex);
  return impl_->update_each("UPDATE " + impl_->options.table +
                                " SET status = 'pending', attempts = 0"
                                " WHERE id = ?1 AND status = 'parked'",
                            ids, nullptr, "retry");
}

}  // namespace outbox
}  // namespace v1
}  // namespace babelqueue
