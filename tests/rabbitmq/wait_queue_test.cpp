// The names of delayed publishes' wait queues, without a broker: deterministic for a wall
// time, the delay rounded up to whole seconds, the publish window in the name, never over
// 255 bytes (an AMQP short string), a long queue name cut on a UTF-8 boundary and told apart
// by SHA-256 — the exact strings, so another implementation of this layout can check itself
// against them.
#include "rabbitmq/wait_queue.hpp"

#include <babelqueue/rabbitmq/rabbitmq_transport.hpp>

#include <gtest/gtest.h>

#include <string>

using namespace std::chrono_literals;
using babelqueue::rabbitmq::wait_queue_name;

namespace {

// 2026-12-07T06:57:57.500Z; its one-hour window started at 1796623200 (06:00:00Z).
const std::chrono::system_clock::time_point at{std::chrono::milliseconds(1796626677500)};

}  // namespace

TEST(RabbitmqWaitQueue, TheNameIsThePrefixTheRoundedDelayTheWindowAndTheQueue) {
  EXPECT_EQ(wait_queue_name("orders", 1500ms, at), "bq.delay.2000ms.1796623200.orders");
  EXPECT_EQ(wait_queue_name("orders", 1ms, at), "bq.delay.1000ms.1796623200.orders")
      << "never early";
  EXPECT_EQ(wait_queue_name("orders", 1000ms, at), "bq.delay.1000ms.1796623200.orders");
  EXPECT_EQ(wait_queue_name("orders", 1001ms, at), "bq.delay.2000ms.1796623200.orders");
  EXPECT_EQ(wait_queue_name("a.b/c d", 5s, at), "bq.delay.5000ms.1796623200.a.b/c d");
  // A delay over an hour is its own window: 24 days, windows of 24 days since the epoch.
  EXPECT_EQ(wait_queue_name("orders", babelqueue::rabbitmq::max_publish_delay, at),
            "bq.delay.2073600000ms.1795737600.orders");
}

TEST(RabbitmqWaitQueue, OneWindowTakesPublishesForAnHourAndLivesPastItsLastDueMessage) {
  namespace rd = babelqueue::rabbitmq::detail;
  const auto w = rd::wait_queue_for("orders", 2500ms, at);
  EXPECT_EQ(w.name, "bq.delay.3000ms.1796623200.orders");
  EXPECT_EQ(w.target, "orders");
  EXPECT_EQ(w.ttl_ms, 3000);
  EXPECT_EQ(w.expires_ms, 3600000 + 3000 + 1800000) << "window + TTL + grace";
  EXPECT_EQ(w.window_left, 3600000ms - 3477500ms) << "until 07:00:00Z";
  // The next window is another queue; the one before it too.
  EXPECT_EQ(wait_queue_name("orders", 3s, at + w.window_left), "bq.delay.3000ms.1796626800.orders");
  EXPECT_EQ(wait_queue_name("orders", 3s, at + w.window_left - 1ms), w.name);
  const auto longest = rd::wait_queue_for("orders", babelqueue::rabbitmq::max_publish_delay, at);
  EXPECT_EQ(longest.expires_ms, 2 * 2073600000LL + 1800000);
}

TEST(RabbitmqWaitQueue, TheCapFitsTheBrokersThirtyTwoBitMilliseconds) {
  namespace rq = babelqueue::rabbitmq;
  // x-message-ttl and x-expires (= window + TTL + grace) are unsigned 32-bit ms counts.
  const auto w = rq::detail::wait_queue_for("q", rq::max_publish_delay, at);
  EXPECT_LE(w.expires_ms, 4294967295LL);
  EXPECT_EQ(rq::max_publish_delay.count() % rq::publish_delay_granularity.count(), 0)
      << "rounding the longest delay up does not push it over the cap";
}

TEST(RabbitmqWaitQueue, ALongQueueIsCutAndNamedByItsDigest) {
  // "bq.delay.1000ms.1796623200." is 27 bytes: a queue of 228 bytes still fits as it is.
  const std::string prefix = "bq.delay.1000ms.1796623200.";
  const std::string fits(228, 'a');
  EXPECT_EQ(wait_queue_name(fits, 1s, at), prefix + fits);
  const std::string longest(255, 'a');
  const std::string name = wait_queue_name(longest, 1s, at);
  EXPECT_EQ(name.size(), 255u);
  // The first 16 hex digits of SHA-256("a" x 255).
  EXPECT_EQ(name, prefix + std::string(211, 'a') + "~b0f3323e7a3cad8a");
  std::string other = longest;
  other.back() = 'b';
  EXPECT_NE(wait_queue_name(other, 1s, at), name) << "queues alike in their first bytes differ";
  EXPECT_EQ(wait_queue_name(longest, 1s, at), name) << "deterministic";
}

TEST(RabbitmqWaitQueue, ACutNeverSplitsAUtf8Character) {
  std::string q = "orders--";
  for (int i = 0; i < 150; ++i) q += "\xc3\xa9";  // é
  const std::string name = wait_queue_name(q, 1s, at);
  // 211 bytes would end inside an é: the cut keeps 210 (8 + 101 whole é).
  EXPECT_EQ(name, "bq.delay.1000ms.1796623200." + q.substr(0, 210) + "~b9e65a371bcacdbd");
  EXPECT_EQ(name.size(), 254u);
}
