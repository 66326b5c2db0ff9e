// Single-process behaviour of the sqlite transport: publish/receive/ack/release, delay,
// headers, exact bytes, batches, persistence, several instances and threads on one file.
#include "sqlite/test_support.hpp"

#include <babelqueue/runtime/url.hpp>
#include <babelqueue/sqlite/sqlite_transport.hpp>

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <set>
#include <thread>

namespace {

using namespace bq_sqlite_test;
using babelqueue::condition;
using babelqueue::errc;
using babelqueue::headers;
using babelqueue::outgoing_message;
using babelqueue::received_message;
using babelqueue::transport_errc;
using Clock = std::chrono::steady_clock;

received_message must_receive(babelqueue::transport& t, std::string_view queue,
                              std::chrono::milliseconds timeout = 2s) {
  auto r = t.receive(queue, timeout);
  EXPECT_TRUE(r) << r.error().message;
  if (!r || !*r) {
    ADD_FAILURE() << "nothing received from " << queue;
    return {};
  }
  return std::move(**r);
}

void expect_empty(babelqueue::transport& t, std::string_view queue) {
  auto r = t.receive(queue, 0ms);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(*r) << "unexpected message: " << (*r)->body;
}

TEST(SqliteTransport, PublishReceiveAck) {
  temp_dir dir;
  auto t = open_at(dir.file("q.db"));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->scheme(), "sqlite");
  ASSERT_TRUE(t->publish("orders", R"({"job":"urn:x"})"));
  auto m = must_receive(*t, "orders");
  EXPECT_EQ(m.body, R"({"job":"urn:x"})");
  EXPECT_EQ(m.queue, "orders");
  EXPECT_TRUE(m.hdrs.empty());
  ASSERT_TRUE(m.delivery_count.has_value());
  EXPECT_EQ(*m.delivery_count, 1);
  auto in_flight = t->stats("orders");
  ASSERT_TRUE(in_flight);
  EXPECT_EQ(in_flight->in_flight, 1);
  EXPECT_EQ(in_flight->ready, 0);
  ASSERT_TRUE(t->ack(m));
  expect_empty(*t, "orders");
  auto s = t->stats("orders");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->ready + s->delayed + s->in_flight, 0);
}

TEST(SqliteTransport, FifoPerQueueAndQueuesAreSeparate) {
  temp_dir dir;
  auto t = open_at(dir.file("q.db"));
  ASSERT_TRUE(t);
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(t->publish("a", "a" + std::to_string(i)));
    ASSERT_TRUE(t->publish("b", "b" + std::to_string(i)));
  }
  for (int i = 0; i < 10; ++i) {
    auto m = must_receive(*t, "a");
    EXPECT_EQ(m.body, "a" + std::to_string(i));
    ASSERT_TRUE(t->ack(m));
  }
  expect_empty(*t, "a");
  auto s = t->stats("b");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->ready, 10);
}

TEST(SqliteTransport, BodiesAreExactBytes) {
  temp_dir dir;
  auto t = open_at(dir.file("q.db"));
  ASSERT_TRUE(t);
  const std::string binary("a\0b\xff\xfe\r\n\x01 \xe2\x80\xa8", 12);
  const std::vector<std::string> bodies = {"", binary, "{\"n\":12345678901234567890}"};
  for (const auto& b : bodies) ASSERT_TRUE(t->publish("q", b));
  for (const auto& b : bodies) {
    auto m = must_receive(*t, "q");
    EXPECT_EQ(m.body, b);
    EXPECT_EQ(m.body.size(), b.size());
    ASSERT_TRUE(t->ack(m));
  }
}

TEST(SqliteTransport, OneMebibyteBodies) {
  temp_dir dir;
  auto t = open_at(dir.file("q.db"));
  ASSERT_TRUE(t);
  std::string big(1024 * 1024, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 131 + 7) & 0xff);
  for (int i = 0; i < 3; ++i) {
    big[0] = static_cast<char>('0' + i);
    ASSERT_TRUE(t->publish("big", big));
  }
  for (int i = 0; i < 3; ++i) {
    auto m = must_receive(*t, "big");
    big[0] = static_cast<char>('0' + i);
    ASSERT_EQ(m.body.size(), big.size());
    EXPECT_TRUE(m.body == big);
    ASSERT_TRUE(t->ack(m));
  }
}

