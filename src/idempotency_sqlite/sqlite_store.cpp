// The idempotency seen-set with claims in SQLite (idempotency/sqlite_store.hpp).
#include "core/propagate.hpp"
#include "core/sql_identifier.hpp"
#include "core/sqlite_support.hpp"

#include <babelqueue/idempotency/error.hpp>
#include <babelqueue/idempotency/sqlite_store.hpp>
#include <babelqueue/uuid.hpp>

#include <sqlite3.h>

#include <array>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace babelqueue {
inline namespace v1 {
namespace idempotency {
namespace {

namespace sqlite = babelqueue::detail::sqlite_support;

// A SQLite failure as an idempotency error: a busy/locked database or I/O is transient.
babelqueue::failure db_error(sqlite3* db, int rc, const std::string& what) {
  const std::string text = sqlite::native_text(db, rc);
  return fail(sqlite::transient(rc) ? errc::unavailable : errc::backend,
              "idempotency sqlite: " + what + ": " + text, native_error{"sqlite", rc, text});
}

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void bind_text(sqlite3_stmt* s, int i, std::string_view v) {
  sqlite3_bind_text(s, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
}

// A prepared statement: owned (finalized on scope exit) or borrowed from the cache; reset
// on scope exit either way, so no statement keeps a read transaction open.
struct stmt {
  sqlite3_stmt* s = nullptr;
  bool owned = true;
  stmt() = default;
  stmt(const stmt&) = delete;
  stmt& operator=(const stmt&) = delete;
  ~stmt() {
    if (owned) {
      sqlite3_finalize(s);
    } else if (s != nullptr) {
      sqlite3_reset(s);
      sqlite3_clear_bindings(s);
    }
  }
};

enum which : std::size_t { k_seen, k_upsert, k_drop_claim, k_forget, k_claim, k_release, k_count };

}  // namespace

struct sqlite_store::impl {
  sqlite3* db = nullptr;
  bool owned = false;
  sqlite_store_options options;
  std::string claims_table;
  std::mutex mutex;
  std::array<sqlite3_stmt*, k_count> cache{};
  // The owner token of each claim this instance holds (release compares it).
  std::map<std::string, std::string, std::less<>> tokens;

  ~impl() {
    for (auto* s : cache) sqlite3_finalize(s);
    if (owned) sqlite3_close_v2(db);
  }

  std::string sql(which w) const {
    const std::string& t = options.table;
    const std::string& c = claims_table;
    switch (w) {
      case k_seen:
        return "SELECT 1 FROM " + t +
               " WHERE message_id = ?1 AND (expires_at IS NULL OR expires_at > ?2)";
      case k_upsert:
        return "INSERT INTO " + t +
               " (message_id, created_at, expires_at) VALUES (?1, ?2, ?3)"
               " ON CONFLICT (message_id) DO UPDATE SET created_at = excluded.created_at,"
               " expires_at = excluded.expires_at";
      case k_drop_claim:
        return "DELETE FROM " + c + " WHERE message_id = ?1";
      case k_forget:
        return "DELETE FROM " + t + " WHERE message_id = ?1";
      case k_claim:
        // One statement: no claim while the id is committed; an expired claim is taken over.
        return "INSERT INTO " + c +
               " (message_id, owner, expires_at) SELECT ?1, ?2, ?3 WHERE NOT EXISTS"
               " (SELECT 1 FROM " +
               t +
               " WHERE message_id = ?1 AND (expires_at IS NULL OR expires_at > ?4))"
               " ON CONFLICT (message_id) DO UPDATE SET owner = excluded.owner,"
               " expires_at = excluded.expires_at WHERE " +
               c + ".expires_at <= ?4";
      case k_release:
        return "DELETE FROM " + c + " WHERE message_id = ?1 AND owner = ?2";
      case k_count:
        break;
    }
    return {};
  }

  // The store connection's cached statement `w`.
  result<void> cached(which w, stmt& out) {
    if (cache[w] == nullptr) {
      const std::string text = sql(w);
      const int rc = sqlite3_prepare_v3(db, text.c_str(), static_cast<int>(text.size()),
                                        SQLITE_PREPARE_PERSISTENT, &cache[w], nullptr);
      if (rc != SQLITE_OK) {
        cache[w] = nullptr;
        return db_error(db, rc, "prepare");
      }
    }
    out.s = cache[w];
    out.owned = false;
    return {};
  }

  // A one-off statement `w` on another connection (remember_in).
  result<void> prepare_on(sqlite3* conn, which w, stmt& out) const {
    const std::string text = sql(w);
    const int rc =
        sqlite3_prepare_v2(conn, text.c_str(), static_cast<int>(text.size()), &out.s, nullptr);
    if (rc != SQLITE_OK) return db_error(conn, rc, "prepare");
    return {};
  }

  // The mark and the end of the claim in one savepoint (nests inside an open transaction).
  result<void> remember_on(sqlite3* conn, sqlite3_stmt* upsert, sqlite3_stmt* drop,
                           std::string_view id) {
    const std::int64_t now = now_ms();
    bind_text(upsert, 1, id);
    sqlite3_bind_int64(upsert, 2, now);
    if (options.ttl.count() > 0) {
      sqlite3_bind_int64(upsert, 3, now + options.ttl.count());
    } else {
      sqlite3_bind_null(upsert, 3);
    }
    bind_text(drop, 1, id);
    if (const int rc = sqlite::savepoint_begin(conn, "bq_idempotency"); rc != SQLITE_OK) {
      return db_error(conn, rc, "remember");
    }
    for (sqlite3_stmt* s : {upsert, drop}) {
      if (const int rc = sqlite3_step(s); rc != SQLITE_DONE) {
        auto failed = db_error(conn, rc, "remember");
        sqlite::savepoint_rollback(conn, "bq_idempotency");
        return failed;
      }
    }
    if (const int rc = sqlite::savepoint_release(conn, "bq_idempotency"); rc != SQLITE_OK) {
      return db_error(conn, rc, "remember");
    }
    if (auto it = tokens.find(id); it != tokens.end()) tokens.erase(it);
    return {};
  }
};

namespace {

result<void> check_options(const sqlite_store_options& o) {
  if (!babelqueue::detail::safe_sql_identifier(o.table) ||
      !babelqueue::detail::safe_sql_identifier(o.table + "_claims")) {
    return fail(errc::invalid_argument,
                "idempotency sqlite: unsafe table name '" + o.table +
                    "' (want [A-Za-z_][A-Za-z0-9_]{0,55}: `<table>_claims` must fit 63 bytes)");
  }
  return {};
}

}  // namespace

sqlite_store::sqlite_store(std::unique_ptr<impl> state) : impl_(std::move(state)) {
  impl_->claims_table = impl_->options.table + "_claims";
}
sqlite_store::~sqlite_store() = default;

result<std::unique_ptr<sqlite_store>> sqlite_store::open(const std::string& path,
                                                         sqlite_store_options options) {
  BABELQUEUE_TRY(check_options(options));
  sqlite3* db = nullptr;
  std::string failed_step;
  // WAL: readers (seen) do not wait for the writers (remember, claim) of other workers.
  const int rc = sqlite::open_store(path, options.busy_timeout, &db, &failed_step);
  auto state = std::make_unique<impl>();
  state->db = db;
  state->owned = true;  // closed by ~impl even when the open failed (SQLite's rule)
  if (rc != SQLITE_OK) return db_error(db, rc, failed_step);
  state->options = std::move(options);
  return std::unique_ptr<sqlite_store>(new sqlite_store(std::move(state)));
}

result<std::unique_ptr<sqlite_store>> sqlite_store::adopt(sqlite3* db,
                                                          sqlite_store_options options) {
  if (db == nullptr) {
    return fail(errc::invalid_argument, "idempotency sqlite: the connection is null");
  }
  BABELQUEUE_TRY(check_options(options));
  auto state = std::make_unique<impl>();
  state->db = db;
  state->options = std::move(options);
  return std::unique_ptr<sqlite_store>(new sqlite_store(std::move(state)));
}

result<void> sqlite_store::migrate() {
  std::lock_guard lock(impl_->mutex);
  const std::string& t = impl_->options.table;
  const std::string& c = impl_->claims_table;
  const std::string ddl = "CREATE TABLE IF NOT EXISTS " + t +
                          " (message_id TEXT NOT NULL PRIMARY KEY, created_at INTEGER NOT NULL,"
                          " expires_at INTEGER NULL);"
                          "CREATE INDEX IF NOT EXISTS " +
                          t + "_expires_at_idx ON " + t +
                          " (expires_at);"
                          "CREATE TABLE IF NOT EXISTS " +
                          c +
                          " (message_id TEXT NOT NULL PRIMARY KEY, owner TEXT NOT NULL,"
                          " expires_at INTEGER NOT NULL);";
  if (const int rc = sqlite3_exec(impl_->db, ddl.c_str(), nullptr, nullptr, nullptr);
      rc != SQLITE_OK) {
    return db_error(impl_->db, rc, "migrate");
  }
  return {};
}

result<bool> sqlite_store::seen(std::string_view id) {
  std::lock_guard lock(impl_->mutex);
  stmt st;
  BABELQUEUE_TRY(impl_->cached(k_seen, st));
  bind_text(st.s, 1, id);
  sqlite3_bind_int64(st.s, 2, now_ms());
  const int rc = sqlite3_step(st.s);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return db_error(impl_->db, rc, "seen");
}

result<void> sqlite_store::remember(std::string_view id) {
  std::lock_guard lock(impl_->mutex);
  stmt upsert, drop;
  if (auto r = impl_->cached(k_upsert, upsert); !r) return r;
  if (auto r = impl_->cached(k_drop_claim, drop); !r) return r;
  return impl_->remember_on(impl_->db, upsert.s, drop.s, id);
}

result<void> sqlite_store::remember_in(sqlite3* db, std::string_view id) {
  if (db == nullptr) {
    return fail(errc::invalid_argument, "idempotency sqlite: remember_in: the connection is null");
  }
  std::lock_guard lock(impl_->mutex);
  if (db == impl_->db) {
    stmt upsert, drop;
    if (auto r = impl_->cached(k_upsert, upsert); !r) return r;
    if (auto r = impl_->cached(k_drop_claim, drop); !r) return r;
    return impl_->remember_on(db, upsert.s, drop.s, id);
  }
  stmt upsert, drop;
  if (auto r = impl_->prepare_on(db, k_upsert, upsert); !r) return r;
  if (auto r = impl_->prepare_on(db, k_drop_claim, drop); !r) return r;
  return impl_->remember_on(db, upsert.s, drop.s, id);
}

result<void> sqlite_store::forget(std::string_view id) {
  std::lock_guard lock(impl_->mutex);
  stmt st;
  if (auto r = impl_->cached(k_forget, st); !r) return r;
  bind_text(st.s, 1, id);
  if (const int rc = sqlite3_step(st.s); rc != SQLITE_DONE) {
    return db_error(impl_->db, rc, "forget");
  }
  return {};
}

result<bool> sqlite_store::claim(std::string_view id, std::chrono::milliseconds ttl) {
  if (ttl <= std::chrono::milliseconds::zero()) {
    return fail(errc::invalid_argument, "idempotency claim: the ttl must be positive");
  }
  std::lock_guard lock(impl_->mutex);
  stmt st;
  BABELQUEUE_TRY(impl_->cached(k_claim, st));
  const std::string token = uuid_v4();
  const std::int64_t now = now_ms();
  bind_text(st.s, 1, id);
  bind_text(st.s, 2, token);
  sqlite3_bind_int64(st.s, 3, now + ttl.count());
  sqlite3_bind_int64(st.s, 4, now);
  if (const int rc = sqlite3_step(st.s); rc != SQLITE_DONE) {
    return db_error(impl_->db, rc, "claim");
  }
  if (sqlite3_changes(impl_->db) != 1) return false;
  impl_->tokens.insert_or_assign(std::string(id), token);
  return true;
}

result<void> sqlite_store::release(std::string_view id) {
  std::lock_guard lock(impl_->mutex);
  auto it = impl_->tokens.find(id);
  if (it == impl_->tokens.end()) return {};  // not claimed by this instance: nothing to drop
  stmt st;
  if (auto r = impl_->cached(k_release, st); !r) return r;
  bind_text(st.s, 1, id);
  bind_text(st.s, 2, it->second);
  if (const int rc = sqlite3_step(st.s); rc != SQLITE_DONE) {
    return db_error(impl_->db, rc, "release");
  }
  impl_->tokens.erase(it);
  return {};
}

}  // namespace idempotency
}  // namespace v1
}  // namespace babelqueue
