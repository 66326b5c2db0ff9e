// The PostgreSQL idempotency store (idempotency/postgres_store.hpp) against the real server
// of scripts/services.sh (BABELQUEUE_POSTGRES_URL): the store contract, TTL expiry with the
// server's clock, the claim extension (two stores racing on one id from two threads,
// a crashed claim expiring, release), the transactional remember_in rolled back and
// committed, Go's table layout written and read with Go's own SQL, the table-name guard,
// and typed errors for an unreachable server and a missing table. Each test uses tables of
// its own (CTest runs the tests as parallel processes on one database).
#include "idempotency/store_contract.hpp"
#include "runtime/test_util.hpp"
#include "support/postgres.hpp"

#include <babelqueue/idempotency/error.hpp>
#include <babelqueue/idempotency/postgres_store.hpp>
#include <babelqueue/idempotency/wrap.hpp>
#include <babelqueue/memory/memory_transport.hpp>
#include <babelqueue/runtime/app.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace babelqueue;
using namespace std::chrono_literals;

class PostgresIdempotency : public ::testing::Test {
 protected:
  void SetUp() override {
    url = bqtest::postgres_url();
    BQ_REQUIRE_POSTGRES(url);
    raw = std::make_unique<bqtest::pg_client>(url);
    ASSERT_TRUE(raw->ok()) << PQerrorMessage(raw->get());
    table = bqtest::unique_table("bq_idem");
  }
  void TearDown() override {
    if (raw) {
      raw->exec("DROP TABLE IF EXISTS " + table);
      raw->exec("DROP TABLE IF EXISTS " + table + "_claims");
    }
  }
  std::shared_ptr<idempotency::postgres_store> open(idempotency::postgres_store_options o = {}) {
    o.table = table;
    auto s = idempotency::postgres_store::open(url, o);
    EXPECT_TRUE(s) << (s ? "" : s.error().message);
    if (!s) return nullptr;
    EXPECT_TRUE((*s)->migrate());
    return std::shared_ptr<idempotency::postgres_store>(std::move(*s));
  }
  std::string url;
  std::string table;
  std::unique_ptr<bqtest::pg_client> raw;
};

TEST_F(PostgresIdempotency, TheClaimingStoreContract) {
  auto s = open();
  ASSERT_TRUE(s);
  bqtest::check_claiming_store_contract(*s);
}

TEST_F(PostgresIdempotency, SeenRememberForget) {
  auto s = open();
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->seen("a").value());
  ASSERT_TRUE(s->remember("a"));
  ASSERT_TRUE(s->remember("a"));  // twice is not an error
  EXPECT_TRUE(s->seen("a").value());
  EXPECT_FALSE(s->seen(" a").value());  // ids are verbatim
  ASSERT_TRUE(s->remember(" "));        // white space is an id
  EXPECT_TRUE(s->seen(" ").value());
  const std::string unicode = "caf\xc3\xa9-\xf0\x9f\x98\x80";
  ASSERT_TRUE(s->remember(unicode));
  EXPECT_TRUE(s->seen(unicode).value());
  ASSERT_TRUE(s->forget("a"));
  EXPECT_FALSE(s->seen("a").value());
  ASSERT_TRUE(s->forget("never-there"));
  ASSERT_TRUE(s->migrate());  // again: harmless
  EXPECT_TRUE(s->seen(" ").value());
  // TTL 0: the mark never expires (Go's NULL).
  EXPECT_EQ(raw->scalar("SELECT expires_at FROM " + table + " WHERE message_id = ' '"), "<null>");
  // TEXT cannot hold a NUL: such an id is kept under `bq-nul:<hex of its bytes>`, exactly.
  const std::string nul("x\0y", 3);
  ASSERT_TRUE(s->remember(nul));
  EXPECT_TRUE(s->seen(nul).value());
  EXPECT_FALSE(s->seen("x").value());
  EXPECT_FALSE(s->seen(std::string("x\0z", 3)).value());
  EXPECT_EQ(raw->scalar("SELECT count(*) FROM " + table + " WHERE message_id = 'bq-nul:780079'"),
            "1");
  // Bytes that are not UTF-8 are refused by the server: an error, never a wrong key.
  auto bad = s->remember("\xff");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, idempotency::errc::backend);
}

