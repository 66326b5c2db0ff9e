// The outbox's SQLite store (outbox/sqlite_store.hpp) on real SQLite files in a scratch
// directory: the contract, exact bytes, persistence across reopen, the caller's transaction
// (save rolled back with the business change), parking and retry, and the relay over it.
#include "outbox/fault_injecting_transport.hpp"
#include "outbox/store_delay_cases.hpp"
#include "runtime/test_util.hpp"
#include "support/services.hpp"

#include <babelqueue/memory/memory_transport.hpp>
#include <babelqueue/outbox/error.hpp>
#include <babelqueue/outbox/relay.hpp>
#include <babelqueue/outbox/sqlite_store.hpp>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <string>
#include <vector>

namespace {

using namespace babelqueue;

class OutboxSqlite : public ::testing::Test {
 protected:
  void SetUp() override {
    // unique_name() carries the pid: CTest runs each test in its own process, in parallel.
    dir = std::filesystem::temp_directory_path() / bqtest::unique_name("outbox-sqlite");
    std::filesystem::create_directories(dir);
    path = (dir / "app.db").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::unique_ptr<outbox::sqlite_store> open(outbox::sqlite_store_options o = {}) {
    auto s = outbox::sqlite_store::open(path, std::move(o)).value();
    s->migrate().value();
    return s;
  }
  std::filesystem::path dir;
  std::string path;
};

TEST_F(OutboxSqlite, RowsKeepTheirBytesAndSurviveAReopen) {
  const std::string body =
      "{\"job\":\"urn:a:b:c\",\"data\":{\"t\":\"\xe2\x80\xa8 caf\xc3\xa9 \\u0000\",\"n\":1.10}}";
  {
    auto s = open();
    EXPECT_EQ(s->save(body, "orders").value(), "1");
    EXPECT_EQ(s->save("second", "billing").value(), "2");
  }
  auto s = open();  // migrate() again is harmless
  auto rows = s->fetch_unpublished(10).value();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].body, body);
  EXPECT_EQ(rows[0].queue, "orders");
  EXPECT_EQ(rows[0].attempts, 0);
  EXPECT_EQ(rows[0].status, outbox::row_status::pending);
  EXPECT_EQ(rows[0].created_at.size(), 20u);  // 2026-12-02T21:00:00Z
  EXPECT_EQ(rows[1].queue, "billing");
  EXPECT_EQ(s->fetch_unpublished(1).value().size(), 1u);
  EXPECT_TRUE(s->fetch_unpublished(0).value().empty());
  std::vector<std::string> ids{"1", "x", "99", ""};
  ASSERT_TRUE(s->mark_published(ids));  // unknown and malformed ids are ignored
  rows = s->fetch_unpublished(10).value();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].id, "2");
  EXPECT_EQ(s->list({.status = outbox::row_status::published}).value().size(), 1u);
  EXPECT_FALSE(s->save("b", ""));
}

TEST_F(OutboxSqlite, SaveRunsInTheCallersTransaction) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  auto s = outbox::sqlite_store::adopt(db).value();
  ASSERT_TRUE(s->migrate());
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE orders (id INTEGER)", nullptr, nullptr, nullptr),
            SQLITE_OK);

  ASSERT_EQ(sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "INSERT INTO orders VALUES (1)", nullptr, nullptr, nullptr),
            SQLITE_OK);
  ASSERT_TRUE(s->save("rolled-back", "orders"));
  ASSERT_EQ(sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr), SQLITE_OK);
  EXPECT_TRUE(s->fetch_unpublished(10).value().empty());  // gone with the business change

  ASSERT_EQ(sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "INSERT INTO orders VALUES (2)", nullptr, nullptr, nullptr),
            SQLITE_OK);
  ASSERT_TRUE(s->save("committed", "orders"));
  ASSERT_EQ(sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  s.reset();  // adopted: the caller's connection stays open
  sqlite3_close(db);

  auto relay_side = open();  // the relay's own connection sees the committed row only
  auto rows = relay_side->fetch_unpublished(10).value();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].body, "committed");
}

