// Bad files and paths: always a typed error with a reason, never a crash or a hang.
#include "sqlite/test_support.hpp"

#include <babelqueue/sqlite/sqlite_transport.hpp>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>
#include <random>

namespace {

using namespace bq_sqlite_test;
using babelqueue::condition;
using babelqueue::errc;
using babelqueue::transport_errc;
namespace bs = babelqueue::sqlite;

babelqueue::result<std::unique_ptr<bs::sqlite_transport>> try_open(const std::string& path,
                                                                   bool create = true) {
  bs::options o;
  o.path = path;
  o.create = create;
  o.busy_timeout = 500ms;
  return bs::sqlite_transport::open(o);
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void expect_io(const babelqueue::result<std::unique_ptr<bs::sqlite_transport>>& r,
               const std::string& what) {
  ASSERT_FALSE(r) << what;
  // A file that cannot be a queue: a typed, permanent refusal with SQLite's own code kept.
  EXPECT_TRUE(r.code() == babelqueue::transport_errc::not_found ||
              r.code() == babelqueue::transport_errc::refused ||
              r.code() == babelqueue::transport_errc::permission)
      << what << ": " << r.error().reason() << ": " << r.error().message;
  EXPECT_FALSE(babelqueue::is_transient(r.code())) << what;
  EXPECT_FALSE(r.error().message.empty());
}

TEST(SqliteBadInput, UnwritableOrMissingLocations) {
  temp_dir dir;
  expect_io(try_open(dir.file("no/such/dir/q.db")), "missing parent directory");
  write_file(dir.file("plain"), "x");
  expect_io(try_open(dir.file("plain/q.db")), "parent is a regular file");
  expect_io(try_open(dir.path().string()), "path is a directory");
  expect_io(try_open(dir.file("absent.db"), /*create=*/false), "create=false, file missing");
}

TEST(SqliteBadInput, GarbageFileIsNotADatabase) {
  temp_dir dir;
  std::mt19937 rng(7);
  std::string junk(8192, '\0');
  for (auto& c : junk) c = static_cast<char>(rng());
  write_file(dir.file("junk.db"), junk);
  expect_io(try_open(dir.file("junk.db")), "random bytes");
  write_file(dir.file("text.db"), std::string(2000, 'x'));
  expect_io(try_open(dir.file("text.db")), "text file");
}

TEST(SqliteBadInput, CorruptedQueueFile) {
  temp_dir dir;
  const std::string path = dir.file("q.db");
  {
    auto t = try_open(path);
    ASSERT_TRUE(t) << t.error().message;
    for (int i = 0; i < 50; ++i) ASSERT_TRUE((*t)->publish("c", std::string(3000, 'a' + i % 26)));
  }  // closing the last connection checkpoints the WAL into the main file
  // Overwrite everything after the first page (the header stays valid).
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(0, std::ios::end);
  const auto size = static_cast<std::size_t>(f.tellp());
  ASSERT_GT(size, 8192u);
  f.seekp(4096);
  const std::string junk(size - 4096, '\xa5');
  f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  f.close();
  // Either open fails, or the first operation that reads the damage does: typed, no crash.
  auto t = try_open(path);
  if (!t) {
    EXPECT_EQ(t.code(), babelqueue::transport_errc::refused) << t.error().message;
    return;
  }
  auto r = (*t)->receive("c", 0ms);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.code(), babelqueue::transport_errc::refused) << r.error().message;
  ASSERT_TRUE(r.error().native);
  EXPECT_EQ(r.error().native->source, "sqlite");
}

TEST(SqliteBadInput, AnotherApplicationsDatabaseIsRefused) {
  temp_dir dir;
  const std::string path = dir.file("other.db");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(
      sqlite3_exec(db, "PRAGMA application_id=1234; CREATE TABLE t(x);", nullptr, nullptr, nullptr),
      SQLITE_OK);
  sqlite3_close(db);
  expect_io(try_open(path), "foreign application_id");
}

TEST(SqliteBadInput, NewerSchemaIsRefused) {
  temp_dir dir;
  const std::string path = dir.file("q.db");
  { ASSERT_TRUE(try_open(path)); }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version=99;", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  expect_io(try_open(path), "schema version 99");
}

TEST(SqliteBadInput, AnUnrelatedTableInTheSameFileIsFine) {
  // Sharing a database with the application's own tables is allowed (application_id 0).
  temp_dir dir;
  const std::string path = dir.file("app.db");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE users(id INTEGER);", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto t = try_open(path);
  ASSERT_TRUE(t) << t.error().message;
  ASSERT_TRUE((*t)->publish("q", "x"));
}

TEST(SqliteBadInput, LockHeldTooLongIsATimeout) {
  temp_dir dir;
  const std::string path = dir.file("q.db");
  auto t = try_open(path);
  ASSERT_TRUE(t) << t.error().message;
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "BEGIN IMMEDIATE;", nullptr, nullptr, nullptr), SQLITE_OK);
  const auto start = std::chrono::steady_clock::now();
  auto r = (*t)->publish("q", "x");
  const auto took = std::chrono::steady_clock::now() - start;
  sqlite3_exec(db, "ROLLBACK;", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.code(), transport_errc::timeout) << r.error().message;
  EXPECT_GE(took, 400ms);                // busy_timeout 500 ms was honoured...
  EXPECT_LT(took, 3000ms);               // ...and bounded
  ASSERT_TRUE((*t)->publish("q", "x"));  // usable again once the lock is gone
}

}  // namespace
