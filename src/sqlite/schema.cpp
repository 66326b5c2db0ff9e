#include "sqlite/schema.hpp"

#include "core/propagate.hpp"

#include <babelqueue/runtime/error.hpp>

#include <string>

namespace babelqueue::inline v1::sqlite::detail {
namespace {

// One row per message. `available_at` is the instant the row may next be delivered: the
// publish time, `now + delay` after a release, or the reservation deadline while reserved
// (then equal to `reserved_until`). Keeping the reservation deadline in `available_at`
// makes "deliverable" a single range condition (`available_at <= now`) that the index
// answers without scanning reserved rows. AUTOINCREMENT: ids are never reused, so a stale
// (id, delivery_count) reservation token can never match a newer message.
constexpr const char* create_sql = R"sql(
CREATE TABLE IF NOT EXISTS bq_messages (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  queue          TEXT    NOT NULL,
  body           BLOB    NOT NULL,
  headers        TEXT,
  enqueued_at    INTEGER NOT NULL,
  available_at   INTEGER NOT NULL,
  reserved_until INTEGER,
  delivery_count INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS bq_messages_ready ON bq_messages (queue, available_at, id);
)sql";

result<std::int64_t> pragma_int(connection& db, const char* sql) {
  BABELQUEUE_TRY_LET(st, db.prepare(sql));
  BABELQUEUE_TRY_LET(row, st->step());
  return *row ? st->column_int(0) : 0;
}

result<void> set_wal(connection& db) {
  BABELQUEUE_TRY_LET(st, db.prepare("PRAGMA journal_mode=WAL"));
  BABELQUEUE_TRY_LET(row, st->step());
  const std::string mode = *row ? st->column_bytes(0) : std::string();
  if (mode != "wal") {
    // SQLite answers the mode it kept; WAL is refused e.g. on some network file systems.
    return fail(transport_errc::refused,
                "sqlite: cannot switch the database to WAL mode (journal_mode is '" + mode +
                    "'); is the file on a local file system?");
  }
  return {};
}

result<void> create_or_check(connection& db) {
  BABELQUEUE_TRY_LET(app, pragma_int(db, "PRAGMA application_id"));
  BABELQUEUE_TRY_LET(version, pragma_int(db, "PRAGMA user_version"));
  if (*app != 0 && *app != application_id) {
    return fail(transport_errc::refused,
                "sqlite: the file belongs to another application (application_id " +
                    std::to_string(*app) + "), not a babelqueue queue");
  }
  if (*version > schema_version) {
    return fail(transport_errc::refused,
                "sqlite: the queue file has schema version " + std::to_string(*version) +
                    ", newer than this library's " + std::to_string(schema_version) +
                    "; upgrade babelqueue");
  }
  if (*app == application_id && *version == schema_version) return {};
  if (auto r = db.exec(create_sql); !r) return r;
  const std::string stamp = "PRAGMA application_id=" + std::to_string(application_id) +
                            "; PRAGMA user_version=" + std::to_string(schema_version) + ";";
  return db.exec(stamp.c_str());
}

}  // namespace

result<void> prepare_database(connection& db, const sqlite::options& opts) {
  // First, so that every later statement (including the WAL switch) waits for locks.
  db.busy_timeout(static_cast<int>(opts.busy_timeout.count()));
  if (auto r = set_wal(db); !r) return r;
  const char* sync = opts.synchronous == sqlite::synchronous_mode::full
                         ? "PRAGMA synchronous=FULL"
                         : "PRAGMA synchronous=NORMAL";
  if (auto r = db.exec(sync); !r) return r;
  if (auto r = db.exec("BEGIN IMMEDIATE"); !r) return r;
  if (auto r = create_or_check(db); !r) {
    (void)db.exec("ROLLBACK");
    return r;
  }
  if (auto r = db.exec("COMMIT"); !r) {
    (void)db.exec("ROLLBACK");
    return r;
  }
  return {};
}

}  // namespace babelqueue::inline v1::sqlite::detail
