// amqp:// when the broker goes away: connections closed by the broker mid-consume, and a
// full stop_app/start_app of the node mid-publish and mid-consume. Nothing confirmed is
// lost, nothing is acked early, redeliveries are not counted as attempts. These tests stop
// the shared node, so CTest runs them alone (RUN_SERIAL).
#include "rabbitmq/rabbitmq_fixture.hpp"
#include "support/delay_restart.hpp"

#include <atomic>
#include <cstdlib>
#include <iostream>
#include <set>
#include <thread>

using namespace std::chrono_literals;
using babelqueue::transport_errc;

namespace {

class RabbitRestart : public bqtest::RabbitTest {
 protected:
  void SetUp() override {
    bqtest::RabbitTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ctl_ = bqtest::env_or_empty("BABELQUEUE_RABBITMQ_CTL");
    ASSERT_FALSE(ctl_.empty()) << "services.sh exports BABELQUEUE_RABBITMQ_CTL";
  }
  void TearDown() override {
    // Whatever happened, leave the node running for the next test.
    (void)ctl("start_app");
    raw_ = std::make_unique<bqtest::raw_amqp>();
    bqtest::RabbitTest::TearDown();
  }
  int ctl(const std::string& args) {
    return std::system((ctl_ + " " + args + " >/dev/null 2>&1").c_str());
  }
  static long n_of(const std::string& body) {
    return babelqueue::decode(body)->data().value().at("n").get<long>();
  }
  std::string ctl_;
};

}  // namespace

TEST_F(RabbitRestart, ConnectionsClosedByTheBrokerMidConsumeLoseNothing) {
  auto t = open("prefetch=4&reconnect_backoff_min=50ms");
  ASSERT_TRUE(t);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(t->publish(queue_, bqtest::envelope_text(i)));
  auto held = t->receive(queue_, 5s);
  ASSERT_TRUE(held && held->has_value());
  ASSERT_EQ(ctl("close_all_connections babelqueue-test"), 0);
  std::this_thread::sleep_for(500ms);
  // The transport finds out on its next call; the held delivery is void (the broker
  // requeued it), so its ack must fail rather than pretend.
  auto r = t->ack(**held);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.code(), transport_errc::unavailable) << r.error().message;
  std::set<long> seen;
  for (int i = 0; i < 20 && seen.size() < 3; ++i) {
    auto got = t->receive(queue_, 2s);
    if (!got || !got->has_value()) continue;  // reconnecting
    EXPECT_EQ(babelqueue::decode((*got)->body)->attempts(), 0);
    if (t->ack(**got)) seen.insert(n_of((*got)->body));
  }
  EXPECT_EQ(seen, (std::set<long>{0, 1, 2}));
  EXPECT_GE(t->stats().connects, 2);
}

TEST_F(RabbitRestart, ABrokerRestartMidPublishLosesNoConfirmedMessage) {
  auto t = open("operation_timeout=2s&reconnect_backoff_min=50ms&reconnect_backoff_max=500ms");
  ASSERT_TRUE(t);
  std::set<long> confirmed;
  int failures = 0;
  std::atomic<bool> restarted{false};
  int stop_rc = -1;
  int start_rc = -1;
  std::thread restart([&] {
    std::this_thread::sleep_for(300ms);
    stop_rc = ctl("stop_app");
    std::this_thread::sleep_for(1s);
    start_rc = ctl("start_app");
    restarted = true;
  });
  // Publish throughout the outage (and at least 400 messages).
  const auto give_up = std::chrono::steady_clock::now() + 60s;
  long n = 0;
  while ((!restarted || n < 400) && std::chrono::steady_clock::now() < give_up) {
    auto r = t->publish(queue_, bqtest::envelope_text(n));
    if (r) {
      confirmed.insert(n++);
    } else {
      ++failures;  // unconfirmed: the caller resends (at-least-once)
      EXPECT_TRUE(babelqueue::is_transient(r.code()) || r.code() == transport_errc::not_found)
          << r.error().message;
    }
  }
  restart.join();
  ASSERT_EQ(confirmed.size(), static_cast<std::size_t>(n));
  ASSERT_GE(n, 400);
  EXPECT_EQ(stop_rc, 0);
  EXPECT_EQ(start_rc, 0);
  // The publisher saw the outage: a reconnect, or (on a loaded machine, where stop_app can
  // stall the node long enough for confirms to time out before it drops connections)
  // failed publishes that the caller resent.
  EXPECT_TRUE(t->stats().connects >= 2 || failures > 0)
      << "the restart happened while publishing (connects " << t->stats().connects << ")";
  std::set<long> present;
  auto c = open();
  for (;;) {
    auto got = c->receive(queue_, 2s);
    ASSERT_TRUE(got) << got.error().message;
    if (!got->has_value()) break;
    present.insert(n_of((*got)->body));
    ASSERT_TRUE(c->ack(**got));
  }
  for (long c_n : confirmed)
    ASSERT_TRUE(present.count(c_n)) << "confirmed message " << c_n << " lost";
  std::cout << "publish failures during the restart: " << failures << "\n";
}

TEST_F(RabbitRestart, ABrokerRestartMidConsumeRedeliversWithoutCountingAttempts) {
  auto p = open();
  ASSERT_TRUE(p);
  std::vector<babelqueue::outgoing_message> batch;
  batch.reserve(100);
  for (int i = 0; i < 100; ++i) batch.push_back({bqtest::envelope_text(i), {}});
  ASSERT_TRUE(p->publish_batch(queue_, batch));
  p.reset();
  auto t = open("prefetch=16&reconnect_backoff_min=50ms&reconnect_backoff_max=500ms");
  std::set<long> acked;
  int restarted = 0;
  const auto give_up = std::chrono::steady_clock::now() + 60s;
  while (acked.size() < 100 && std::chrono::steady_clock::now() < give_up) {
    if (acked.size() == 30 && restarted == 0) {
      restarted = 1;
      ctl("stop_app");
      std::this_thread::sleep_for(500ms);
      ctl("start_app");
    }
    auto got = t->receive(queue_, 1s);
    if (!got || !got->has_value()) continue;  // the outage shows as errors: keep going
    EXPECT_EQ(babelqueue::decode((*got)->body)->attempts(), 0);
    if (t->ack(**got)) acked.insert(n_of((*got)->body));
  }
  EXPECT_EQ(acked.size(), 100u) << "every message acked at least once";
  EXPECT_EQ(restarted, 1);
}

// A delayed publish waits in a durable wait queue as a persistent message: a broker restart
// during the delay loses nothing and delivers nothing twice. Messages whose delay ends while
// the broker is down arrive right after it is back (the TTL is a due time the broker keeps,
// not a timer that restarts); those due later still wait for their delay.
TEST_F(RabbitRestart, ABrokerRestartDuringADelayLosesNothing) {
  auto t = open("operation_timeout=5s&reconnect_backoff_min=50ms&reconnect_backoff_max=500ms");
  ASSERT_TRUE(t);
  bqtest::expect_delays_survive_a_restart(*t, *t, queue_, [this] {
    if (ctl("stop_app") != 0) return false;
    std::this_thread::sleep_for(3s);
    return ctl("start_app") == 0;
  });
  bqtest::raw_amqp raw;
  raw.remove(babelqueue::rabbitmq::wait_queue_name(queue_, 2s));
  raw.remove(babelqueue::rabbitmq::wait_queue_name(queue_, 12s));
}
