// The outbox's PostgreSQL store (outbox/postgres_store.hpp) against the real server of
// scripts/services.sh (BABELQUEUE_POSTGRES_URL): the contract, exact bytes, the caller's
// transaction (save rolled back with the business change), parking and retry, the pass that
// holds its rows (FOR UPDATE SKIP LOCKED) until it is marked, and two relays on one table in
// two threads publishing every row exactly once. Each test uses a table of its own (CTest
// runs the tests as parallel processes on one database).
#include "outbox/fault_injecting_transport.hpp"
#include "outbox/store_delay_cases.hpp"
#include "runtime/test_util.hpp"
#include "support/postgres.hpp"

#include <babelqueue/memory/memory_transport.hpp>
#include <babelqueue/outbox/error.hpp>
#include <babelqueue/outbox/postgres_store.hpp>
#include <babelqueue/outbox/relay.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace babelqueue;

class OutboxPostgres : public ::testing::Test {
 protected:
  void SetUp() override {
    url = bqtest::postgres_url();
    BQ_REQUIRE_POSTGRES(url);
    raw = std::make_unique<bqtest::pg_client>(url);
    ASSERT_TRUE(raw->ok()) << PQerrorMessage(raw->get());
    table = bqtest::unique_table("bq_outbox");
  }
  void TearDown() override {
    if (raw) raw->exec("DROP TABLE IF EXISTS " + table);
  }
  std::shared_ptr<outbox::postgres_store> open(outbox::postgres_store_options o = {}) {
    o.table = table;
    auto s = outbox::postgres_store::open(url, o);
    EXPECT_TRUE(s) << (s ? "" : s.error().message);
    if (!s) return nullptr;
    EXPECT_TRUE((*s)->migrate());
    return {std::move(*s)};
  }
  std::string pending_count() {
    return raw->scalar("SELECT count(*) FROM " + table + " WHERE status = 'pending'");
  }
  std::string url;
  std::string table;
  std::unique_ptr<bqtest::pg_client> raw;
};

TEST_F(OutboxPostgres, RowsKeepTheirBytes) {
  // Any bytes at all: a NUL, a byte that is not UTF-8, U+2028, a number's exact text.
  const std::string body = std::string(R"({"job":"urn:a:b:c","data":{"t":")") +
                           "\xe2\x80\xa8 caf\xc3\xa9 " + std::string("\0\xff", 2) +
                           R"(","n":1.10}})";
  auto s = open();
  ASSERT_TRUE(s);
  const std::string first = s->save(body, "orders").value();
  const std::string second = s->save("second", "billing").value();
  EXPECT_EQ(std::stoll(second), std::stoll(first) + 1);
  ASSERT_TRUE(s->migrate());  // again: harmless
  auto rows = s->fetch_unpublished(10).value();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].id, first);
  EXPECT_EQ(rows[0].body, body);
  EXPECT_EQ(rows[0].queue, "orders");
  EXPECT_EQ(rows[0].attempts, 0);
  EXPECT_EQ(rows[0].status, outbox::row_status::pending);
  EXPECT_EQ(rows[0].created_at.size(), 20u);  // 2026-12-02T21:00:00Z
  EXPECT_EQ(rows[0].created_at.back(), 'Z');
  EXPECT_EQ(rows[1].queue, "billing");
  std::vector<std::string> ids{first, "x", "99999", ""};
  ASSERT_TRUE(s->mark_published(ids));  // unknown and malformed ids are ignored
  EXPECT_EQ(s->fetch_unpublished(1).value().size(), 1u);
  ASSERT_TRUE(s->mark_published({}));  // ends that pass
  EXPECT_TRUE(s->fetch_unpublished(0).value().empty());
  rows = s->fetch_unpublished(10).value();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].id, second);
  ASSERT_TRUE(s->mark_published({}));
  auto published = s->list({.status = outbox::row_status::published}).value();
  ASSERT_EQ(published.size(), 1u);
  EXPECT_EQ(published[0].body, body);
  EXPECT_EQ(raw->scalar("SELECT published_at IS NOT NULL FROM " + table + " WHERE id = " + first),
            "t");
  EXPECT_EQ(s->list({}).value().size(), 2u);
  auto empty_queue = s->save("b", "");
  ASSERT_FALSE(empty_queue);
  EXPECT_EQ(empty_queue.error().code, outbox::errc::invalid_argument);
}

