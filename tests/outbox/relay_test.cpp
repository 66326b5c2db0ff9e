// The outbox writer, the in-memory store and the relay (writer.hpp, memory_store.hpp,
// relay.hpp): wire-helpers §2.2–§2.5 over a real memory:// transport, the back-off values,
// what aborts a pass, and this SDK's parking that ends the peers' head-of-line blocking.
#include "outbox/fault_injecting_transport.hpp"
#include "runtime/test_util.hpp"

#include <babelqueue/babelqueue.hpp>
#include <babelqueue/idempotency/wrap.hpp>
#include <babelqueue/memory/memory_transport.hpp>
#include <babelqueue/outbox/error.hpp>
#include <babelqueue/outbox/memory_store.hpp>
#include <babelqueue/outbox/relay.hpp>
#include <babelqueue/outbox/writer.hpp>
#include <babelqueue/runtime/app.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace {

using namespace babelqueue;
using namespace std::chrono_literals;

// A store whose mark_failed fails on demand (fault injection: the database going away
// between two statements).
class failing_mark_store final : public outbox::store {
 public:
  outbox::memory_store inner;
  bool fail_mark_failed = false;
  result<std::string> save(std::string_view b, std::string_view q) override {
    return inner.save(b, q);
  }
  result<std::vector<outbox::record>> fetch_unpublished(std::size_t n) override {
    return inner.fetch_unpublished(n);
  }
  result<void> mark_published(std::span<const std::string> ids) override {
    return inner.mark_published(ids);
  }
  result<void> mark_failed(std::string_view id, std::string_view why) override {
    if (fail_mark_failed) return outbox::fail(outbox::errc::unavailable, "database gone");
    return inner.mark_failed(id, why);
  }
  result<std::vector<outbox::record>> list(const outbox::list_options& o) override {
    return inner.list(o);
  }
  result<std::size_t> retry(std::span<const std::string> ids) override { return inner.retry(ids); }
};

class Outbox : public ::testing::Test {
 protected:
  std::string broker = bqtest::unique_broker("outbox");
  memory::memory_transport transport{broker};
  std::vector<std::chrono::milliseconds> slept;
  outbox::relay_options options() {
    outbox::relay_options o;
    o.sleeper = [this](std::chrono::milliseconds d) { slept.push_back(d); };
    return o;
  }
  static envelope order(int n, std::string queue = "orders") {
    make_options mo;
    mo.queue = std::move(queue);
    return make("urn:babel:orders:created", json{{"n", n}}, mo).value();
  }
};

TEST_F(Outbox, TheWriterTakesTheQueueFromMetaElseDefault) {
  auto rows = std::make_shared<outbox::memory_store>();
  outbox::writer out(rows);
  EXPECT_EQ(out.write(order(1)).value(), "ob-1");
  const std::string exact =
      R"({"job":"urn:a:b:c","trace_id":"t","data":{"big":-12345678901234567890,"f":1.10},"meta":{"schema_version":1,"id":"x"},"attempts":0})";
  EXPECT_EQ(out.write(decode(exact).value()).value(), "ob-2");
  auto listed = rows->list({}).value();
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].queue, "orders");
  EXPECT_NE(listed[0].body.find(R"("queue":"orders")"), std::string::npos);
  EXPECT_EQ(listed[1].queue, "default");  // no meta.queue
  EXPECT_EQ(listed[1].body, exact);       // canonical input is stored byte for byte
  EXPECT_FALSE(out.write_encoded("{}", ""));
  EXPECT_THROW(outbox::writer(nullptr), babelqueue::error);
}

