// memory:// — shared brokers, FIFO, headers, release with delay, settle rules, close
// returning unsettled messages, bounded receive, many threads.
#include <babelqueue/memory/memory_transport.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>

using namespace babelqueue;
using namespace std::chrono_literals;

namespace {
std::string name(const char* base) {
  static std::atomic<int> n{0};
  return std::string(base) + std::to_string(n.fetch_add(1));
}
}  // namespace

TEST(MemoryTransport, InstancesWithTheSameNameShareOneBroker) {
  const auto n = name("share");
  memory::memory_transport a(n), b(n), other(name("other"));
  ASSERT_TRUE(a.publish("q", "one", {{"traceparent", "00-1"}, {"blank", ""}}));
  ASSERT_TRUE(a.publish("q", "two"));
  EXPECT_FALSE(other.receive("q", 0ms).value().has_value());
  auto m1 = b.receive("q", 0ms).value();
  ASSERT_TRUE(m1);
  EXPECT_EQ(m1->body, "one");
  EXPECT_EQ(m1->queue, "q");
  EXPECT_EQ(m1->hdrs, (headers{{"traceparent", "00-1"}}));  // blank value dropped
  EXPECT_FALSE(m1->delivery_count.has_value());
  auto m2 = b.receive("q", 0ms).value();
  ASSERT_TRUE(m2);
  EXPECT_EQ(m2->body, "two");
  EXPECT_TRUE(b.ack(*m1));
  EXPECT_TRUE(b.ack(*m2));
  EXPECT_EQ(memory::depth(n, "q"), 0u);
}

TEST(MemoryTransport, UrlFactoryOpensTheSameBroker) {
  memory::register_transport();
  const auto n = name("url");
  auto t = open_transport("memory://" + n).value();
  ASSERT_TRUE(t->publish("q", "x"));
  EXPECT_EQ(memory::depth(n, "q"), 1u);
  auto caps = t->capabilities();
  EXPECT_TRUE(caps.native_delay);
  EXPECT_TRUE(caps.headers);
  EXPECT_FALSE(caps.delivery_count);
}

TEST(MemoryTransport, ReceiveWaitsAtMostItsTimeoutAndWakesOnPublish) {
  const auto n = name("wait");
  memory::memory_transport consumer(n);
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(consumer.receive("q", 80ms).value().has_value());
  auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, 80ms);
  EXPECT_LT(waited, 2s);

  std::thread producer([&] {
    std::this_thread::sleep_for(50ms);
    memory::memory_transport p(n);
    (void)p.publish("q", "late");
  });
  auto got = consumer.receive("q", 5s).value();
  producer.join();
  ASSERT_TRUE(got);
  EXPECT_EQ(got->body, "late");
  (void)consumer.ack(*got);
}

TEST(MemoryTransport, ReleaseRequeuesSameBytesOptionallyDelayed) {
  const auto n = name("release");
  memory::memory_transport t(n);
  ASSERT_TRUE(t.publish("q", "body", {{"h", "v"}}));
  auto m = t.receive("q", 0ms).value().value();
  EXPECT_EQ(memory::in_flight(n, "q"), 1u);
  ASSERT_TRUE(t.release(m, 200ms));
  EXPECT_EQ(memory::in_flight(n, "q"), 0u);
  EXPECT_EQ(memory::depth(n, "q"), 1u);
  EXPECT_FALSE(t.receive("q", 50ms).value().has_value());  // not due yet
  auto again = t.receive("q", 3s).value();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->body, "body");
  EXPECT_EQ(again->hdrs.at("h"), "v");
  ASSERT_TRUE(t.release(*again));  // no delay: at once
  auto third = t.receive("q", 0ms).value();
  ASSERT_TRUE(third);
  ASSERT_TRUE(t.ack(*third));
}