TEST_F(OutboxPostgres, SaveRunsInTheCallersTransaction) {
  bqtest::pg_client app(url);
  auto s = outbox::postgres_store::adopt(app.get(), {.table = table}).value();
  ASSERT_TRUE(s->migrate());
  const std::string orders = table + "_orders";
  ASSERT_TRUE(app.exec("CREATE TABLE " + orders + " (id INTEGER)"));

  ASSERT_TRUE(app.exec("BEGIN"));
  ASSERT_TRUE(app.exec("INSERT INTO " + orders + " VALUES (1)"));
  ASSERT_TRUE(s->save("rolled-back", "orders"));
  ASSERT_TRUE(app.exec("ROLLBACK"));

  ASSERT_TRUE(app.exec("BEGIN"));
  ASSERT_TRUE(app.exec("INSERT INTO " + orders + " VALUES (2)"));
  ASSERT_TRUE(s->save("committed", "orders"));
  // The relay's own connection (its migrate() finds the table and does not wait for this
  // open transaction) sees nothing uncommitted.
  auto relay_side = open();
  EXPECT_TRUE(relay_side->fetch_unpublished(10).value().empty());
  ASSERT_TRUE(app.exec("COMMIT"));
  s.reset();  // adopted: the caller's connection stays open
  EXPECT_TRUE(app.ok());

  auto rows = relay_side->fetch_unpublished(10).value();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].body, "committed");
  ASSERT_TRUE(relay_side->mark_published(std::vector<std::string>{rows[0].id}));
  raw->exec("DROP TABLE " + orders);
}

TEST_F(OutboxPostgres, FailingRowsAreParkedAndStopBlockingNewerOnes) {
  auto s = open({.park_after = 2});
  ASSERT_TRUE(s);
  s->save("poison-1", "bad").value();
  s->save("poison-2", "bad").value();
  const std::string good = s->save("good", "orders").value();
  const std::string broker = bqtest::unique_broker("outbox-pg");
  memory::memory_transport real(broker);
  bqtest::fault_injecting_transport flaky(real);
  flaky.fault = transport_errc::refused;  // a row the broker refuses, not an outage
  outbox::relay_options o;
  o.batch = 2;
  o.sleeper = [](std::chrono::milliseconds) {};
  outbox::relay r(s, flaky, o);
  flaky.fail_every_publish = true;
  EXPECT_EQ(r.drain().value().failed, 2u);
  // Every row of that pass failed: the pass ended with the last mark_failed, so another
  // connection sees the counts and the rows are not locked.
  EXPECT_EQ(raw->scalar("SELECT sum(attempts) FROM " + table), "2");
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
  std::vector<std::string> ids{parked[0].id, parked[1].id, good, "nope"};
  EXPECT_EQ(s->retry(ids).value(), 2u);  // the published row is not touched
  EXPECT_EQ(r.drain().value().published, 2u);
  EXPECT_EQ(bqtest::take_all(broker, "bad").size(), 2u);
  EXPECT_TRUE(s->list({.status = outbox::row_status::parked}).value().empty());
  EXPECT_EQ(pending_count(), "0");
}

TEST_F(OutboxPostgres, ALongReasonIsCutOnACharacterAndParkingCanBeOff) {
  auto s = open({.park_after = 0});
  ASSERT_TRUE(s);
  const std::string id = s->save("b", "q").value();
  std::string reason(499, 'r');
  reason += "\xc3\xa9 and more";  // the 2-byte é would straddle byte 500
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(s->mark_failed(id, reason));
  ASSERT_TRUE(s->mark_failed(id, std::string("nul\0 and \xff", 10)));  // still marked
  auto rows = s->fetch_unpublished(10).value();
  ASSERT_EQ(rows.size(), 1u);  // never parked
  EXPECT_EQ(rows[0].attempts, 11);
  EXPECT_EQ(rows[0].last_error, "nul? and ?");
  ASSERT_TRUE(s->mark_failed(rows[0].id, reason));  // inside the pass; ends it
  rows = s->list({}).value();
  EXPECT_EQ(rows[0].last_error, std::string(499, 'r'));
  ASSERT_TRUE(s->mark_failed("nope", "x"));
  ASSERT_TRUE(s->mark_failed("123456789012345678901234567890", "x"));
}

