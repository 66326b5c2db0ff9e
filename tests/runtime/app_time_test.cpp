// Time in the runtime (issue #37): publish with delay / deliver_at, the retry policy's
// arithmetic and defaults, retries spaced by it (timestamps), the unknown-URN release backing
// off, and a downstream outage of 2 s that the default options ride out without losing or
// dead-lettering a single message.
#include "runtime/test_util.hpp"

#include <gtest/gtest.h>

#include <map>
#include <thread>

using namespace babelqueue;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {

class Time : public ::testing::Test {
 protected:
  void SetUp() override { memory::register_transport(); }
  std::string broker = bqtest::unique_broker("time");
  std::string url() const { return "memory://" + broker; }
  bqtest::log_capture logs;
};

long long ms_between(steady::time_point a, steady::time_point b) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(b - a).count();
}

}  // namespace

TEST(RetryPolicy, DefaultsAreOneSecondDoublingCappedAtFiveMinutesWithTwentyPercentJitter) {
  const retry_policy p = app_options{}.retry;
  EXPECT_EQ(p.initial, 1s);
  EXPECT_EQ(p.multiplier, 2.0);
  EXPECT_EQ(p.max, std::chrono::minutes(5));
  EXPECT_EQ(p.jitter, 0.2);
  EXPECT_EQ(p.delay_for(1, 0.0), 1000ms);
  EXPECT_EQ(p.delay_for(2, 0.0), 2000ms);
  EXPECT_EQ(p.delay_for(3, 0.0), 4000ms);
  EXPECT_EQ(p.delay_for(1, 1.0), 800ms) << "jitter only shortens, by at most 20 %";
  EXPECT_EQ(p.delay_for(0, 0.0), 1000ms) << "retry numbers below 1 count as the first";
  EXPECT_EQ(p.delay_for(20, 0.0), std::chrono::minutes(5)) << "capped";
  EXPECT_EQ(p.delay_for(std::numeric_limits<std::int64_t>::max(), 0.0), std::chrono::minutes(5))
      << "a huge retry number saturates instead of overflowing";
  for (int i = 0; i < 1000; ++i) {
    const auto d = p.delay_for(2);
    ASSERT_GE(d, 1600ms);
    ASSERT_LE(d, 2000ms);
  }
}

TEST(RetryPolicy, ImmediateRetriesAtOnce) {
  const retry_policy p = retry_policy::immediate();
  for (std::int64_t n : {1, 2, 10}) EXPECT_EQ(p.delay_for(n), 0ms);
  EXPECT_TRUE(p.validate());
}

TEST_F(Time, AnUnusableRetryPolicyIsRefusedAtConstruction) {
  const auto refused = [&](retry_policy p) {
    app_options o;
    o.retry = p;
    auto a = app::open(url(), o);
    return !a && a.code() == runtime_errc::invalid_argument;
  };
  EXPECT_TRUE(refused({-1ms, 2.0, 1s, 0.0}));
  EXPECT_TRUE(refused({1s, 0.5, 1s, 0.0}));
  EXPECT_TRUE(refused({2s, 2.0, 1s, 0.0}));
  EXPECT_TRUE(refused({1s, 2.0, 1s, 1.5}));
  EXPECT_TRUE(refused({1s, std::numeric_limits<double>::quiet_NaN(), 1s, 0.0}));
}

TEST_F(Time, APublishWithADelayIsNotDeliveredBeforeIt) {
  app a(url(), bqtest::fast_options());
  publish_options po;
  po.delay = 1500ms;
  const auto published = steady::now();
  ASSERT_TRUE(a.publish("urn:babel:time:later", json::object(), po));
  EXPECT_EQ(memory::depth(broker, "default"), 1u) << "held by the broker, not by the caller";
  memory::memory_transport t(broker);
  auto early = t.receive("default", 1000ms);
  ASSERT_TRUE(early);
  EXPECT_FALSE(*early) << "delivered before its delay";
  auto due = t.receive("default", 5000ms);
  ASSERT_TRUE(due && *due);
  EXPECT_GE(ms_between(published, steady::now()), 1500);
  EXPECT_EQ(decode((*due)->body).value().urn(), "urn:babel:time:later");
}