TEST_F(PostgresIdempotency, MarksExpireAfterTheTtlOnTheServersClock) {
  auto s = open({.ttl = 300ms});
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->remember("t"));
  EXPECT_TRUE(s->seen("t").value());
  // expires_at = the server's now() + ttl (not the client's clock).
  const std::string gap =
      raw->scalar("SELECT round(extract(epoch FROM expires_at - created_at) * 1000) FROM " + table);
  EXPECT_EQ(gap, "300");
  std::this_thread::sleep_for(450ms);
  EXPECT_FALSE(s->seen("t").value());
  ASSERT_TRUE(s->remember("t"));  // the expired row is renewed (Go's conditional upsert)
  EXPECT_TRUE(s->seen("t").value());
  EXPECT_EQ(raw->scalar("SELECT count(*) FROM " + table), "1");
}

TEST_F(PostgresIdempotency, AClaimIsInFlightNotSeen) {
  auto s = open();
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->claim("a", 1h).value());
  EXPECT_FALSE(s->claim("a", 1h).value());  // a live claim (this store's own too)
  EXPECT_FALSE(s->seen("a").value());       // claimed is not committed
  EXPECT_EQ(raw->scalar("SELECT count(*) FROM " + table), "0");  // Go sees nothing either
  ASSERT_TRUE(s->release("a"));
  EXPECT_TRUE(s->claim("a", 1h).value());  // released: free again
  ASSERT_TRUE(s->remember("a"));
  EXPECT_TRUE(s->seen("a").value());
  EXPECT_EQ(raw->scalar("SELECT count(*) FROM " + table + "_claims"), "0");  // claim ended
  EXPECT_FALSE(s->claim("a", 1h).value());  // committed ids cannot be claimed
  ASSERT_TRUE(s->release("a"));             // never touches a committed mark
  EXPECT_TRUE(s->seen("a").value());
  ASSERT_TRUE(s->release("never-claimed"));
  auto bad = s->claim("b", 0ms);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, condition::invalid_argument);
}

TEST_F(PostgresIdempotency, ACrashedWorkersClaimExpiresAndItsLateReleaseIsHarmless) {
  auto crashed = open();
  auto other = open();
  ASSERT_TRUE(crashed && other);
  EXPECT_TRUE(crashed->claim("c", 150ms).value());
  EXPECT_FALSE(other->claim("c", 1h).value());
  std::this_thread::sleep_for(250ms);  // the holder "crashed": its claim runs out
  EXPECT_TRUE(other->claim("c", 1h).value());
  // The first worker comes back and releases: only its own (expired) claim could go, so the
  // successor's live claim stays.
  ASSERT_TRUE(crashed->release("c"));
  EXPECT_FALSE(crashed->claim("c", 1h).value());
  ASSERT_TRUE(other->release("c"));
  EXPECT_TRUE(crashed->claim("c", 1h).value());
}

TEST_F(PostgresIdempotency, TwoStoresRacingOnTheSameIdsWinEachOnce) {
  auto first = open();
  auto second = open();
  ASSERT_TRUE(first && second);
  constexpr int ids = 200;
  std::atomic<int> wins{0};
  std::vector<int> winners(ids, 0);
  std::mutex mutex;
  std::atomic<bool> go{false};
  auto racer = [&](idempotency::postgres_store& s) {
    while (!go.load()) std::this_thread::yield();
    for (int i = 0; i < ids; ++i) {
      const std::string id = "race-" + std::to_string(i);
      auto won = s.claim(id, 1h);
      ASSERT_TRUE(won) << won.error().message;
      if (*won) {
        ++wins;
        std::lock_guard lock(mutex);
        ++winners[static_cast<std::size_t>(i)];
      }
      // Every other id is committed by the winner at once: a loser coming later must not
      // claim a committed id either.
      if (*won && i % 2 == 0) {
        ASSERT_TRUE(s.remember(id));
      }
    }
  };
  std::thread a(racer, std::ref(*first));
  std::thread b(racer, std::ref(*second));
  go = true;
  a.join();
  b.join();
  EXPECT_EQ(wins.load(), ids);
  for (int i = 0; i < ids; ++i) EXPECT_EQ(winners[static_cast<std::size_t>(i)], 1) << i;
}