TEST_F(Outbox, FlushPublishesVerbatimOldestFirstAndMarksAfterConfirmation) {
  auto rows = std::make_shared<outbox::memory_store>();
  std::vector<std::string> bodies;
  for (int i = 0; i < 3; ++i) {
    bodies.push_back(encode(order(i)).value());
    rows->save(bodies.back(), "orders").value();
  }
  outbox::relay r(rows, transport, options());
  auto pass = r.flush().value();
  EXPECT_EQ(pass.published, 3u);
  EXPECT_EQ(pass.failed, 0u);
  auto got = bqtest::take_all(broker, "orders");
  ASSERT_EQ(got.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(got[i].body, bodies[i]);
  EXPECT_TRUE(rows->fetch_unpublished(10).value().empty());
  EXPECT_EQ(rows->list({.status = outbox::row_status::published}).value().size(), 3u);
  EXPECT_EQ(r.flush().value().published, 0u);  // nothing left: nothing re-sent
  EXPECT_TRUE(bqtest::take_all(broker, "orders").empty());
}

TEST_F(Outbox, TheBatchBoundsAPassAndDrainStopsAfterAnEmptyPass) {
  auto rows = std::make_shared<outbox::memory_store>();
  for (int i = 0; i < 7; ++i) rows->save(encode(order(i)).value(), "orders").value();
  auto o = options();
  o.batch = 3;
  outbox::relay r(rows, transport, o);
  EXPECT_EQ(r.flush().value().published, 3u);
  auto all = r.drain().value();
  EXPECT_EQ(all.published, 4u);
  EXPECT_EQ(bqtest::take_all(broker, "orders").size(), 7u);
}

TEST_F(Outbox, AFailedPublishIsRecordedAndBacksOff) {
  auto rows = std::make_shared<outbox::memory_store>(outbox::memory_store_options{.park_after = 0});
  for (int i = 0; i < 3; ++i) rows->save(encode(order(i)).value(), "orders").value();
  bqtest::fault_injecting_transport flaky(transport);
  flaky.fault = transport_errc::refused;  // a row the broker refuses, not an outage
  flaky.fail_publishes = {2};
  outbox::relay r(rows, flaky, options());
  auto pass = r.flush().value();
  EXPECT_EQ(pass.published, 2u);
  EXPECT_EQ(pass.failed, 1u);
  EXPECT_EQ(pass.attempted(), 3u);
  ASSERT_EQ(slept.size(), 1u);
  EXPECT_EQ(slept[0], 50ms);  // min(50 ms × max(1, 0 + 1), 5 s)
  auto pending = rows->fetch_unpublished(10).value();
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].id, "ob-2");
  EXPECT_EQ(pending[0].attempts, 1);
  EXPECT_EQ(pending[0].last_error, "refused: injected refusal on publish 2");
  EXPECT_EQ(r.flush().value().published, 1u);  // the next pass delivers it
  EXPECT_EQ(bqtest::take_all(broker, "orders").size(), 3u);
}

TEST_F(Outbox, AnOutageIsNotARowFailureAndNeverParksARow) {
  // The broker down (a transient error) says nothing about the rows: none is marked failed,
  // none counts toward park_after (1 here: a single recorded failure would park), the pass
  // ends at the outage and the relay backs off by how long the outage lasts.
  auto rows = std::make_shared<outbox::memory_store>(outbox::memory_store_options{.park_after = 1});
  for (int i = 0; i < 3; ++i) rows->save(encode(order(i)).value(), "orders").value();
  bqtest::fault_injecting_transport down(transport);
  down.fail_publishes = {2};
  outbox::relay r(rows, down, options());
  auto pass = r.flush().value();
  EXPECT_EQ(pass.published, 1u);
  EXPECT_EQ(pass.failed, 0u);
  EXPECT_EQ(pass.deferred, 2u);  // the row that met the outage and the one after it
  ASSERT_TRUE(pass.outage);
  EXPECT_EQ(pass.outage->code, transport_errc::unavailable);
  EXPECT_EQ(down.publishes, 2);  // the third row was not tried against a down broker
  down.fail_every_publish = true;
  for (int i = 0; i < 5; ++i) {
    auto drained = r.drain().value();  // stops at the outage
    EXPECT_EQ(drained.published, 0u);
    EXPECT_EQ(drained.deferred, 2u);
  }
  EXPECT_EQ(slept,
            (std::vector<std::chrono::milliseconds>{50ms, 100ms, 150ms, 200ms, 250ms, 300ms}));
  auto pending = rows->fetch_unpublished(10).value();
  ASSERT_EQ(pending.size(), 2u);
  for (const auto& row : pending) {
    EXPECT_EQ(row.attempts, 0) << row.id;
    EXPECT_EQ(row.last_error, "") << row.id;
  }
  EXPECT_TRUE(rows->list({.status = outbox::row_status::parked}).value().empty());
  down.fail_every_publish = false;  // the broker is back
  auto back = r.drain().value();
  EXPECT_EQ(back.published, 2u);
  EXPECT_FALSE(back.outage);
  EXPECT_EQ(bqtest::take_all(broker, "orders").size(), 3u);
  down.fail_every_publish = true;  // a new outage backs off from the first step again
  rows->save(encode(order(9)).value(), "orders").value();
  slept.clear();
  (void)r.flush();
  EXPECT_EQ(slept, (std::vector<std::chrono::milliseconds>{50ms}));
}

