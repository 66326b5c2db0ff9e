// idempotency::wrap and memory_store (wrap.hpp, store.hpp): the decision order on the runtime
// over memory://, what a store failure does, ids that are absent, not strings, empty or white
// space, and many workers on one store.
#include "runtime/test_util.hpp"

#include <babelqueue/idempotency/wrap.hpp>
#include <babelqueue/memory/memory_transport.hpp>
#include <babelqueue/runtime/app.hpp>
#include <babelqueue/runtime/metrics.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

namespace {

using namespace babelqueue;

// An envelope whose meta holds `meta_members` besides schema_version.
std::string with_meta(const std::string& meta_members) {
  return R"({"job":"urn:a:b:c","trace_id":"t-1","data":{},"meta":{"schema_version":1,)" +
         meta_members + R"(},"attempts":0})";
}

// A store whose operations fail on demand (fault injection: a real store's outage).
class failing_store final : public idempotency::store {
 public:
  bool fail_seen = false, fail_remember = false;
  idempotency::memory_store inner;
  result<bool> seen(std::string_view id) override {
    if (fail_seen) return fail(make_error_code(errc::invalid_argument), "store down (seen)");
    return inner.seen(id);
  }
  result<void> remember(std::string_view id) override {
    if (fail_remember)
      return fail(make_error_code(errc::invalid_argument), "store down (remember)");
    return inner.remember(id);
  }
  result<void> forget(std::string_view id) override { return inner.forget(id); }
};

class Idempotency : public ::testing::Test {
 protected:
  void SetUp() override { memory::register_transport(); }
  app_options options() {
    auto o = bqtest::fast_options();
    o.max_attempts = 1;
    o.observers.push_back(metrics);
    return o;
  }
  std::string broker = bqtest::unique_broker("idem");
  std::string url() const { return "memory://" + broker; }
  std::shared_ptr<atomic_metrics> metrics = std::make_shared<atomic_metrics>();
};

TEST_F(Idempotency, ADuplicateIsAckedWithoutRunning) {
  app a(url(), options());
  auto seen = std::make_shared<idempotency::memory_store>();
  int runs = 0;
  a.handle("urn:a:b:c", idempotency::wrap(seen, [&](message&) { ++runs; }));
  const auto body = with_meta(R"("id":"m-1")");
  bqtest::put_raw(broker, "default", body);
  bqtest::put_raw(broker, "default", body);
  EXPECT_EQ(a.drain().value(), 2u);
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(metrics->snapshot().acked, 2u);
  EXPECT_EQ(seen->size(), 1u);
}

TEST_F(Idempotency, NoUsableIdFailsOpenAndWhiteSpaceIsAnId) {
  app a(url(), options());
  auto seen = std::make_shared<idempotency::memory_store>();
  int runs = 0;
  a.handle("urn:a:b:c", idempotency::wrap(seen, [&](message&) { ++runs; }));
  for (const std::string meta : {R"("queue":"q")", R"("id":42)", R"("id":null)", R"("id":"")"}) {
    bqtest::put_raw(broker, "default", with_meta(meta));
    bqtest::put_raw(broker, "default", with_meta(meta));
  }
  EXPECT_EQ(a.drain().value(), 8u);
  EXPECT_EQ(runs, 8);  // never deduped, never remembered
  EXPECT_EQ(seen->size(), 0u);
  bqtest::put_raw(broker, "default", with_meta(R"("id":" ")"));
  bqtest::put_raw(broker, "default", with_meta(R"("id":" ")"));
  EXPECT_EQ(a.drain().value(), 2u);
  EXPECT_EQ(runs, 9);  // " " is a key like any other: the second is a duplicate
  EXPECT_TRUE(seen->seen(" ").value());
  EXPECT_FALSE(seen->seen("").value());
}

TEST_F(Idempotency, AFailedHandlerLeavesTheIdUnmarked) {
  auto o = options();
  o.max_attempts = 3;
  app a(url(), o);
  auto seen = std::make_shared<idempotency::memory_store>();
  int runs = 0;
  a.handle("urn:a:b:c", idempotency::wrap(seen, [&](message&) {
             if (++runs < 3) throw std::runtime_error("not yet");
           }));
  bqtest::put_raw(broker, "default", with_meta(R"("id":"m-2")"));
  EXPECT_EQ(a.drain().value(), 3u);  // two retries, then success
  EXPECT_EQ(runs, 3);
  EXPECT_TRUE(seen->seen("m-2").value());
}

TEST_F(Idempotency, AStoreFailureIsAHandlerFailureNeverASkip) {
  auto o = options();
  o.dead_letter = true;
  app a(url(), o);
  auto store = std::make_shared<failing_store>();
  int runs = 0;
  a.handle("urn:a:b:c", idempotency::wrap(store, [&](message&) { ++runs; }));

  store->fail_seen = true;  // cannot tell: the handler does not run, the message fails
  bqtest::put_raw(broker, "default", with_meta(R"("id":"m-3")"));
  EXPECT_EQ(a.drain().value(), 1u);
  EXPECT_EQ(runs, 0);
  auto dlq = bqtest::take_all(broker, "default.dlq");
  ASSERT_EQ(dlq.size(), 1u);
  EXPECT_NE(dlq[0].body.find("store down (seen)"), std::string::npos);

  store->fail_seen = false;  // ran, but the mark failed: the delivery fails (retried)
  store->fail_remember = true;
  bqtest::put_raw(broker, "default", with_meta(R"("id":"m-4")"));
  EXPECT_EQ(a.drain().value(), 1u);
  EXPECT_EQ(runs, 1);
  EXPECT_FALSE(store->inner.seen("m-4").value());
  dlq = bqtest::take_all(broker, "default.dlq");
  ASSERT_EQ(dlq.size(), 1u);
  EXPECT_NE(dlq[0].body.find("store down (remember)"), std::string::npos);
}

TEST_F(Idempotency, ForgetLetsItRunAgain) {
  app a(url(), options());
  auto seen = std::make_shared<idempotency::memory_store>();
  int runs = 0;
  a.handle("urn:a:b:c", idempotency::wrap(seen, [&](message&) { ++runs; }));
  bqtest::put_raw(broker, "default", with_meta(R"("id":"m-5")"));
  EXPECT_EQ(a.drain().value(), 1u);
  ASSERT_TRUE(seen->forget("m-5"));
  ASSERT_TRUE(seen->forget("never-there"));
  bqtest::put_raw(broker, "default", with_meta(R"("id":"m-5")"));
  EXPECT_EQ(a.drain().value(), 1u);
  EXPECT_EQ(runs, 2);
}

TEST_F(Idempotency, ManyWorkersShareOneStore) {
  auto o = options();
  o.workers = 4;
  app a(url(), o);
  auto seen = std::make_shared<idempotency::memory_store>();
  std::atomic<int> runs{0};
  a.handle("urn:a:b:c", idempotency::wrap(seen, [&](message&) { ++runs; }));
  constexpr int ids = 200;
  for (int i = 0; i < ids; ++i) {
    bqtest::put_raw(broker, "default", with_meta(R"("id":"w-)" + std::to_string(i) + "\""));
  }
  std::thread stopper([&] {  // stops consume() once all are acked (or after a bounded wait)
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (metrics->snapshot().acked < static_cast<std::uint64_t>(ids) &&
           std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    a.stop();
  });
  ASSERT_TRUE(a.consume());
  stopper.join();
  EXPECT_EQ(runs.load(), ids);
  EXPECT_EQ(seen->size(), static_cast<std::size_t>(ids));
}

TEST(IdempotencyWrap, RefusesANullStoreOrAnEmptyHandler) {
  EXPECT_THROW(idempotency::wrap(nullptr, [](message&) {}), babelqueue::error);
  EXPECT_THROW(idempotency::wrap(std::make_shared<idempotency::memory_store>(), {}),
               babelqueue::error);
}

}  // namespace
