// Several workers, several queues, stop() under load: every message is handled or still
// queued — none lost, none in flight after consume() returns. Run under TSan in CI.
#include "runtime/test_util.hpp"

#include <gtest/gtest.h>

#include <set>
#include <thread>

using namespace babelqueue;
using namespace std::chrono_literals;

namespace {

class Concurrency : public ::testing::Test {
 protected:
  void SetUp() override { memory::register_transport(); }
  std::string broker = bqtest::unique_broker("conc");
  std::string url() const { return "memory://" + broker; }
};

bool wait_for(const std::function<bool()>& done, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return done();
}

}  // namespace

TEST_F(Concurrency, FourWorkersHandleEveryMessageExactlyOnceIncludingRetries) {
  auto o = bqtest::fast_options();
  o.workers = 4;
  o.dead_letter = true;
  auto metrics = std::make_shared<atomic_metrics>();
  o.observers.push_back(metrics);
  app a(url(), o);
  std::mutex mutex;
  std::multiset<std::int64_t> ok;
  std::set<std::thread::id> threads;
  a.handle("urn:t:load:item", [&](message& m) {
    const auto n = m.data().at("n").get<std::int64_t>();
    // Every 7th message fails once, so retries race with first deliveries.
    if (n % 7 == 0 && m.attempts() == 0) throw std::runtime_error("transient");
    std::lock_guard lock(mutex);
    ok.insert(n);
    threads.insert(std::this_thread::get_id());
  });
  constexpr int total = 2000;
  for (int i = 0; i < total; ++i) (void)a.publish("urn:t:load:item", json{{"n", i}}).value();

  std::thread consumer([&] { EXPECT_TRUE(a.consume()); });
  EXPECT_TRUE(wait_for(
      [&] {
        std::lock_guard lock(mutex);
        return ok.size() == static_cast<std::size_t>(total);
      },
      60s));
  a.stop();
  consumer.join();
  std::lock_guard lock(mutex);
  ASSERT_EQ(ok.size(), static_cast<std::size_t>(total));
  for (int i = 0; i < total; ++i) EXPECT_EQ(ok.count(i), 1u) << i;
  EXPECT_GE(threads.size(), 2u);  // work really was spread
  EXPECT_EQ(memory::depth(broker, "default"), 0u);
  EXPECT_EQ(memory::in_flight(broker, "default"), 0u);
  EXPECT_EQ(memory::depth(broker, "default.dlq"), 0u);
  auto s = metrics->snapshot();
  EXPECT_EQ(s.retried, static_cast<std::uint64_t>((total + 6) / 7));
  EXPECT_EQ(s.acked, static_cast<std::uint64_t>(total));
}

TEST_F(Concurrency, StopUnderLoadLosesNothing) {
  auto o = bqtest::fast_options();
  o.workers = 3;
  app a(url(), o);
  std::atomic<int> handled{0};
  a.handle("urn:t:load:item", [&](message&) {
    std::this_thread::sleep_for(1ms);  // keep handlers in flight when stop() lands
    handled.fetch_add(1);
  });
  std::atomic<bool> producing{true};
  std::atomic<int> published{0};
  std::thread producer([&] {
    while (producing.load()) {
      if (a.publish("urn:t:load:item", json{{"n", published.load()}})) published.fetch_add(1);
    }
  });
  std::thread consumer([&] { EXPECT_TRUE(a.consume()); });
  ASSERT_TRUE(wait_for([&] { return handled.load() > 100; }, 30s));
  a.stop();  // while the producer is still publishing and handlers run
  consumer.join();
  producing.store(false);
  producer.join();
  EXPECT_EQ(memory::in_flight(broker, "default"), 0u);
  EXPECT_EQ(static_cast<std::size_t>(handled.load()) + memory::depth(broker, "default"),
            static_cast<std::size_t>(published.load()));
  // A later consumer picks up the rest.
  app b(url(), bqtest::fast_options());
  std::atomic<int> rest{0};
  b.handle("urn:t:load:item", [&](message&) { rest.fetch_add(1); });
  (void)b.drain().value();
  EXPECT_EQ(handled.load() + rest.load(), published.load());
}

TEST_F(Concurrency, ConsumesSeveralQueuesAndRefusesASecondConcurrentConsume) {
  auto o = bqtest::fast_options();
  o.workers = 2;
  app a(url(), o);
  std::atomic<int> a_count{0}, b_count{0};
  a.handle("urn:t:q:a", [&](message& m) {
    EXPECT_EQ(m.queue(), "qa");
    a_count.fetch_add(1);
  });
  a.handle("urn:t:q:b", [&](message& m) {
    EXPECT_EQ(m.queue(), "qb");
    b_count.fetch_add(1);
  });
  for (int i = 0; i < 50; ++i) {
    (void)a.publish("urn:t:q:a", json::object(), {.queue = "qa", .trace_id = {}, .hdrs = {}});
    (void)a.publish("urn:t:q:b", json::object(), {.queue = "qb", .trace_id = {}, .hdrs = {}});
  }
  std::thread consumer([&] { EXPECT_TRUE(a.consume({"qa", "qb"})); });
  ASSERT_TRUE(wait_for([&] { return a_count.load() == 50 && b_count.load() == 50; }, 30s));
  // consume() is running: a second one on the same app is refused at once.
  auto second = a.consume();
  EXPECT_EQ(second.code(), condition::invalid_argument);
  a.stop();
  consumer.join();
  EXPECT_TRUE(a.consume());  // sticky stop: returns at once
}

TEST_F(Concurrency, StopReturnsWithinAboutOnePollTimeoutWhenIdle) {
  auto o = bqtest::fast_options();
  o.poll_timeout = 100ms;
  o.workers = 2;
  app a(url(), o);
  std::thread consumer([&] { EXPECT_TRUE(a.consume()); });
  std::this_thread::sleep_for(50ms);
  const auto start = std::chrono::steady_clock::now();
  a.stop();
  consumer.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST_F(Concurrency, PublishFromManyThreadsAtOnce) {
  app a(url(), bqtest::fast_options());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) EXPECT_TRUE(a.publish("urn:a:b:c", json{{"i", i}}));
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(memory::depth(broker, "default"), 800u);
}
