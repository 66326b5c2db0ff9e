#pragma once
// What the PostgreSQL store tests share: the server's URL from services.sh
// (BABELQUEUE_POSTGRES_URL), table names no other test process uses (CTest runs tests in
// parallel against one database), and a raw libpq client for assertions and for the
// caller's own transactions (not the code under test). Header-only.
#include "support/services.hpp"

#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <vector>

namespace bqtest {

inline std::string postgres_url() { return env_or_empty("BABELQUEUE_POSTGRES_URL"); }

/// `<prefix>_<pid>_<n>`: a valid, unused table name.
inline std::string unique_table(const std::string& prefix) {
  static std::atomic<int> n{0};
  return prefix + "_" + std::to_string(::getpid()) + "_" + std::to_string(n.fetch_add(1));
}

/// A plain libpq connection.
class pg_client {
 public:
  explicit pg_client(const std::string& url) : conn_(PQconnectdb(url.c_str())) {
    PQsetNoticeProcessor(
        conn_, [](void*, const char*) {}, nullptr);
  }
  ~pg_client() { PQfinish(conn_); }
  pg_client(const pg_client&) = delete;
  pg_client& operator=(const pg_client&) = delete;

  PGconn* get() const { return conn_; }
  bool ok() const { return PQstatus(conn_) == CONNECTION_OK; }

  /// Runs `sql` (text parameters); true when it succeeded. The rows land in last().
  bool exec(const std::string& sql, const std::vector<std::string>& params = {}) {
    std::vector<const char*> values;
    for (const auto& p : params) values.push_back(p.c_str());
    rows_.clear();
    error_.clear();
    PGresult* r = PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr,
                               values.data(), nullptr, nullptr, 0);
    const auto status = PQresultStatus(r);
    const bool good = status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK;
    if (!good) error_ = PQresultErrorMessage(r);
    for (int i = 0; good && i < PQntuples(r); ++i) {
      std::vector<std::string> row;
      for (int j = 0; j < PQnfields(r); ++j) {
        row.push_back(PQgetisnull(r, i, j) ? std::string("<null>") : PQgetvalue(r, i, j));
      }
      rows_.push_back(std::move(row));
    }
    PQclear(r);
    return good;
  }
  /// The first column of the first row of `sql` ("" when there is none; "<null>" for NULL).
  std::string scalar(const std::string& sql, const std::vector<std::string>& params = {}) {
    if (!exec(sql, params) || rows_.empty()) return {};
    return rows_[0][0];
  }
  const std::vector<std::vector<std::string>>& last() const { return rows_; }
  const std::string& error() const { return error_; }

 private:
  PGconn* conn_;
  std::vector<std::vector<std::string>> rows_;
  std::string error_;
};

}  // namespace bqtest

/// In a fixture's SetUp(): fails (CI) or skips when there is no PostgreSQL server.
#define BQ_REQUIRE_POSTGRES(url) BQ_REQUIRE_SERVICE(url, "PostgreSQL server", "postgres")