TEST(SqliteTransport, HeadersRoundTripSanitised) {
  temp_dir dir;
  auto t = open_at(dir.file("q.db"));
  ASSERT_TRUE(t);
  EXPECT_TRUE(t->capabilities().headers);
  const headers sent = {{"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
                        {"bq-replay-bypass", "1"},
                        {"x-text", "caf\xc3\xa9 \"q\" \\ \xe2\x80\xa8"},
                        {"blank-value", "  "},
                        {"", "no name"}};
  ASSERT_TRUE(t->publish("h", "body", sent));
  auto m = must_receive(*t, "h");
  const headers expected = {{"traceparent", sent.at("traceparent")},
                            {"bq-replay-bypass", "1"},
                            {"x-text", sent.at("x-text")}};
  EXPECT_EQ(m.hdrs, expected);
  // Release keeps the headers, as it keeps the body.
  ASSERT_TRUE(t->release(m));
  auto again = must_receive(*t, "h");
  EXPECT_EQ(again.hdrs, expected);
  EXPECT_EQ(again.body, "body");
  ASSERT_TRUE(t->ack(again));
}

TEST(SqliteTransport, InvalidUtf8HeaderIsATypedError) {
  temp_dir dir;
  auto t = open_at(dir.file("q.db"));
  ASSERT_TRUE(t);
  auto r = t->publish("h", "body", headers{{"x", "\xff\xfe"}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.code(), errc::invalid_utf8);
  expect_empty(*t, "h");
}

TEST(SqliteTransport, ReleaseRedeliversAndCounts) {
  temp_dir dir;
  auto t = open_at(dir.file("q.db"));
  ASSERT_TRUE(t);
  ASSERT_TRUE(t->publish("r", "one"));
  auto m = must_receive(*t, "r");
  EXPECT_EQ(*m.delivery_count, 1);
  ASSERT_TRUE(t->release(m));
  auto m2 = must_receive(*t, "r", 0ms);
  EXPECT_EQ(m2.body, "one");
  EXPECT_EQ(*m2.delivery_count, 2);
  // The first handle is settled: neither ack nor release may touch the new reservation.
  EXPECT_EQ(t->ack(m).code(), condition::invalid_argument);
  EXPECT_EQ(t->release(m).code(), condition::invalid_argument);
  ASSERT_TRUE(t->ack(m2));
  expect_empty(*t, "r");
}

TEST(SqliteTransport, ReleaseWithDelay) {
  temp_dir dir;
  auto t = open_at(dir.file("q.db"));
  ASSERT_TRUE(t);
  EXPECT_TRUE(t->capabilities().native_delay);
  ASSERT_TRUE(t->publish("d", "later"));
  ASSERT_TRUE(t->publish("d", "now"));
  auto m = must_receive(*t, "d");
  ASSERT_EQ(m.body, "later");
  const auto released = Clock::now();
  ASSERT_TRUE(t->release(m, 400ms));
  auto s = t->stats("d");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->delayed, 1);
  EXPECT_EQ(s->ready, 1);
  // The other message overtakes the delayed one.
  auto n = must_receive(*t, "d", 0ms);
  EXPECT_EQ(n.body, "now");
  ASSERT_TRUE(t->ack(n));
  expect_empty(*t, "d");
  auto back = must_receive(*t, "d", 3s);
  EXPECT_GE(Clock::now() - released, 390ms);
  EXPECT_LT(Clock::now() - released, 1500ms);  // woke when due, not a poll interval late
  EXPECT_EQ(back.body, "later");
  ASSERT_TRUE(t->ack(back));
  EXPECT_EQ(t->release(back, -1ms).code(), condition::invalid_argument);
}

TEST(SqliteTransport, BatchPublishInOrderAndAtomic) {
  temp_dir dir;
  auto t = open_at(dir.file("q.db"));
  ASSERT_TRUE(t);
  std::vector<outgoing_message> batch;
  for (int i = 0; i < 200; ++i) batch.push_back({"m" + std::to_string(i), {}});
  batch[7].hdrs = {{"k", "v"}};
  ASSERT_TRUE(t->publish_batch("b", batch));
  ASSERT_TRUE(t->publish_batch("b", {}));
  for (int i = 0; i < 200; ++i) {
    auto m = must_receive(*t, "b", 0ms);
    EXPECT_EQ(m.body, "m" + std::to_string(i));
    if (i == 7) {
      EXPECT_EQ(m.hdrs, (headers{{"k", "v"}}));
    }
    ASSERT_TRUE(t->ack(m));
  }
  // A batch that fails half-way stores nothing.
  std::vector<outgoing_message> bad = {{"ok1", {}}, {"bad", {{"x", "\xff"}}}, {"ok2", {}}};
  auto r = t->publish_batch("b", bad);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.code(), errc::invalid_utf8);
  expect_empty(*t, "b");
}