TEST_F(OutboxPostgres, APassHoldsItsRowsUntilItIsMarked) {
  auto a = open();
  auto b = open();
  ASSERT_TRUE(a && b);
  for (int i = 0; i < 5; ++i) a->save("row-" + std::to_string(i), "q").value();
  auto first = a->fetch_unpublished(2).value();
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].body, "row-0");
  // Relay B skips A's locked rows and takes the next ones.
  auto second = b->fetch_unpublished(10).value();
  ASSERT_EQ(second.size(), 3u);
  EXPECT_EQ(second[0].body, "row-2");
  ASSERT_TRUE(b->mark_published(std::vector<std::string>{second[0].id, second[1].id}));
  // B's pass is over; its unmarked row-4 is pending again, A's rows are still held.
  auto third = b->fetch_unpublished(10).value();
  ASSERT_EQ(third.size(), 1u);
  EXPECT_EQ(third[0].body, "row-4");
  ASSERT_TRUE(b->mark_published({}));
  // A relay that dies mid-pass: its connection goes, the server rolls back, its rows are
  // pending again for the next relay.
  a.reset();
  auto taken_over = b->fetch_unpublished(10).value();
  ASSERT_EQ(taken_over.size(), 3u);
  EXPECT_EQ(taken_over[0].body, "row-0");
  EXPECT_EQ(taken_over[1].body, "row-1");
  ASSERT_TRUE(b->mark_published(
      std::vector<std::string>{taken_over[0].id, taken_over[1].id, taken_over[2].id}));
  EXPECT_EQ(pending_count(), "0");
}

TEST_F(OutboxPostgres, AFetchInsideTheCallersTransactionLeavesItToTheCaller) {
  bqtest::pg_client app(url);
  auto s = outbox::postgres_store::adopt(app.get(), {.table = table}).value();
  ASSERT_TRUE(s->migrate());
  s->save("r", "q").value();
  auto other = open();
  ASSERT_TRUE(app.exec("BEGIN"));
  auto rows = s->fetch_unpublished(10).value();
  ASSERT_EQ(rows.size(), 1u);
  ASSERT_TRUE(s->mark_published(std::vector<std::string>{rows[0].id}));  // no COMMIT of ours
  EXPECT_EQ(pending_count(), "1");
  EXPECT_TRUE(other->fetch_unpublished(10).value().empty());  // still locked by the caller
  ASSERT_TRUE(app.exec("COMMIT"));
  EXPECT_EQ(pending_count(), "0");
}

TEST_F(OutboxPostgres, TwoRelaysInTwoThreadsPublishEveryRowExactlyOnce) {
  constexpr int rows = 600;
  {
    auto writer = open();
    ASSERT_TRUE(writer);
    for (int i = 0; i < rows; ++i) writer->save("body-" + std::to_string(i), "q").value();
  }
  const std::string broker = bqtest::unique_broker("outbox-pg-two");
  std::atomic<bool> go{false};
  std::atomic<int> per_relay[2] = {0, 0};
  auto run = [&](int which) {
    auto store = open();
    ASSERT_TRUE(store);
    memory::memory_transport out(broker);
    outbox::relay_options o;
    o.batch = 7;
    outbox::relay r(store, out, o);
    bqtest::pg_client watch(url);
    while (!go.load()) std::this_thread::yield();
    for (;;) {
      auto pass = r.flush();
      ASSERT_TRUE(pass) << pass.error().message;
      per_relay[which] += static_cast<int>(pass->published);
      if (pass->published == 0 &&
          watch.scalar("SELECT count(*) FROM " + table + " WHERE status = 'pending'") == "0") {
        break;
      }
    }
  };
  std::thread first(run, 0);
  std::thread second(run, 1);
  go = true;
  first.join();
  second.join();
  auto got = bqtest::take_all(broker, "q");
  std::map<std::string, int> seen;
  for (const auto& m : got) ++seen[m.body];
  EXPECT_EQ(got.size(), static_cast<std::size_t>(rows));
  ASSERT_EQ(seen.size(), static_cast<std::size_t>(rows));
  for (const auto& [body, n] : seen) EXPECT_EQ(n, 1) << body;
  EXPECT_EQ(per_relay[0] + per_relay[1], rows);
  EXPECT_GT(per_relay[0].load(), 0);  // both relays worked the table at once
  EXPECT_GT(per_relay[1].load(), 0);
  EXPECT_EQ(raw->scalar("SELECT count(*) FROM " + table + " WHERE status = 'published'"),
            std::to_string(rows));
}