TEST_F(PostgresIdempotency, FourWorkersOfAClaimingWrapRunEachEffectOnce) {
  memory::register_transport();
  auto s = open();
  ASSERT_TRUE(s);
  const std::string broker = bqtest::unique_broker("pg-claim");
  auto o = bqtest::fast_options();
  o.max_attempts = 1000;  // parked copies come round until the holder commits
  o.dead_letter = true;
  o.workers = 4;
  app a("memory://" + broker, o);
  std::mutex mutex;
  std::map<std::string, int> effects;
  a.handle("urn:a:b:c", idempotency::wrap_claiming(s, [&](message& m) {
             std::this_thread::sleep_for(2ms);  // widen the in-flight window
             std::lock_guard lock(mutex);
             ++effects[std::string(m.id())];
           }));
  constexpr int ids = 30;
  for (int copy = 0; copy < 3; ++copy) {
    for (int i = 0; i < ids; ++i) {
      bqtest::put_raw(
          broker, "default",
          R"({"job":"urn:a:b:c","trace_id":"t-1","data":{},"meta":{"schema_version":1,"id":"w-)" +
              std::to_string(i) + R"("},"attempts":0})");
    }
  }
  std::thread stopper([&] {
    const auto give_up = std::chrono::steady_clock::now() + 60s;
    while (raw->scalar("SELECT count(*) FROM " + table) != std::to_string(ids) &&
           std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(10ms);
    }
    std::this_thread::sleep_for(300ms);  // parked copies come round once more and are acked
    a.stop();
  });
  ASSERT_TRUE(a.consume());
  stopper.join();
  ASSERT_EQ(effects.size(), static_cast<std::size_t>(ids));
  for (const auto& [id, n] : effects) EXPECT_EQ(n, 1) << id;
  EXPECT_EQ(raw->scalar("SELECT count(*) FROM " + table + "_claims"), "0");
  EXPECT_TRUE(bqtest::take_all(broker, "default.dlq").empty());
}

TEST_F(PostgresIdempotency, RememberInCommitsAndRollsBackWithTheCallersTransaction) {
  auto s = open();
  ASSERT_TRUE(s);
  bqtest::pg_client app_conn(url);
  const std::string orders = table + "_orders";
  ASSERT_TRUE(app_conn.exec("CREATE TABLE " + orders + " (id TEXT)"));

  ASSERT_TRUE(app_conn.exec("BEGIN"));
  ASSERT_TRUE(app_conn.exec("INSERT INTO " + orders + " VALUES ('o-1')"));
  ASSERT_TRUE(s->remember_in(app_conn.get(), "m-1"));
  EXPECT_FALSE(s->seen("m-1").value());  // not visible before the commit
  ASSERT_TRUE(app_conn.exec("ROLLBACK"));
  EXPECT_FALSE(s->seen("m-1").value());  // gone with the business change
  EXPECT_EQ(raw->scalar("SELECT count(*) FROM " + orders), "0");

  ASSERT_TRUE(app_conn.exec("BEGIN"));
  ASSERT_TRUE(app_conn.exec("INSERT INTO " + orders + " VALUES ('o-2')"));
  ASSERT_TRUE(s->remember_in(app_conn.get(), "m-2"));
  ASSERT_TRUE(app_conn.exec("COMMIT"));
  EXPECT_TRUE(s->seen("m-2").value());
  EXPECT_EQ(raw->scalar("SELECT count(*) FROM " + orders), "1");
  raw->exec("DROP TABLE " + orders);

  auto null_conn = s->remember_in(nullptr, "m-3");
  ASSERT_FALSE(null_conn);
  EXPECT_EQ(null_conn.error().code, idempotency::errc::invalid_argument);
}

TEST_F(PostgresIdempotency, TheTransactionalWrapMarksInsideTheHandlersTransaction) {
  memory::register_transport();
  auto s = open();
  ASSERT_TRUE(s);
  bqtest::pg_client app_conn(url);
  const std::string orders = table + "_orders";
  ASSERT_TRUE(app_conn.exec("CREATE TABLE " + orders + " (id TEXT)"));
  const std::string broker = bqtest::unique_broker("pg-tx");
  auto o = bqtest::fast_options();
  o.max_attempts = 3;
  app a("memory://" + broker, o);
  int runs = 0;
  a.handle("urn:a:b:c", idempotency::wrap(s,
                                          [&](message& m) {
                                            ++runs;
                                            app_conn.exec("BEGIN");
                                            app_conn.exec("INSERT INTO " + orders + " VALUES ($1)",
                                                          {std::string(m.id())});
                                            if (auto r = s->remember_in(app_conn.get(), m.id());
                                                !r) {
                                              app_conn.exec("ROLLBACK");
                                              throw babelqueue::error(r.error());
                                            }
                                            if (runs == 1) {  // the first run fails after its mark
                                              app_conn.exec("ROLLBACK");
                                              throw std::runtime_error("business rule failed");
                                            }
                                            app_conn.exec("COMMIT");
                                          },
                                          {.remember = false}));
  const std::string body =
      R"({"job":"urn:a:b:c","trace_id":"t","data":{},"meta":{"schema_version":1,"id":"tx-1"},"attempts":0})";
  bqtest::put_raw(broker, "default", body);
  bqtest::put_raw(broker, "default", body);  // a duplicate
  EXPECT_EQ(a.drain().value(), 3u);          // fail (rolled back), retry ok, duplicate skipped
  EXPECT_EQ(runs, 2);
  EXPECT_TRUE(s->seen("tx-1").value());
  EXPECT_EQ(raw->scalar("SELECT count(*) FROM " + orders), "1");  // one effect
  raw->exec("DROP TABLE " + orders);
}

