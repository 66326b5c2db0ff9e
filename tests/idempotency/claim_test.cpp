// The claim extension (store.hpp claiming_store, wrap.hpp wrap_claiming) on memory_store:
// claim/release/expiry rules, then PHP's ClaimingDispatch order on the runtime over
// memory://, including a duplicate parked while another worker holds the claim and four
// workers racing on the same ids.
#include "runtime/test_util.hpp"

#include <babelqueue/idempotency/error.hpp>
#include <babelqueue/idempotency/wrap.hpp>
#include <babelqueue/memory/memory_transport.hpp>
#include <babelqueue/runtime/app.hpp>
#include <babelqueue/runtime/metrics.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

namespace {

using namespace babelqueue;
using namespace std::chrono_literals;

std::string with_id(const std::string& id) {
  return R"({"job":"urn:a:b:c","trace_id":"t-1","data":{},"meta":{"schema_version":1,"id":")" + id +
         R"("},"attempts":0})";
}

TEST(MemoryClaims, AClaimIsInFlightNotSeen) {
  idempotency::memory_store s;
  EXPECT_TRUE(s.claim("a", 1h).value());
  EXPECT_FALSE(s.claim("a", 1h).value());  // another worker's live claim
  EXPECT_FALSE(s.seen("a").value());       // claimed is not committed
  EXPECT_EQ(s.claims(), 1u);
  ASSERT_TRUE(s.release("a"));
  EXPECT_TRUE(s.claim("a", 1h).value());  // released: free again
  ASSERT_TRUE(s.remember("a"));
  EXPECT_TRUE(s.seen("a").value());
  EXPECT_EQ(s.claims(), 0u);               // committing ends the claim
  EXPECT_FALSE(s.claim("a", 1h).value());  // committed ids cannot be claimed
  ASSERT_TRUE(s.release("a"));             // never touches a committed mark
  EXPECT_TRUE(s.seen("a").value());
  ASSERT_TRUE(s.release("never-claimed"));
}

TEST(MemoryClaims, AnExpiredClaimIsTakenOver) {
  idempotency::memory_store s;
  EXPECT_TRUE(s.claim("crashed", 20ms).value());
  EXPECT_FALSE(s.claim("crashed", 20ms).value());
  std::this_thread::sleep_for(40ms);  // the holder "crashed": its claim runs out
  EXPECT_EQ(s.claims(), 0u);
  EXPECT_TRUE(s.claim("crashed", 1h).value());
}

TEST(MemoryClaims, ANonPositiveTtlIsRefused) {
  idempotency::memory_store s;
  auto r = s.claim("a", 0ms);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, idempotency::errc::invalid_argument);
  EXPECT_EQ(r.error().code, condition::invalid_argument);
}

class ClaimingWrap : public ::testing::Test {
 protected:
  void SetUp() override { memory::register_transport(); }
  app_options options(std::int64_t max_attempts) {
    auto o = bqtest::fast_options();
    o.max_attempts = max_attempts;
    o.dead_letter = true;
    o.observers.push_back(metrics);
    return o;
  }
  std::string broker = bqtest::unique_broker("claim");
  std::string url() const { return "memory://" + broker; }
  std::shared_ptr<atomic_metrics> metrics = std::make_shared<atomic_metrics>();
  std::shared_ptr<idempotency::memory_store> store = std::make_shared<idempotency::memory_store>();
};

TEST_F(ClaimingWrap, ADuplicateRunsOnce) {
  app a(url(), options(3));
  int runs = 0;
  a.handle("urn:a:b:c", idempotency::wrap_claiming(store, [&](message&) { ++runs; }));
  bqtest::put_raw(broker, "default", with_id("m-1"));
  bqtest::put_raw(broker, "default", with_id("m-1"));
  EXPECT_EQ(a.drain().value(), 2u);
  EXPECT_EQ(runs, 1);
  EXPECT_TRUE(store->seen("m-1").value());
  EXPECT_EQ(store->claims(), 0u);
}

TEST_F(ClaimingWrap, AHeldClaimParksTheDuplicateWithoutCountingAnAttempt) {
  app a(url(), options(2));
  int runs = 0;
  a.handle("urn:a:b:c", idempotency::wrap_claiming(store, [&](message&) { ++runs; },
                                                   {.ttl = 1h, .park_delay = 50ms}));
  ASSERT_TRUE(store->claim("m-2", 1h).value());  // another worker is running m-2
  const std::string body = with_id("m-2");
  bqtest::put_raw(broker, "default", body);
  // Parked again and again (max_attempts 2 would have dead-lettered it at the second park
  // had a park counted): never run, never dead-lettered, the bytes unchanged.
  for (int i = 0; i < 4; ++i) {
    (void)a.drain();
    std::this_thread::sleep_for(80ms);
  }
  EXPECT_EQ(runs, 0);
  EXPECT_TRUE(bqtest::take_all(broker, "default.dlq").empty());
  EXPECT_FALSE(store->seen("m-2").value());  // the holder's claim is left alone
  EXPECT_EQ(store->claims(), 1u);
  // The holder commits: the parked copy comes round and is acked without running.
  ASSERT_TRUE(store->remember("m-2"));
  std::this_thread::sleep_for(80ms);
  (void)a.drain();
  EXPECT_EQ(runs, 0);
  EXPECT_TRUE(bqtest::take_all(broker, "default").empty());
  EXPECT_TRUE(bqtest::take_all(broker, "default.dlq").empty());
}