TEST_F(Time, DeliverAtIsAnInstantAndThePastIsRefusedBeyondOneSecond) {
  app a(url(), bqtest::fast_options());
  const auto now = std::chrono::system_clock::now();
  publish_options at;
  at.deliver_at = now + 1200ms;
  ASSERT_TRUE(a.publish("urn:babel:time:at", json::object(), at));
  memory::memory_transport t(broker);
  auto early = t.receive("default", 800ms);
  ASSERT_TRUE(early);
  EXPECT_FALSE(*early);
  auto due = t.receive("default", 5000ms);
  ASSERT_TRUE(due && *due);
  ASSERT_TRUE(t.ack(**due));

  publish_options just_past;
  just_past.deliver_at = std::chrono::system_clock::now() - 500ms;
  ASSERT_TRUE(a.publish("urn:babel:time:now", json::object(), just_past))
      << "within the 1 s tolerance: published at once";
  auto now_msg = t.receive("default", 0ms);
  ASSERT_TRUE(now_msg && *now_msg);
  ASSERT_TRUE(t.ack(**now_msg));

  publish_options long_past;
  long_past.deliver_at = std::chrono::system_clock::now() - 1h;
  auto refused = a.publish("urn:babel:time:then", json::object(), long_past);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.code(), runtime_errc::invalid_argument);
  EXPECT_NE(refused.error().message.find("in the past"), std::string::npos);

  publish_options both;
  both.delay = 1s;
  both.deliver_at = std::chrono::system_clock::now() + 1s;
  auto ambiguous = a.publish("urn:babel:time:both", json::object(), both);
  ASSERT_FALSE(ambiguous);
  EXPECT_EQ(ambiguous.code(), runtime_errc::invalid_argument);

  publish_options negative;
  negative.delay = -1ms;
  auto bad = a.publish("urn:babel:time:neg", json::object(), negative);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.code(), runtime_errc::invalid_argument);
  EXPECT_EQ(memory::depth(broker, "default"), 0u) << "a refused publish sent nothing";
}

TEST_F(Time, MessagePublishTakesADelayToo) {
  app a(url(), bqtest::fast_options());
  a.handle("urn:babel:time:in", [](message& m) {
    continue_publish_options o;
    o.queue = "next";
    o.delay = 1s;
    m.publish("urn:babel:time:out", json::object(), o).value();
  });
  ASSERT_TRUE(a.publish("urn:babel:time:in", json::object()));
  EXPECT_EQ(a.drain().value(), 1u);
  memory::memory_transport t(broker);
  auto early = t.receive("next", 500ms);
  ASSERT_TRUE(early);
  EXPECT_FALSE(*early);
  auto due = t.receive("next", 3000ms);
  ASSERT_TRUE(due && *due);
}

TEST_F(Time, RetriesAreSpacedByThePolicy) {
  auto o = bqtest::fast_options();
  o.retry = {200ms, 2.0, 10s, 0.0};
  o.max_attempts = 4;
  app a(url(), o);
  std::vector<steady::time_point> calls;
  a.handle("urn:babel:time:flaky", [&](message&) {
    calls.push_back(steady::now());
    if (calls.size() < 4) throw std::runtime_error("downstream down");
  });
  ASSERT_TRUE(a.publish("urn:babel:time:flaky", json::object()));
  EXPECT_EQ(a.drain().value(), 4u) << "drain waits for the retries it backed off";
  ASSERT_EQ(calls.size(), 4u);
  const long long first = ms_between(calls[0], calls[1]);
  const long long second = ms_between(calls[1], calls[2]);
  const long long third = ms_between(calls[2], calls[3]);
  EXPECT_GE(first, 200);
  EXPECT_GE(second, 400);
  EXPECT_GE(third, 800);
  EXPECT_LT(third, 3000) << "not much later than the policy says";
  std::cout << "retry gaps: " << first << " ms, " << second << " ms, " << third << " ms\n";
}