// Go's idempotency-postgres, by hand (wire-helpers §1.4): its schema.sql creates the table,
// its Claim/Remember INSERT (with expires_at sent by the client) writes rows; ours must read
// them as seen, and our rows must read as seen by Go's SELECT.
TEST_F(PostgresIdempotency, GoLayoutRowsInteroperateBothWays) {
  const std::string t = table;
  ASSERT_TRUE(raw->exec("CREATE TABLE IF NOT EXISTS " + t +
                        " (message_id TEXT NOT NULL PRIMARY KEY,"
                        " created_at TIMESTAMPTZ NOT NULL DEFAULT now(),"
                        " expires_at TIMESTAMPTZ NULL)"));
  ASSERT_TRUE(
      raw->exec("CREATE INDEX IF NOT EXISTS " + t + "_expires_at_idx ON " + t + " (expires_at)"));
  const std::string go_claim =
      "INSERT INTO " + t +
      " (message_id, created_at, expires_at) VALUES ($1, now(), $2)"
      " ON CONFLICT (message_id) DO UPDATE SET created_at = now(), expires_at = EXCLUDED.expires_at"
      " WHERE " +
      t + ".expires_at IS NOT NULL AND " + t + ".expires_at <= now() RETURNING message_id";
  const std::string go_seen =
      "SELECT 1 FROM " + t +
      " WHERE message_id = $1 AND (expires_at IS NULL OR expires_at > now())";
  // A Go worker's marks: forever (NULL), live for an hour, already expired (client clock).
  ASSERT_TRUE(raw->exec("INSERT INTO " + t +
                            " (message_id, created_at, expires_at) VALUES "
                            "($1, now(), NULL)",
                        {"go-forever"}));
  ASSERT_TRUE(raw->exec(go_claim, {"go-live", "2999-01-01T00:00:00Z"}));
  ASSERT_TRUE(raw->exec(go_claim, {"go-expired", "2000-01-01T00:00:00Z"}));

  auto s = open();  // our migrate() on Go's table: IF NOT EXISTS, nothing changes
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->seen("go-forever").value());
  EXPECT_TRUE(s->seen("go-live").value());
  EXPECT_FALSE(s->seen("go-expired").value());
  EXPECT_FALSE(s->claim("go-live", 1h).value());  // a Go-committed id cannot be claimed
  EXPECT_TRUE(s->claim("go-expired", 1h).value());

  ASSERT_TRUE(s->remember("ours"));
  ASSERT_TRUE(s->remember("go-expired"));  // renews Go's expired row
  EXPECT_EQ(raw->scalar(go_seen, {"ours"}), "1");
  EXPECT_EQ(raw->scalar(go_seen, {"go-expired"}), "1");
  // Go's Claim on an id we committed: no row back = a live duplicate.
  ASSERT_TRUE(raw->exec(go_claim, {"ours", "2999-01-01T00:00:00Z"}));
  EXPECT_TRUE(raw->last().empty());
  ASSERT_TRUE(s->forget("ours"));
  EXPECT_EQ(raw->scalar(go_seen, {"ours"}), "");

  // Our migrate() on a fresh table makes exactly Go's columns and index.
  const std::string fresh = bqtest::unique_table("bq_idem_layout");
  auto mine = idempotency::postgres_store::open(url, {.table = fresh}).value();
  ASSERT_TRUE(mine->migrate());
  ASSERT_TRUE(
      raw->exec("SELECT column_name, data_type, is_nullable, coalesce(column_default, '') FROM "
                "information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position",
                {fresh}));
  const std::vector<std::vector<std::string>> go_columns{
      {"message_id", "text", "NO", ""},
      {"created_at", "timestamp with time zone", "NO", "now()"},
      {"expires_at", "timestamp with time zone", "YES", ""}};
  EXPECT_EQ(raw->last(), go_columns);
  EXPECT_EQ(
      raw->scalar("SELECT indexdef FROM pg_indexes WHERE indexname = $1",
                  {fresh + "_expires_at_idx"}),
      "CREATE INDEX " + fresh + "_expires_at_idx ON public." + fresh + " USING btree (expires_at)");
  raw->exec("DROP TABLE " + fresh);
  raw->exec("DROP TABLE " + fresh + "_claims");
}