TEST_F(ClaimingWrap, TheHolderCommittingMeansTheParkedCopyIsAcked) {
  app a(url(), options(3));
  int runs = 0;
  a.handle("urn:a:b:c", idempotency::wrap_claiming(store, [&](message&) { ++runs; }));
  ASSERT_TRUE(store->claim("m-3", 1h).value());
  ASSERT_TRUE(store->remember("m-3"));  // the holder finished before the copy arrived
  bqtest::put_raw(broker, "default", with_id("m-3"));
  EXPECT_EQ(a.drain().value(), 1u);
  EXPECT_EQ(runs, 0);
  EXPECT_TRUE(bqtest::take_all(broker, "default.dlq").empty());
}

TEST_F(ClaimingWrap, AFailingHandlerReleasesItsClaimForTheRetry) {
  app a(url(), options(3));
  int runs = 0;
  a.handle("urn:a:b:c", idempotency::wrap_claiming(store, [&](message&) {
             if (++runs == 1) throw std::runtime_error("first run fails");
           }));
  bqtest::put_raw(broker, "default", with_id("m-4"));
  EXPECT_EQ(a.drain().value(), 2u);  // failure → retry claims again and succeeds
  EXPECT_EQ(runs, 2);
  EXPECT_TRUE(store->seen("m-4").value());
  EXPECT_EQ(store->claims(), 0u);
  EXPECT_TRUE(bqtest::take_all(broker, "default.dlq").empty());
}

TEST_F(ClaimingWrap, NoUsableIdFailsOpen) {
  app a(url(), options(1));
  int runs = 0;
  a.handle("urn:a:b:c", idempotency::wrap_claiming(store, [&](message&) { ++runs; }));
  const std::string no_id =
      R"({"job":"urn:a:b:c","trace_id":"t","data":{},"meta":{"schema_version":1},"attempts":0})";
  bqtest::put_raw(broker, "default", no_id);
  bqtest::put_raw(broker, "default", no_id);
  EXPECT_EQ(a.drain().value(), 2u);
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(store->claims(), 0u);
}

TEST_F(ClaimingWrap, FourWorkersRacingOnTheSameIdsRunEachEffectOnce) {
  auto o = options(2);  // parked copies come round until the holder commits (no attempt)
  o.workers = 4;
  app a(url(), o);
  std::mutex mutex;
  std::map<std::string, int> effects;
  a.handle("urn:a:b:c", idempotency::wrap_claiming(store,
                                                   [&](message& m) {
                                                     std::this_thread::sleep_for(
                                                         1ms);  // widen the in-flight window
                                                     std::lock_guard lock(mutex);
                                                     ++effects[std::string(m.id())];
                                                   },
                                                   {.ttl = 1h, .park_delay = 20ms}));
  constexpr int ids = 50;
  for (int copy = 0; copy < 3; ++copy) {
    for (int i = 0; i < ids; ++i)
      bqtest::put_raw(broker, "default", with_id("r-" + std::to_string(i)));
  }
  std::thread stopper([&] {  // stops consume() once every id is committed and copies drained
    const auto give_up = std::chrono::steady_clock::now() + 60s;
    while (store->size() < static_cast<std::size_t>(ids) &&
           std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(5ms);
    }
    std::this_thread::sleep_for(300ms);  // parked copies come round once more and are acked
    a.stop();
  });
  ASSERT_TRUE(a.consume());
  stopper.join();
  ASSERT_EQ(effects.size(), static_cast<std::size_t>(ids));
  for (const auto& [id, n] : effects) EXPECT_EQ(n, 1) << id;
  EXPECT_EQ(store->claims(), 0u);
  EXPECT_TRUE(bqtest::take_all(broker, "default.dlq").empty());
}

TEST(ClaimingWrapArguments, RefusesNullStoreEmptyHandlerAndNonPositiveTtl) {
  auto s = std::make_shared<idempotency::memory_store>();
  EXPECT_THROW(idempotency::wrap_claiming(nullptr, [](message&) {}), babelqueue::error);
  EXPECT_THROW(idempotency::wrap_claiming(s, {}), babelqueue::error);
  EXPECT_THROW(idempotency::wrap_claiming(s, [](message&) {}, {.ttl = 0ms}), babelqueue::error);
  EXPECT_THROW(idempotency::wrap_claiming(s, [](message&) {}, {.ttl = 1h, .park_delay = 0ms}),
               babelqueue::error);
}

}  // namespace