TEST_F(Time, ImmediateRetriesAsBefore) {
  auto o = bqtest::fast_options();
  o.retry = retry_policy::immediate();
  app a(url(), o);
  std::vector<steady::time_point> calls;
  a.handle("urn:babel:time:flaky", [&](message&) {
    calls.push_back(steady::now());
    throw std::runtime_error("down");
  });
  ASSERT_TRUE(a.publish("urn:babel:time:flaky", json::object()));
  EXPECT_EQ(a.drain().value(), 3u);
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_LT(ms_between(calls[0], calls[2]), 500);
}

TEST_F(Time, TheUnknownUrnReleaseBacksOff) {
  auto o = bqtest::fast_options();
  o.on_unknown_urn = unknown_urn_strategy::release;
  o.retry = {700ms, 2.0, 10s, 0.0};
  app a(url(), o);
  ASSERT_TRUE(a.publish("urn:babel:time:nobody", json::object()));
  EXPECT_EQ(a.drain().value(), 1u);
  memory::memory_transport t(broker);
  auto early = t.receive("default", 400ms);
  ASSERT_TRUE(early);
  EXPECT_FALSE(*early) << "released at once: a consumer would spin on it";
  auto back = t.receive("default", 3000ms);
  ASSERT_TRUE(back && *back) << "the released message never came back";
}

// The bar: 1 000 messages, a handler whose downstream is down for the first 2 s of
// the run, default options (dead-lettering on, to see that nothing goes there): every
// message is handled exactly once, none dead-lettered, none dropped.
TEST_F(Time, ATwoSecondOutageLosesNothingUnderTheDefaults) {
  app_options o;  // the defaults: 3 attempts, the default retry policy
  o.dead_letter = true;
  auto metrics = std::make_shared<atomic_metrics>();
  o.observers.push_back(metrics);
  app a(url(), o);
  constexpr int count = 1000;
  std::mutex mutex;
  std::map<std::string, int> handled;
  std::atomic<int> failures{0};
  const auto start = steady::now();
  a.handle("urn:babel:time:order", [&](message& m) {
    if (steady::now() - start < 2s) {
      failures.fetch_add(1);
      throw std::runtime_error("downstream unavailable");
    }
    std::lock_guard lock(mutex);
    ++handled[std::string(m.env().id())];
  });
  for (int i = 0; i < count; ++i) {
    ASSERT_TRUE(a.publish("urn:babel:time:order", json{{"n", i}}));
  }
  std::thread consumer([&] { (void)a.consume(); });
  for (int waited = 0; waited < 300; ++waited) {
    {
      std::lock_guard lock(mutex);
      if (handled.size() == count) break;
    }
    std::this_thread::sleep_for(100ms);
  }
  a.stop();
  consumer.join();
  std::lock_guard lock(mutex);
  EXPECT_EQ(handled.size(), static_cast<std::size_t>(count)) << "messages lost";
  for (const auto& [id, times] : handled) ASSERT_EQ(times, 1) << id << " handled twice";
  EXPECT_EQ(memory::depth(broker, "default.dlq"), 0u) << "dead-lettered although nothing was wrong";
  const auto snap = metrics->snapshot();
  EXPECT_EQ(snap.dropped, 0u);
  EXPECT_EQ(snap.dead_lettered, 0u);
  EXPECT_GT(failures.load(), 0) << "the outage did not happen";
  std::cout << "outage: " << failures.load() << " failed attempts, " << snap.retried
            << " retries, all " << count << " handled after " << ms_between(start, steady::now())
            << " ms\n";
}