TEST(SqliteTransport, ReceiveTimeoutIsHonouredWithoutSpinning) {
  temp_dir dir;
  auto t = open_at(dir.file("q.db"));
  ASSERT_TRUE(t);
  rusage before{}, after{};
  getrusage(RUSAGE_THREAD, &before);
  const auto start = Clock::now();
  auto r = t->receive("empty", 600ms);
  const auto took = Clock::now() - start;
  getrusage(RUSAGE_THREAD, &after);
  ASSERT_TRUE(r);
  EXPECT_FALSE(*r);
  EXPECT_GE(took, 600ms);
  EXPECT_LT(took, 900ms);
  auto cpu_us = [](const rusage& u) {
    return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1000000L + u.ru_utime.tv_usec +
           u.ru_stime.tv_usec;
  };
  EXPECT_LT(cpu_us(after) - cpu_us(before), 100000) << "receive() should sleep, not spin";
  // timeout 0 returns at once.
  const auto s0 = Clock::now();
  ASSERT_TRUE(t->receive("empty", 0ms));
  EXPECT_LT(Clock::now() - s0, 100ms);
}

TEST(SqliteTransport, ReceiveWakesForAMessagePublishedWhileWaiting) {
  temp_dir dir;
  auto consumer = open_at(dir.file("q.db"));
  auto producer = open_at(dir.file("q.db"));
  ASSERT_TRUE(consumer && producer);
  std::thread pub([&] {
    std::this_thread::sleep_for(200ms);
    EXPECT_TRUE(producer->publish("w", "hello"));
  });
  const auto start = Clock::now();
  auto m = must_receive(*consumer, "w", 5s);
  pub.join();
  EXPECT_EQ(m.body, "hello");
  EXPECT_LT(Clock::now() - start, 1s);
  ASSERT_TRUE(consumer->ack(m));
}

TEST(SqliteTransport, MessagesSurviveReopen) {
  temp_dir dir;
  {
    auto t = open_at(dir.file("q.db"));
    ASSERT_TRUE(t);
    ASSERT_TRUE(t->publish("p", "kept", headers{{"h", "v"}}));
    ASSERT_TRUE(t->close(Clock::now() + 1s));
  }
  auto t = open_at(dir.file("q.db"));
  ASSERT_TRUE(t);
  auto m = must_receive(*t, "p", 0ms);
  EXPECT_EQ(m.body, "kept");
  EXPECT_EQ(m.hdrs, (headers{{"h", "v"}}));
  ASSERT_TRUE(t->ack(m));
}

TEST(SqliteTransport, CloseIsFinalAndIdempotent) {
  temp_dir dir;
  auto t = open_at(dir.file("q.db"));
  ASSERT_TRUE(t);
  ASSERT_TRUE(t->publish("c", "x"));
  auto m = must_receive(*t, "c");
  ASSERT_TRUE(t->close(Clock::now() + 1s));
  ASSERT_TRUE(t->close(Clock::now() + 1s));
  EXPECT_EQ(t->publish("c", "y").code(), transport_errc::closed);
  EXPECT_EQ(t->receive("c", 0ms).code(), transport_errc::closed);
  EXPECT_EQ(t->ack(m).code(), transport_errc::closed);
  EXPECT_EQ(t->release(m).code(), transport_errc::closed);
  EXPECT_EQ(t->stats("c").code(), transport_errc::closed);
}

