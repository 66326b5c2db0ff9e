// The idempotency store on SQLite (idempotency/sqlite_store.hpp) on real files in a scratch
// directory: the contract, the Go-like layout, TTL expiry, the transactional remember_in()
// (a rolled-back transaction leaves the id unseen), two connections and many threads
// racing for one claim, the table-name guard, unusable and locked databases, and both
// wraps on the runtime over memory://.
#include "idempotency/store_contract.hpp"
#include "runtime/test_util.hpp"
#include "support/services.hpp"

#include <babelqueue/idempotency/error.hpp>
#include <babelqueue/idempotency/sqlite_store.hpp>
#include <babelqueue/idempotency/wrap.hpp>
#include <babelqueue/memory/memory_transport.hpp>
#include <babelqueue/runtime/app.hpp>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace babelqueue;
using namespace std::chrono_literals;

std::string with_id(const std::string& id) {
  return R"({"job":"urn:a:b:c","trace_id":"t-1","data":{},"meta":{"schema_version":1,"id":")" + id +
         R"("},"attempts":0})";
}

class IdempotencySqlite : public ::testing::Test {
 protected:
  void SetUp() override {
    memory::register_transport();
    // unique_name() carries the pid: CTest runs each test in its own process, in parallel.
    dir = std::filesystem::temp_directory_path() / bqtest::unique_name("idem-sqlite");
    std::filesystem::create_directories(dir);
    path = (dir / "app.db").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::shared_ptr<idempotency::sqlite_store> open(idempotency::sqlite_store_options o = {}) {
    auto s = idempotency::sqlite_store::open(path, o).value();
    s->migrate().value();
    return s;
  }
  long long count(sqlite3* db, const std::string& sql) {
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sql;
    long long n = -1;
    if (sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
  }
  std::filesystem::path dir;
  std::string path;
};

TEST_F(IdempotencySqlite, HonoursTheClaimingStoreContract) {
  auto s = open();
  bqtest::check_claiming_store_contract(*s);
}

TEST_F(IdempotencySqlite, MarksSurviveAReopenInTheGoLikeLayout) {
  {
    auto s = open();
    ASSERT_TRUE(s->remember("m-1"));
  }
  auto s = open();  // migrate() again is harmless
  EXPECT_TRUE(s->seen("m-1").value());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(count(db,
                  "SELECT count(*) FROM babelqueue_idempotency WHERE message_id = 'm-1'"
                  " AND expires_at IS NULL AND created_at > 1700000000000"),
            1);
  // A mark written by hand with no expiry reads as seen (a peer or an operator wrote it).
  ASSERT_EQ(sqlite3_exec(db,
                         "INSERT INTO babelqueue_idempotency (message_id, created_at, expires_at)"
                         " VALUES ('by-hand', 0, NULL)",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  EXPECT_TRUE(s->seen("by-hand").value());
  EXPECT_EQ(count(db,
                  "SELECT count(*) FROM sqlite_master WHERE name IN"
                  " ('babelqueue_idempotency_claims', 'babelqueue_idempotency_expires_at_idx')"),
            2);
  sqlite3_close(db);
}

TEST_F(IdempotencySqlite, CommittedMarksExpireAfterTheTtl) {
  auto s = open({.ttl = 150ms});
  ASSERT_TRUE(s->remember("t-1"));
  EXPECT_TRUE(s->seen("t-1").value());
  EXPECT_FALSE(s->claim("t-1", 1h).value());  // committed and live: not claimable
  std::this_thread::sleep_for(250ms);
  EXPECT_FALSE(s->seen("t-1").value());      // expired: the id may run again
  EXPECT_TRUE(s->claim("t-1", 1h).value());  // and be claimed
  ASSERT_TRUE(s->remember("t-1"));           // re-marked with a fresh TTL
  EXPECT_TRUE(s->seen("t-1").value());
}

TEST_F(IdempotencySqlite, RememberInCommitsOrRollsBackWithTheCallersTransaction) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  auto s = idempotency::sqlite_store::adopt(db).value();
  ASSERT_TRUE(s->migrate());
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE orders (id TEXT)", nullptr, nullptr, nullptr),
            SQLITE_OK);

  ASSERT_EQ(sqlite3_exec(db, "BEGIN; INSERT INTO orders VALUES ('o-1')", nullptr, nullptr, nullptr),
            SQLITE_OK);
  ASSERT_TRUE(s->remember_in(db, "m-rb"));
  ASSERT_EQ(sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr), SQLITE_OK);
  EXPECT_FALSE(s->seen("m-rb").value());  // the effect and the mark went together
  EXPECT_EQ(count(db, "SELECT count(*) FROM orders"), 0);

  ASSERT_EQ(sqlite3_exec(db, "BEGIN; INSERT INTO orders VALUES ('o-2')", nullptr, nullptr, nullptr),
            SQLITE_OK);
  ASSERT_TRUE(s->remember_in(db, "m-ok"));
  ASSERT_EQ(sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  EXPECT_TRUE(s->seen("m-ok").value());
  EXPECT_EQ(count(db, "SELECT count(*) FROM orders"), 1);

  // A store with its own connection, the handler's transaction on another one.
  auto own = open();
  ASSERT_EQ(sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  ASSERT_TRUE(own->remember_in(db, "m-other"));
  EXPECT_FALSE(own->seen("m-other").value());  // not committed yet: invisible to the store
  ASSERT_EQ(sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  EXPECT_TRUE(own->seen("m-other").value());
  auto null_db = own->remember_in(nullptr, "x");
  ASSERT_FALSE(null_db);
  EXPECT_EQ(null_db.error().code, idempotency::errc::invalid_argument);
  s.reset();
  own.reset();
  sqlite3_close(db);
}

TEST_F(IdempotencySqlite, TheTransactionalWrapRunsTheEffectOnceAndAFailedTransactionRetries) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE effects (id TEXT)", nullptr, nullptr, nullptr),
            SQLITE_OK);
  auto seen = open();
  auto o = bqtest::fast_options();
  o.max_attempts = 3;
  const std::string broker = bqtest::unique_broker("idem-sqlite-tx");
  app a("memory://" + broker, o);
  int runs = 0;
  a.handle("urn:a:b:c",
           idempotency::wrap(seen,
                             [&](message& m) {
                               ++runs;
                               sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
                               sqlite3_exec(db, "INSERT INTO effects VALUES ('e')", nullptr,
                                            nullptr, nullptr);
                               auto marked = seen->remember_in(db, m.id());
                               if (runs == 1 || !marked) {  // the first commit "fails"
                                 sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
                                 throw std::runtime_error("transaction failed");
                               }
                               sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
                             },
                             {.remember = false}));
  bqtest::put_raw(broker, "default", with_id("tx-1"));
  bqtest::put_raw(broker, "default", with_id("tx-1"));
  EXPECT_EQ(a.drain().value(), 3u);  // fail + retry, and the duplicate is acked
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(count(db, "SELECT count(*) FROM effects"), 1);  // exactly one committed effect
  EXPECT_TRUE(seen->seen("tx-1").value());
  seen.reset();
  sqlite3_close(db);
}

TEST_F(IdempotencySqlite, TwoConnectionsAndManyThreadsClaimingOneIdHaveExactlyOneWinner) {
  auto first = open();
  auto second = open();  // another connection to the same file (another worker process)
  constexpr int ids = 40;
  constexpr int threads = 8;
  std::vector<std::atomic<int>> wins(ids);
  std::vector<std::thread> pool;
  std::atomic<int> errors{0};
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      auto& s = t % 2 == 0 ? *first : *second;
      for (int i = 0; i < ids; ++i) {
        auto won = s.claim("race-" + std::to_string(i), 1h);
        if (!won) {
          ++errors;
        } else if (*won) {
          ++wins[i];
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  EXPECT_EQ(errors.load(), 0);
  for (int i = 0; i < ids; ++i) EXPECT_EQ(wins[i].load(), 1) << i;
  // A claim taken by one connection is not released by the other instance.
  ASSERT_TRUE(first->claim("owned", 1h).value());
  ASSERT_TRUE(second->release("owned"));
  EXPECT_FALSE(second->claim("owned", 1h).value());
  ASSERT_TRUE(first->release("owned"));
  EXPECT_TRUE(second->claim("owned", 1h).value());
}

TEST_F(IdempotencySqlite, AReleaseAfterTheClaimWasTakenOverLeavesTheNewHolder) {
  auto crashed = open();
  auto other = open();
  ASSERT_TRUE(crashed->claim("slow", 30ms).value());
  std::this_thread::sleep_for(80ms);                 // the claim runs out while "crashed" runs
  ASSERT_TRUE(other->claim("slow", 1h).value());     // taken over
  ASSERT_TRUE(crashed->release("slow"));             // the late release of the first holder
  EXPECT_FALSE(crashed->claim("slow", 1h).value());  // the new holder still holds it
}

TEST_F(IdempotencySqlite, TheClaimingWrapWithFourWorkersOnTwoConnectionsRunsEachEffectOnce) {
  auto one = open();
  auto two = open();
  const std::string broker = bqtest::unique_broker("idem-sqlite-claim");
  auto o = bqtest::fast_options();
  o.max_attempts = 1000;  // parked copies come round until the holder commits
  o.workers = 2;
  std::mutex mutex;
  std::map<std::string, int> effects;
  auto handler = [&](message& m) {
    std::this_thread::sleep_for(1ms);  // widen the in-flight window
    std::lock_guard lock(mutex);
    ++effects[std::string(m.id())];
  };
  app a("memory://" + broker, o);
  app b("memory://" + broker, o);
  a.handle("urn:a:b:c", idempotency::wrap_claiming(one, handler));
  b.handle("urn:a:b:c", idempotency::wrap_claiming(two, handler));
  constexpr int ids = 30;
  for (int copy = 0; copy < 3; ++copy) {
    for (int i = 0; i < ids; ++i)
      bqtest::put_raw(broker, "default", with_id("r-" + std::to_string(i)));
  }
  std::thread stopper([&] {
    const auto give_up = std::chrono::steady_clock::now() + 60s;
    auto committed = [&] {
      int n = 0;
      for (int i = 0; i < ids; ++i) n += one->seen("r-" + std::to_string(i)).value_or(false);
      return n;
    };
    while (committed() < ids && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(5ms);
    }
    std::this_thread::sleep_for(300ms);  // parked copies come round once more and are acked
    a.stop();
    b.stop();
  });
  std::thread second([&] { EXPECT_TRUE(b.consume()); });
  ASSERT_TRUE(a.consume());
  second.join();
  stopper.join();
  ASSERT_EQ(effects.size(), static_cast<std::size_t>(ids));
  for (const auto& [id, n] : effects) EXPECT_EQ(n, 1) << id;
  EXPECT_TRUE(bqtest::take_all(broker, "default.dlq").empty());
}

TEST_F(IdempotencySqlite, UnsafeTableNamesAreRefused) {
  for (const std::string& bad : std::vector<std::string>{
           "", "1abc", "a-b", "a b", "t; DROP TABLE x", "caf\xc3\xa9", std::string(57, 'a')}) {
    auto r = idempotency::sqlite_store::open(path, {.table = bad});
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, idempotency::errc::invalid_argument);
    EXPECT_EQ(r.error().code, condition::invalid_argument);
  }
  auto custom = idempotency::sqlite_store::open(path, {.table = "_my_seen_2"}).value();
  ASSERT_TRUE(custom->migrate());
  ASSERT_TRUE(custom->remember("x"));
  EXPECT_TRUE(custom->seen("x").value());
  EXPECT_TRUE(idempotency::sqlite_store::open(path, {.table = std::string(56, 'a')}));
  auto null_db = idempotency::sqlite_store::adopt(nullptr);
  ASSERT_FALSE(null_db);
  EXPECT_EQ(null_db.error().code, idempotency::errc::invalid_argument);
}

TEST_F(IdempotencySqlite, UnusableOrLockedDatabasesAreTypedErrors) {
  auto missing = idempotency::sqlite_store::open((dir / "no" / "such" / "dir.db").string());
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, idempotency::errc::unavailable);
  EXPECT_EQ(missing.error().code, condition::unavailable);
  ASSERT_TRUE(missing.error().native);
  EXPECT_EQ(missing.error().native->source, "sqlite");

  auto unmigrated = idempotency::sqlite_store::open(path).value();
  auto no_table = unmigrated->seen("a");
  ASSERT_FALSE(no_table);
  EXPECT_EQ(no_table.error().code, idempotency::errc::backend);  // no such table

  auto s = open({.busy_timeout = 50ms});
  sqlite3* locker = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &locker), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(locker, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  auto locked = s->remember("l-1");
  ASSERT_FALSE(locked);
  EXPECT_EQ(locked.error().code, idempotency::errc::unavailable);  // SQLITE_BUSY: transient
  auto locked_claim = s->claim("l-1", 1h);
  ASSERT_FALSE(locked_claim);
  EXPECT_EQ(locked_claim.error().code, idempotency::errc::unavailable);
  ASSERT_EQ(sqlite3_exec(locker, "ROLLBACK", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(locker);
  ASSERT_TRUE(s->remember("l-1"));  // the lock is gone: the same store works again
  EXPECT_TRUE(s->seen("l-1").value());

  const std::string garbage = (dir / "garbage.db").string();
  {
    std::FILE* f = std::fopen(garbage.c_str(), "wb");
    std::fputs(std::string(4096, 'x').c_str(), f);
    std::fclose(f);
  }
  auto not_db = idempotency::sqlite_store::open(garbage);
  if (not_db) {
    auto m = (*not_db)->migrate();
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().code, idempotency::errc::backend);  // SQLITE_NOTADB
  } else {
    EXPECT_EQ(not_db.error().code, idempotency::errc::backend);
  }
}

}  // namespace