TEST(MemoryTransport, SettlingTwiceOrThroughAnotherInstanceIsRefused) {
  const auto n = name("settle");
  memory::memory_transport a(n), b(n);
  ASSERT_TRUE(a.publish("q", "x"));
  auto m = a.receive("q", 0ms).value().value();
  EXPECT_EQ(b.ack(m).code(), condition::invalid_argument);
  EXPECT_TRUE(a.ack(m));
  EXPECT_EQ(a.ack(m).code(), condition::invalid_argument);
  EXPECT_EQ(a.release(m).code(), condition::invalid_argument);
  received_message forged;
  EXPECT_EQ(a.ack(forged).code(), condition::invalid_argument);
}

TEST(MemoryTransport, CloseReturnsUnsettledMessagesInOrderAndRefusesLaterCalls) {
  const auto n = name("close");
  {
    memory::memory_transport t(n);
    for (const char* b : {"1", "2", "3"}) ASSERT_TRUE(t.publish("q", b));
    auto m1 = t.receive("q", 0ms).value().value();
    auto m2 = t.receive("q", 0ms).value().value();
    EXPECT_EQ(memory::in_flight(n, "q"), 2u);
    ASSERT_TRUE(t.close(std::chrono::steady_clock::now() + 1s));
    EXPECT_TRUE(t.close(std::chrono::steady_clock::now()));  // no-op
    EXPECT_EQ(t.publish("q", "x").code(), transport_errc::closed);
    EXPECT_EQ(t.receive("q", 0ms).code(), transport_errc::closed);
    EXPECT_EQ(t.ack(m1).code(), transport_errc::closed);
  }
  memory::memory_transport t(n);
  std::vector<std::string> order;
  while (auto m = t.receive("q", 0ms).value()) {
    order.push_back(m->body);
    (void)t.ack(*m);
  }
  EXPECT_EQ(order, (std::vector<std::string>{"1", "2", "3"}));
  EXPECT_EQ(memory::in_flight(n, "q"), 0u);
}

TEST(MemoryTransport, DestructorReturnsUnsettledMessages) {
  const auto n = name("dtor");
  {
    memory::memory_transport t(n);
    ASSERT_TRUE(t.publish("q", "kept"));
    (void)t.receive("q", 0ms).value().value();
  }
  EXPECT_EQ(memory::depth(n, "q"), 1u);
}

TEST(MemoryTransport, EmptyQueueNamesAreRefused) {
  memory::memory_transport t(name("empty"));
  EXPECT_EQ(t.publish("", "x").code(), condition::invalid_argument);
  EXPECT_EQ(t.receive("", 0ms).code(), condition::invalid_argument);
}

TEST(MemoryTransport, ManyThreadsNoMessageLostOrDuplicated) {
  const auto n = name("threads");
  constexpr int producers = 4, per_producer = 2000, consumers = 4;
  std::mutex mutex;
  std::multiset<std::string> seen;
  std::atomic<int> done_producing{0};
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p) {
    threads.emplace_back([&, p] {
      memory::memory_transport t(n);
      for (int i = 0; i < per_producer; ++i) {
        EXPECT_TRUE(t.publish("q", std::to_string(p) + ":" + std::to_string(i)));
      }
      done_producing.fetch_add(1);
    });
  }
  for (int c = 0; c < consumers; ++c) {
    threads.emplace_back([&, c] {
      memory::memory_transport t(n);
      int k = 0;
      for (;;) {
        auto m = t.receive("q", 20ms).value();
        if (!m) {
          if (done_producing.load() == producers && memory::depth(n, "q") == 0) break;
          continue;
        }
        // Release every 5th once, as a consumer that gives up would.
        if (++k % 5 == 0 && c % 2 == 0) {
          EXPECT_TRUE(t.release(*m));
          continue;
        }
        EXPECT_TRUE(t.ack(*m));
        std::lock_guard lock(mutex);
        seen.insert(m->body);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(producers * per_producer));
  std::set<std::string> unique(seen.begin(), seen.end());
  EXPECT_EQ(unique.size(), seen.size());
  EXPECT_EQ(memory::in_flight(n, "q"), 0u);
}

TEST(MemoryTransport, ResetForgetsABroker) {
  const auto n = name("reset");
  {
    memory::memory_transport t(n);
    ASSERT_TRUE(t.publish("q", "x"));
  }
  memory::reset(n);
  EXPECT_EQ(memory::depth(n, "q"), 0u);
}