TEST_F(OutboxPostgres, UnsafeTableNamesAndANullConnectionAreRefused) {
  for (const std::string& bad : std::vector<std::string>{
           "", "a b", "x;DROP TABLE t", "1abc", "t\xc3\xa9", "t\"", std::string(64, 'a')}) {
    auto r = outbox::postgres_store::open(url, {.table = bad});
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, outbox::errc::invalid_argument);
  }
  EXPECT_TRUE(outbox::postgres_store::open(url, {.table = "_my_outbox_2"}));
  auto r = outbox::postgres_store::adopt(nullptr);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, condition::invalid_argument);
}

TEST_F(OutboxPostgres, AMissingTableIsABackendError) {
  auto s = outbox::postgres_store::open(url, {.table = table}).value();  // no migrate()
  auto r = s->fetch_unpublished(10);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, outbox::errc::backend);
  ASSERT_TRUE(r.error().native);
  EXPECT_EQ(r.error().native->text, "42P01");
  ASSERT_TRUE(s->migrate());  // the failed pass was rolled back: the connection goes on
  EXPECT_TRUE(s->fetch_unpublished(10).value().empty());
}

TEST(OutboxPostgresOffline, AnUnreachableServerIsUnavailable) {
  auto r = outbox::postgres_store::open(
      "postgresql://babelqueue@127.0.0.1:1/babelqueue?connect_timeout=2");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, outbox::errc::unavailable);
  EXPECT_EQ(r.error().code, condition::unavailable);
}

// Issue #38: a password holding a reserved character raw is never in the error, whether libpq
// cannot parse the string (a bad percent escape: invalid_argument) or reads part of the
// password as a port or a host name (and quotes it).
TEST(OutboxPostgresOffline, AConnectErrorNeverShowsThePassword) {
  for (const std::string password : {"Kq7%zzZr9", "Kq7/Zr9", "Kq7@Zr9", "Kq7?Zr9", "Kq7#Zr9"}) {
    SCOPED_TRACE(password);
    auto r = outbox::postgres_store::open("postgresql://babelqueue:" + password +
                                          "@127.0.0.1:1/babelqueue?connect_timeout=2");
    ASSERT_FALSE(r);
    std::string all = r.error().message;
    if (r.error().native) all += "|" + r.error().native->text;
    EXPECT_EQ(all.find("Kq7"), std::string::npos) << all;
    EXPECT_EQ(all.find("Zr9"), std::string::npos) << all;
    if (password == "Kq7%zzZr9") {
      EXPECT_EQ(r.error().code, condition::invalid_argument) << all;
    }
  }
}

// Delivery times (issue #37): the store contract, and a table made by a version without the
// deliver_at column (its rows stay due at once) gains it on migrate().
TEST_F(OutboxPostgres, KeepsDeliveryTimes) {
  auto s = open();
  ASSERT_TRUE(s);
  bqtest::expect_store_keeps_delivery_times(*s);
}

TEST_F(OutboxPostgres, ATableWithoutDeliveryTimesGainsTheColumnAndKeepsItsRows) {
  raw->exec("CREATE TABLE " + table +
            " (id BIGSERIAL PRIMARY KEY, queue TEXT NOT NULL, body BYTEA NOT NULL, status TEXT "
            "NOT NULL DEFAULT 'pending', attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT "
            "NULL, created_at TIMESTAMPTZ NOT NULL DEFAULT now(), published_at TIMESTAMPTZ NULL, "
            "failed_at TIMESTAMPTZ NULL)");
  raw->exec("INSERT INTO " + table + " (queue, body) VALUES ('q', 'old')");
  auto s = open();
  ASSERT_TRUE(s);
  auto rows = s->fetch_unpublished(10).value();
  ASSERT_EQ(bqtest::bodies_of(rows), (std::vector<std::string>{"old"}));
  EXPECT_FALSE(rows[0].deliver_at.has_value());
  ASSERT_TRUE(s->save_at("new", "q", outbox::due_now() + std::chrono::hours(1)));
  EXPECT_EQ(s->fetch_unpublished(10).value().size(), 1u);  // "new" is not due
}

}  // namespace