TEST_F(PostgresIdempotency, UnsafeTableNamesAndANullConnectionAreRefused) {
  for (const std::string& bad : std::vector<std::string>{
           "", "a b", "x;DROP TABLE t", "1abc", "t\xc3\xa9", "t\"x", "a-b", std::string(64, 'a')}) {
    auto r = idempotency::postgres_store::open(url, {.table = bad});
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, idempotency::errc::invalid_argument);
    EXPECT_EQ(r.error().code, condition::invalid_argument);
  }
  auto claims_bad = idempotency::postgres_store::open(url, {.table = "t", .claims_table = "c;x"});
  ASSERT_FALSE(claims_bad);
  EXPECT_EQ(claims_bad.error().code, idempotency::errc::invalid_argument);
  // 63 characters are Go's limit; then the derived claims table would not fit: named it.
  auto too_long = idempotency::postgres_store::open(url, {.table = std::string(63, 'a')});
  ASSERT_FALSE(too_long);
  EXPECT_NE(too_long.error().message.find("set claims_table"), std::string::npos);
  auto named = idempotency::postgres_store::open(
      url, {.table = std::string(63, 'a'), .claims_table = "_my_claims_2"});
  ASSERT_TRUE(named);
  EXPECT_EQ((*named)->claims_table(), "_my_claims_2");
  auto null_conn = idempotency::postgres_store::adopt(nullptr);
  ASSERT_FALSE(null_conn);
  EXPECT_EQ(null_conn.error().code, condition::invalid_argument);
}

TEST_F(PostgresIdempotency, AnAdoptedConnectionIsUsedAndLeftOpen) {
  bqtest::pg_client mine(url);
  {
    auto s = idempotency::postgres_store::adopt(mine.get(), {.table = table}).value();
    ASSERT_TRUE(s->migrate());
    ASSERT_TRUE(s->remember("adopted"));
    // A claim inside the caller's open transaction runs in a savepoint of it.
    ASSERT_TRUE(mine.exec("BEGIN"));
    EXPECT_TRUE(s->claim("in-tx", 1h).value());
    EXPECT_FALSE(s->claim("adopted", 1h).value());  // committed: its savepoint rolled back
    ASSERT_TRUE(mine.exec("COMMIT"));
  }
  EXPECT_TRUE(mine.ok());  // the store did not close it
  EXPECT_EQ(mine.scalar("SELECT count(*) FROM " + table + "_claims"), "1");
  EXPECT_EQ(raw->scalar("SELECT message_id FROM " + table), "adopted");
}

TEST_F(PostgresIdempotency, AMissingTableIsABackendErrorWithTheServersMessage) {
  auto s = idempotency::postgres_store::open(url, {.table = table}).value();  // no migrate()
  auto r = s->seen("a");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, idempotency::errc::backend);
  EXPECT_NE(r.error().message.find("does not exist"), std::string::npos) << r.error().message;
  ASSERT_TRUE(r.error().native);
  EXPECT_EQ(r.error().native->source, "postgres");
  EXPECT_EQ(r.error().native->text, "42P01");  // undefined_table
  EXPECT_TRUE(s->migrate());
  EXPECT_FALSE(s->seen("a").value());  // the same connection goes on
}

TEST(PostgresIdempotencyOffline, AnUnreachableServerIsUnavailable) {
  auto r = idempotency::postgres_store::open(
      "postgresql://babelqueue@127.0.0.1:1/babelqueue?connect_timeout=2");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, idempotency::errc::unavailable);
  EXPECT_EQ(r.error().code, condition::unavailable);
  ASSERT_TRUE(r.error().native);
  EXPECT_EQ(r.error().native->source, "libpq");
}

}  // namespace