TEST(SqliteTransport, SettleChecksTheInstanceAndTheHandle) {
  temp_dir dir;
  auto a = open_at(dir.file("q.db"));
  auto b = open_at(dir.file("q.db"));
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->publish("s", "x"));
  auto m = must_receive(*a, "s");
  EXPECT_EQ(b->ack(m).code(), condition::invalid_argument);                   // not b's message
  EXPECT_EQ(a->ack(received_message{}).code(), condition::invalid_argument);  // no handle
  received_message foreign = m;
  foreign.handle = std::make_shared<int>(42);  // some other transport's handle
  EXPECT_EQ(a->ack(foreign).code(), condition::invalid_argument);
  ASSERT_TRUE(a->ack(m));
  EXPECT_EQ(a->ack(m).code(), condition::invalid_argument);  // already settled
  EXPECT_EQ(a->publish("", "x").code(), condition::invalid_argument);
  EXPECT_EQ(a->receive("", 0ms).code(), condition::invalid_argument);
}

TEST(SqliteTransport, ReconcileAttemptsKeepsTheBodyCount) {
  temp_dir dir;
  auto t = open_at(dir.file("q.db"));
  ASSERT_TRUE(t);
  received_message m;
  m.delivery_count = 5;
  EXPECT_EQ(t->reconcile_attempts(2, m), 2);
  EXPECT_EQ(t->reconcile_attempts(0, m), 0);
  EXPECT_TRUE(t->capabilities().delivery_count);
}

TEST(SqliteTransport, OpenThroughTheUrlRegistry) {
  temp_dir dir;
  babelqueue::sqlite::register_transport();
  babelqueue::sqlite::register_transport();  // idempotent
  auto t = babelqueue::open_transport("sqlite://" + dir.file("u.db") + "?visibility_timeout=5s");
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ((*t)->scheme(), "sqlite");
  ASSERT_TRUE((*t)->publish("u", "via-url"));
  auto m = must_receive(**t, "u");
  EXPECT_EQ(m.body, "via-url");
  ASSERT_TRUE((*t)->ack(m));
  auto bad = babelqueue::open_transport("sqlite://" + dir.file("u.db") + "?visibility=5s");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.code(), condition::invalid_argument);
}

// The App gives each worker thread its own instance: every message once, none lost.
TEST(SqliteTransport, ThreadsWithOwnInstancesShareOneFile) {
  temp_dir dir;
  constexpr int n = 2000, threads = 4;
  {
    auto p = open_at(dir.file("q.db"));
    ASSERT_TRUE(p);
    std::vector<outgoing_message> batch;
    for (int i = 0; i < n; ++i) batch.push_back({std::to_string(i), {}});
    ASSERT_TRUE(p->publish_batch("t", batch));
  }
  std::vector<std::vector<int>> seen(threads);
  std::vector<std::thread> pool;
  for (int w = 0; w < threads; ++w) {
    pool.emplace_back([&, w] {
      auto t = open_at(dir.file("q.db"));
      if (!t) return;
      for (;;) {
        auto r = t->receive("t", 300ms);
        if (!r) {
          ADD_FAILURE() << r.error().message;
          return;
        }
        if (!*r) return;
        seen[w].push_back(std::stoi((*r)->body));
        if (auto a = t->ack(**r); !a) ADD_FAILURE() << a.error().message;
      }
    });
  }
  for (auto& th : pool) th.join();
  std::multiset<int> all;
  for (const auto& v : seen) all.insert(v.begin(), v.end());
  EXPECT_EQ(all.size(), static_cast<std::size_t>(n));
  EXPECT_EQ(std::set<int>(all.begin(), all.end()).size(), static_cast<std::size_t>(n));
}

}  // namespace
