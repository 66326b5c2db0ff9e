// Server restarts and outages: the consumer reconnects and nothing is lost; calls during an
// outage fail with a typed error within their timeout and never crash. Also a real
// (single-node) Redis Cluster: hash-tagged queues work, untagged ones are refused cleanly.
#include "redis/redis_fixture.hpp"

#include <atomic>
#include <set>
#include <thread>

using namespace std::chrono_literals;
using babelqueue::condition;
using babelqueue::errc;
using babelqueue::transport_errc;
using bqtest::envelope_n;
using bqtest::padded_envelope_text;

class RedisRestart : public bqtest::RedisTest {
 protected:
  static void SetUpTestSuite() {
    bqtest::redis_server::config c;
    c.persistent = true;
    start(c);
  }
};

TEST_F(RedisRestart, ServerRestartMidConsumeLosesNothing) {
  const int n = 300;
  {
    auto producer = open();
    std::vector<babelqueue::outgoing_message> batch;
    batch.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) batch.push_back({padded_envelope_text(i), {}});
    ASSERT_TRUE(producer->publish_batch("durable", batch));
  }
  auto consumer = open();
  // The server is stopped from another thread while the consumer is busy, and started again
  // by this thread (the helper's PR_SET_PDEATHSIG ties the server to the thread that forks it).
  std::atomic<bool> stopped{false};
  bool restarted = false;
  auto stopped_at = std::chrono::steady_clock::now();
  std::thread chaos([&] {
    std::this_thread::sleep_for(300ms);
    server_->stop();
    stopped_at = std::chrono::steady_clock::now();
    stopped = true;
  });

  std::set<long> seen;
  int errors = 0;
  auto give_up = std::chrono::steady_clock::now() + 30s;
  while (static_cast<int>(seen.size()) < n && std::chrono::steady_clock::now() < give_up) {
    if (stopped && !restarted && std::chrono::steady_clock::now() - stopped_at > 400ms) {
      restarted = server_->restart();
      ASSERT_TRUE(restarted);
    }
    auto got = consumer->receive("durable", 200ms);
    if (!got) {
      ++errors;
      if (errors < 5 || errors % 50 == 0)
        std::printf("receive error %d: %s\n", errors, got.error().message.c_str());
      EXPECT_EQ(got.code(), transport_errc::unavailable) << got.error().message;
      continue;
    }
    if (!got->has_value()) {
      // Anything whose reservation reply was lost in the outage sits in :processing.
      if (restarted) {
        auto r = consumer->recover("durable", 0ms);
        EXPECT_TRUE(r) << r.error().message;
      }
      continue;
    }
    seen.insert(envelope_n((*got)->body));
    std::this_thread::sleep_for(3ms);  // a handler
    ASSERT_TRUE(consumer->ack(**got));
  }
  chaos.join();
  ASSERT_TRUE(restarted);
  EXPECT_EQ(static_cast<int>(seen.size()), n);
  EXPECT_GE(consumer->stats().reconnects, 1);
  ASSERT_TRUE(consumer->flush());
  bqtest::raw_client after(server_->port());
  EXPECT_EQ(after.llen("durable"), 0);
  EXPECT_EQ(after.llen("durable:processing"), 0);
  std::printf("restart: %d receive errors during the outage, %lld reconnects\n", errors,
              static_cast<long long>(consumer->stats().reconnects));
}

class RedisOutage : public bqtest::RedisTest {};

TEST_F(RedisOutage, CallsDuringAnOutageFailTypedWithinTheirTimeout) {
  auto o = opts();
  o.command_timeout = 300ms;
  auto t = open(o);
  ASSERT_TRUE(t->publish("o", padded_envelope_text(1)));
  auto got = t->receive("o", 1s);
  ASSERT_TRUE(got && got->has_value());
  ASSERT_TRUE(t->ack(**got));  // deferred
  server_->kill_now();

  auto start = std::chrono::steady_clock::now();
  auto r = t->receive("o", 500ms);
  EXPECT_FALSE(r);
  EXPECT_EQ(r.code(), transport_errc::unavailable);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);

  start = std::chrono::steady_clock::now();
  auto p = t->publish("o", padded_envelope_text(2));
  EXPECT_FALSE(p);
  EXPECT_EQ(p.code(), transport_errc::unavailable);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);

  auto c = t->close(std::chrono::steady_clock::now() + 200ms);
  EXPECT_FALSE(c);  // the deferred ack could not be flushed; its message stays reserved
  EXPECT_EQ(t->publish("o", "x").code(), transport_errc::closed);
}

class RedisStall : public bqtest::RedisTest {};

// close(deadline) bounds its round trips by its own deadline, not by command_timeout: a
// server that takes the request but does not answer (CLIENT PAUSE) costs close() its
// deadline, not 5 s.
TEST_F(RedisStall, CloseKeepsItsDeadlineWhenTheServerStalls) {
  auto o = opts();
  o.command_timeout = 5s;
  auto t = open(o);
  ASSERT_TRUE(t->publish("st", padded_envelope_text(1)));
  auto got = t->receive("st", 1s);
  ASSERT_TRUE(got && got->has_value());
  ASSERT_TRUE(t->ack(**got));  // deferred: close() must flush it
  ASSERT_EQ(raw_->str({"CLIENT", "PAUSE", "1000", "ALL"}), "OK");
  auto start = std::chrono::steady_clock::now();
  auto c = t->close(start + 300ms);
  auto took = std::chrono::steady_clock::now() - start;
  raw_->str({"CLIENT", "UNPAUSE"});
  EXPECT_FALSE(c);  // the flush did not complete in time; the message stays reserved
  EXPECT_GE(took, 250ms);
  EXPECT_LT(took, 2s);
  EXPECT_EQ(t->publish("st", "x").code(), transport_errc::closed);
}

class RedisCluster : public bqtest::RedisTest {
 protected:
  static void SetUpTestSuite() {
    bqtest::redis_server::config c;
    c.cluster = true;
    start(c);
  }
};

TEST_F(RedisCluster, HashTaggedQueuesWorkOnACluster) {
  auto t = open();
  ASSERT_TRUE(t->publish("{orders}", padded_envelope_text(1), {{"traceparent", "00-x-y-01"}}));
  auto got = t->receive("{orders}", 1s);
  ASSERT_TRUE(got) << got.error().message;
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->hdrs.at("traceparent"), "00-x-y-01");
  ASSERT_TRUE(t->ack(**got));
  ASSERT_TRUE(t->flush());
  EXPECT_EQ(raw_->llen("{orders}:processing"), 0);
  auto rec = t->recover("{orders}", 0ms);
  EXPECT_TRUE(rec) << rec.error().message;

  // Untagged: the keys live in different slots; the server refuses (CROSSSLOT), typed.
  ASSERT_TRUE(t->publish("orders", padded_envelope_text(2)));
  auto bad = t->receive("orders", 100ms);
  EXPECT_FALSE(bad);
  EXPECT_EQ(bad.code(), transport_errc::refused);  // a retry cannot help
  if (!bad) {
    EXPECT_NE(bad.error().message.find("CROSSSLOT"), std::string::npos) << bad.error().message;
  }
}