TEST_F(Outbox, ATimeoutIsAnOutageTooAndARefusalIsTheRowsFailure) {
  auto rows = std::make_shared<outbox::memory_store>(outbox::memory_store_options{.park_after = 1});
  rows->save(encode(order(1)).value(), "orders").value();
  bqtest::fault_injecting_transport flaky(transport);
  flaky.fail_every_publish = true;
  flaky.fault = transport_errc::timeout;
  outbox::relay r(rows, flaky, options());
  auto slow = r.flush().value();
  EXPECT_EQ(slow.deferred, 1u);
  EXPECT_EQ(slow.failed, 0u);
  flaky.fault = transport_errc::too_large;
  auto refused = r.flush().value();
  EXPECT_EQ(refused.failed, 1u);
  EXPECT_FALSE(refused.outage);
  EXPECT_EQ(rows->list({.status = outbox::row_status::parked}).value().size(), 1u);
}

TEST_F(Outbox, BackoffGrowsWithAttemptsUpToTheCap) {
  auto rows = std::make_shared<outbox::memory_store>();
  outbox::relay r(rows, transport, options());
  EXPECT_EQ(r.backoff(-5), 50ms);
  EXPECT_EQ(r.backoff(0), 50ms);
  EXPECT_EQ(r.backoff(1), 100ms);
  EXPECT_EQ(r.backoff(9), 500ms);
  EXPECT_EQ(r.backoff(99), 5000ms);
  EXPECT_EQ(r.backoff(INT64_MAX), 5000ms);  // no overflow
  auto o = options();
  o.backoff_step = 0ms;  // non-positive options take the defaults, as Go does
  o.backoff_cap = -1ms;
  o.batch = 0;
  outbox::relay defaults(rows, transport, o);
  EXPECT_EQ(defaults.backoff(3), 200ms);
}

TEST_F(Outbox, AMarkFailedErrorAbortsThePassAndNothingIsMarked) {
  auto rows = std::make_shared<failing_mark_store>();
  for (int i = 0; i < 3; ++i) rows->save(encode(order(i)).value(), "orders").value();
  bqtest::fault_injecting_transport flaky(transport);
  flaky.fault = transport_errc::refused;  // a row the broker refuses, not an outage
  flaky.fail_publishes = {2};
  rows->fail_mark_failed = true;
  outbox::relay r(rows, flaky, options());
  auto pass = r.flush();
  ASSERT_FALSE(pass);
  EXPECT_EQ(pass.error().code, outbox::errc::unavailable);
  // Row 1 went out but was not marked: it goes out again (at-least-once).
  EXPECT_EQ(rows->fetch_unpublished(10).value().size(), 3u);
  rows->fail_mark_failed = false;
  EXPECT_EQ(r.drain().value().published, 3u);
  EXPECT_EQ(bqtest::take_all(broker, "orders").size(), 4u);  // one duplicate, nothing lost
}

