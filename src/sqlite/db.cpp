#include "sqlite/db.hpp"

#include "core/sqlite_support.hpp"
#include "sqlite/errors.hpp"

#include <babelqueue/runtime/error.hpp>

#include <sqlite3.h>

#include <utility>

namespace babelqueue::inline v1::sqlite::detail {

connection::~connection() { close(); }

connection::connection(connection&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}

connection& connection::operator=(connection&& other) noexcept {
  if (this != &other) {
    close();
    db_ = std::exchange(other.db_, nullptr);
  }
  return *this;
}

void connection::close() noexcept {
  if (db_ != nullptr) {
    // close_v2 defers the real close until every statement is finalized, so a statement
    // that outlives its connection object cannot turn this into SQLITE_BUSY.
    sqlite3_close_v2(db_);
    db_ = nullptr;
  }
}

result<connection> connection::open(const std::string& path, bool create) {
  sqlite3* db = nullptr;
  // NOMUTEX: each connection is used by one thread at a time (documented), so SQLite's
  // per-connection mutex is pure overhead. EXRESCODE: extended codes in every result.
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE;
  if (create) flags |= SQLITE_OPEN_CREATE;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    error_info err = sqlite_error(db, rc, "cannot open sqlite database '" + path + "'");
    sqlite3_close_v2(db);  // a handle is returned even on failure and must be released
    return fail(std::move(err));
  }
  return connection(db);
}

result<void> connection::exec(const char* sql) {
  if (db_ == nullptr) return fail(transport_errc::closed, "sqlite connection is closed");
  const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return fail(sqlite_error(db_, rc, std::string("sqlite: ") + sql));
  return {};
}

result<statement> connection::prepare(std::string_view sql) {
  if (db_ == nullptr) return fail(transport_errc::closed, "sqlite connection is closed");
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return fail(sqlite_error(db_, rc, "sqlite prepare"));
  }
  return statement(db_, stmt);
}

std::int64_t connection::changes() const noexcept { return sqlite3_changes64(db_); }
std::int64_t connection::last_insert_rowid() const noexcept {
  return sqlite3_last_insert_rowid(db_);
}
void connection::busy_timeout(int ms) noexcept { sqlite3_busy_timeout(db_, ms); }

statement::~statement() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

statement::statement(statement&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      stmt_(std::exchange(other.stmt_, nullptr)),
      bind_rc_(std::exchange(other.bind_rc_, 0)) {}

statement& statement::operator=(statement&& other) noexcept {
  if (this != &other) {
    if (stmt_ != nullptr) sqlite3_finalize(stmt_);
    db_ = std::exchange(other.db_, nullptr);
    stmt_ = std::exchange(other.stmt_, nullptr);
    bind_rc_ = std::exchange(other.bind_rc_, 0);
  }
  return *this;
}

namespace {
void keep_first(int& slot, int rc) noexcept {
  if (slot == SQLITE_OK && rc != SQLITE_OK) slot = rc;
}
}  // namespace

void statement::bind(int index, std::int64_t value) noexcept {
  keep_first(bind_rc_, sqlite3_bind_int64(stmt_, index, value));
}
void statement::bind_null(int index) noexcept {
  keep_first(bind_rc_, sqlite3_bind_null(stmt_, index));
}
void statement::bind_blob(int index, std::string_view bytes) noexcept {
  // A zero-length blob must still be a BLOB, not NULL: SQLite binds NULL for a null
  // pointer, so point at a static empty string for empty bodies.
  const char* data = bytes.empty() ? "" : bytes.data();
  keep_first(bind_rc_, sqlite3_bind_blob64(stmt_, index, data, bytes.size(), SQLITE_TRANSIENT));
}
void statement::bind_text(int index, std::string_view text) noexcept {
  const char* data = text.empty() ? "" : text.data();
  keep_first(bind_rc_,
             sqlite3_bind_text64(stmt_, index, data, text.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
}

result<bool> statement::step() {
  if (bind_rc_ != SQLITE_OK) return fail(sqlite_error(nullptr, bind_rc_, "sqlite bind"));
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return fail(sqlite_error(db_, rc, "sqlite step"));
}

void statement::reset() noexcept {
  bind_rc_ = SQLITE_OK;
  if (stmt_ == nullptr) return;
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::int64_t statement::column_int(int index) const noexcept {
  return sqlite3_column_int64(stmt_, index);
}
bool statement::column_is_null(int index) const noexcept {
  return sqlite3_column_type(stmt_, index) == SQLITE_NULL;
}
std::string statement::column_bytes(int index) const {
  return babelqueue::detail::sqlite_support::column_bytes(stmt_, index);
}

}  // namespace babelqueue::inline v1::sqlite::detail