TEST_F(OutboxSqlite, FailingRowsAreParkedAndStopBlockingNewerOnes) {
  auto s = std::shared_ptr<outbox::sqlite_store>(open({.park_after = 2}));
  s->save("poison-1", "bad").value();
  s->save("poison-2", "bad").value();
  s->save("good", "orders").value();
  const std::string broker = bqtest::unique_broker("outbox-sqlite");
  memory::memory_transport real(broker);
  bqtest::fault_injecting_transport flaky(real);
  flaky.fault = transport_errc::refused;  // a row the broker refuses, not an outage
  outbox::relay_options o;
  o.batch = 2;
  o.sleeper = [](std::chrono::milliseconds) {};
  outbox::relay r(s, flaky, o);
  flaky.fail_every_publish = true;
  EXPECT_EQ(r.drain().value().failed, 2u);
  EXPECT_EQ(r.drain().value().failed, 2u);  // attempts 2: both parked
  auto parked = s->list({.status = outbox::row_status::parked}).value();
  ASSERT_EQ(parked.size(), 2u);
  EXPECT_EQ(parked[0].attempts, 2);
  EXPECT_EQ(parked[0].last_error, "refused: injected refusal on publish 3");
  flaky.fail_every_publish = false;
  EXPECT_EQ(r.drain().value().published, 1u);
  auto got = bqtest::take_all(broker, "orders");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].body, "good");
  std::vector<std::string> ids{parked[0].id, parked[1].id, "3"};
  EXPECT_EQ(s->retry(ids).value(), 2u);  // the published row is not touched
  EXPECT_EQ(r.drain().value().published, 2u);
  EXPECT_EQ(bqtest::take_all(broker, "bad").size(), 2u);
  EXPECT_TRUE(s->list({.status = outbox::row_status::parked}).value().empty());
}

TEST_F(OutboxSqlite, ALongReasonIsCutAndParkingCanBeOff) {
  auto s = open({.park_after = 0});
  s->save("b", "q").value();
  const std::string reason(2000, 'r');
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(s->mark_failed("1", reason));
  auto rows = s->fetch_unpublished(10).value();
  ASSERT_EQ(rows.size(), 1u);  // never parked
  EXPECT_EQ(rows[0].attempts, 10);
  EXPECT_EQ(rows[0].last_error.size(), 500u);
  ASSERT_TRUE(s->mark_failed("nope", "x"));
}

TEST_F(OutboxSqlite, UnsafeTableNamesAndANullConnectionAreRefused) {
  for (const std::string& bad : std::vector<std::string>{"", "a b", "x;DROP TABLE t", "1abc",
                                                         "t\xc3\xa9", std::string(64, 'a')}) {
    auto r = outbox::sqlite_store::open(path, {.table = bad});
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, outbox::errc::invalid_argument);
  }
  EXPECT_TRUE(outbox::sqlite_store::open(path, {.table = "_my_outbox_2"}));
  auto r = outbox::sqlite_store::adopt(nullptr);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, condition::invalid_argument);
}

TEST_F(OutboxSqlite, AnUnopenableFileIsATypedError) {
  auto r = outbox::sqlite_store::open((dir / "no-such-dir" / "x.db").string());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, outbox::errc::unavailable);
  ASSERT_TRUE(r.error().native);
  EXPECT_EQ(r.error().native->source, "sqlite");
}

// Delivery times (issue #37): the store contract, and a table made by a version without the
// deliver_at column (its rows stay due at once) gains it on open() / migrate().
TEST_F(OutboxSqlite, KeepsDeliveryTimes) { bqtest::expect_store_keeps_delivery_times(*open()); }

TEST_F(OutboxSqlite, ATableWithoutDeliveryTimesGainsTheColumnAndKeepsItsRows) {
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    const char* old_table =
        "CREATE TABLE babelqueue_outbox (id INTEGER PRIMARY KEY AUTOINCREMENT, queue TEXT NOT "
        "NULL, body BLOB NOT NULL, status TEXT NOT NULL DEFAULT 'pending', attempts INTEGER NOT "
        "NULL DEFAULT 0, last_error TEXT, created_at TEXT NOT NULL, published_at TEXT, failed_at "
        "TEXT);"
        "INSERT INTO babelqueue_outbox (queue, body, created_at) VALUES ('q', 'old', "
        "'2026-12-01T00:00:00Z');";
    ASSERT_EQ(sqlite3_exec(db, old_table, nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
  auto s = open();
  auto rows = s->fetch_unpublished(10).value();
  ASSERT_EQ(bqtest::bodies_of(rows), (std::vector<std::string>{"old"}));
  EXPECT_FALSE(rows[0].deliver_at.has_value());
  ASSERT_TRUE(s->save_at("new", "q", outbox::due_now() + std::chrono::hours(1)));
  EXPECT_EQ(s->fetch_unpublished(10).value().size(), 1u);  // "new" is not due
}

}  // namespace
