// The App runtime on redis://: bad values in the list are dead-lettered as their exact bytes
// (never a crash); several workers consume, stop() settles everything (deferred acks flushed).
#include "redis/redis_fixture.hpp"

#include <babelqueue/runtime/app.hpp>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

using namespace std::chrono_literals;
using bqtest::envelope_n;
using bqtest::padded_envelope_text;

class RedisApp : public bqtest::RedisTest {
 protected:
  babelqueue::app_options app_opts(const std::string& queue) {
    babelqueue::redis::register_transport();
    babelqueue::app_options o;
    o.queue = queue;
    o.poll_timeout = 200ms;
    o.dead_letter = true;
    return o;
  }
};

TEST_F(RedisApp, GarbageValuesAreDeadLetteredAsTheirExactBytes) {
  const std::vector<std::string> garbage = {
      "not json",
      std::string("\xff\xfe\x00 binary", 9),
      R"({"__bq_frame":1,"headers":{"a":"b"},"body":42})",
      R"({"job":"urn:babel:x:y"})",
  };
  for (const auto& g : garbage) raw_->integer({"RPUSH", "poison", g});
  std::string good = padded_envelope_text(1);
  raw_->integer({"RPUSH", "poison", good});

  babelqueue::app app(server_->url(), app_opts("poison"));
  std::vector<std::string> handled;
  app.handle("urn:babel:test:item", [&](babelqueue::message& m) { handled.emplace_back(m.raw()); });
  auto n = app.drain("poison");
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(handled, std::vector<std::string>{good});
  // Original bytes, in order (the runtime may add out-of-band reason headers: read the DLQ
  // through the transport, which unframes).
  auto t = open();
  std::vector<std::string> dlq;
  for (;;) {
    auto got = t->receive("poison.dlq", 0ms);
    ASSERT_TRUE(got);
    if (!got->has_value()) break;
    dlq.push_back((*got)->body);
    ASSERT_TRUE(t->ack(**got));
  }
  EXPECT_EQ(dlq, garbage);
  EXPECT_EQ(raw_->llen("poison"), 0);
  EXPECT_EQ(raw_->llen("poison:processing"), 0);
}

TEST_F(RedisApp, WorkersConsumeAndStopSettlesEverything) {
  const int n = 200;
  {
    auto t = open();
    std::vector<babelqueue::outgoing_message> batch;
    batch.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) batch.push_back({padded_envelope_text(i), {}});
    ASSERT_TRUE(t->publish_batch("work", batch));
  }
  auto o = app_opts("work");
  o.workers = 3;
  babelqueue::app app(server_->url() + "?prefetch=4", o);
  std::mutex mu;
  std::set<long> seen;
  std::atomic<int> count{0};
  app.handle("urn:babel:test:item", [&](babelqueue::message& m) {
    {
      std::lock_guard lock(mu);
      seen.insert(m.data().value("n", -1L));
    }
    if (++count == n) app.stop();
  });
  std::thread watchdog([&] {
    for (int i = 0; i < 300 && !app.stop_requested(); ++i) std::this_thread::sleep_for(100ms);
    app.stop();
  });
  auto r = app.consume();
  watchdog.join();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(static_cast<int>(seen.size()), n);
  // consume() closed the worker transports: deferred acks flushed, nothing reserved.
  EXPECT_EQ(raw_->llen("work"), 0);
  EXPECT_EQ(raw_->llen("work:processing"), 0);
  EXPECT_EQ(raw_->integer({"ZCARD", "work:processing:deadlines"}), 0);
}