TEST_F(Outbox, ParkedRowsNoLongerBlockNewerOnes) {
  // The peers' head-of-line blocking (wire-helpers §2.5): with batch 2 and two poison rows
  // first, every pass fetches the same two rows and the good row is never reached.
  auto rows = std::make_shared<outbox::memory_store>(outbox::memory_store_options{.park_after = 2});
  rows->save("poison-1", "bad").value();
  rows->save("poison-2", "bad").value();
  rows->save(encode(order(1)).value(), "orders").value();
  bqtest::fault_injecting_transport flaky(transport);
  flaky.fault = transport_errc::refused;  // a row the broker refuses, not an outage
  outbox::relay r(rows, flaky, [&] {
    auto o = options();
    o.batch = 2;
    return o;
  }());
  flaky.fail_every_publish = true;
  EXPECT_EQ(r.drain().value().published, 0u);  // pass 1: both fail once (attempts 1)
  EXPECT_EQ(r.drain().value().published, 0u);  // pass 2: attempts 2 → parked
  EXPECT_EQ(rows->list({.status = outbox::row_status::parked}).value().size(), 2u);
  flaky.fail_every_publish = false;
  EXPECT_EQ(r.drain().value().published, 1u);  // the good row is reached now
  EXPECT_EQ(bqtest::take_all(broker, "orders").size(), 1u);
  auto parked = rows->list({.status = outbox::row_status::parked}).value();
  ASSERT_EQ(parked.size(), 2u);
  EXPECT_EQ(parked[0].last_error, "refused: injected refusal on publish 3");
  std::vector<std::string> ids{parked[0].id, parked[1].id, "ob-3", "nope"};
  EXPECT_EQ(rows->retry(ids).value(), 2u);  // only parked rows change
  auto pending = rows->fetch_unpublished(10).value();
  ASSERT_EQ(pending.size(), 2u);
  EXPECT_EQ(pending[0].attempts, 0);
  EXPECT_EQ(r.drain().value().published, 2u);
}

TEST_F(Outbox, UnknownIdsAreIgnoredAndLimitZeroFetchesNothing) {
  outbox::memory_store rows;
  rows.save("b", "q").value();
  EXPECT_TRUE(rows.fetch_unpublished(0).value().empty());
  std::vector<std::string> unknown{"ob-9"};
  EXPECT_TRUE(rows.mark_published(unknown));
  EXPECT_TRUE(rows.mark_failed("ob-9", "x"));
  EXPECT_EQ(rows.fetch_unpublished(5).value().size(), 1u);
  EXPECT_FALSE(rows.save("b", ""));
}

TEST_F(Outbox, ARepublishedRowHasOneEffectBehindTheIdempotencyWrap) {
  // At-least-once end to end: a pass whose mark failed sends the row again; the consumer's
  // idempotency wrap keyed on meta.id keeps the effect single.
  memory::register_transport();
  auto rows = std::make_shared<failing_mark_store>();
  outbox::writer(rows).write(order(7)).value();
  rows->save(encode(order(8)).value(), "orders").value();
  bqtest::fault_injecting_transport flaky(transport);
  flaky.fault = transport_errc::refused;  // a row the broker refuses, not an outage
  flaky.fail_publishes = {2};
  rows->fail_mark_failed = true;
  outbox::relay r(rows, flaky, options());
  ASSERT_FALSE(r.flush());  // order 7 published, not marked
  rows->fail_mark_failed = false;
  ASSERT_TRUE(r.drain());  // order 7 again, order 8 once
  app_options ao = bqtest::fast_options();
  ao.queue = "orders";
  app a("memory://" + broker, ao);
  auto seen = std::make_shared<idempotency::memory_store>();
  int effects = 0;
  a.handle("urn:babel:orders:created", idempotency::wrap(seen, [&](message&) { ++effects; }));
  EXPECT_EQ(a.drain().value(), 3u);
  EXPECT_EQ(effects, 2);
}

}  // namespace
