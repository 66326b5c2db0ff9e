// Delivery times through the outbox (writer.hpp, store.hpp, relay.hpp; issue #37): the writer
// turns a delay into an absolute time and refuses bad ones with nothing saved; the relay hands
// a row to a transport that can hold it with the time LEFT, keeps it in the outbox when the
// transport cannot, and never publishes a message before its time.
#include "outbox/fault_injecting_transport.hpp"
#include "outbox/store_delay_cases.hpp"
#include "runtime/test_util.hpp"

#include <babelqueue/babelqueue.hpp>
#include <babelqueue/memory/memory_transport.hpp>
#include <babelqueue/outbox/error.hpp>
#include <babelqueue/outbox/memory_store.hpp>
#include <babelqueue/outbox/relay.hpp>
#include <babelqueue/outbox/writer.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

namespace {

using namespace babelqueue;
using namespace std::chrono_literals;

class OutboxDelay : public ::testing::Test {
 protected:
  std::string broker = bqtest::unique_broker("outbox-delay");
  memory::memory_transport transport{broker};
  std::shared_ptr<outbox::memory_store> rows = std::make_shared<outbox::memory_store>();
  outbox::writer out{rows};
  static envelope order(int n) {
    make_options mo;
    mo.queue = "orders";
    return make("urn:babel:orders:created", json{{"n", n}}, mo).value();
  }
  outbox::relay_options options() {
    outbox::relay_options o;
    o.sleeper = [](std::chrono::milliseconds) {};
    return o;
  }
};

TEST_F(OutboxDelay, TheMemoryStoreKeepsDeliveryTimes) {
  bqtest::expect_store_keeps_delivery_times(*rows);
}

TEST_F(OutboxDelay, BadTimesAreRefusedAndNothingIsSaved) {
  const auto refused = [&](const outbox::write_options& w) {
    auto r = out.write(order(1), w);
    EXPECT_FALSE(r);
    if (!r) {
      EXPECT_EQ(r.error().code, outbox::errc::invalid_argument) << r.error().message;
    }
  };
  refused({.delay = -1ms});
  refused({.delay = 1s, .deliver_at = std::chrono::system_clock::now() + 1h});
  refused({.deliver_at = std::chrono::system_clock::now() - 5s});
  refused({.delay = std::chrono::milliseconds::max()});  // ends after year 9999
  EXPECT_TRUE(rows->list({}).value().empty());
  // Up to 1 s in the past is "at once": saved, due now.
  ASSERT_TRUE(out.write(order(2), {.deliver_at = std::chrono::system_clock::now() - 500ms}));
  EXPECT_EQ(rows->fetch_unpublished(10).value().size(), 1u);
}

TEST_F(OutboxDelay, ADelayBecomesAnAbsoluteTimeAtWriteTime) {
  const auto before = outbox::due_now();
  ASSERT_TRUE(out.write(order(1), {.delay = 5min}));
  const auto after = outbox::due_now();
  auto listed = rows->list({}).value();
  ASSERT_EQ(listed.size(), 1u);
  ASSERT_TRUE(listed[0].deliver_at.has_value());
  EXPECT_GE(*listed[0].deliver_at, before + 5min);
  EXPECT_LE(*listed[0].deliver_at, after + 5min + 1ms);
  EXPECT_TRUE(rows->fetch_unpublished(10).value().empty());  // not due
  // A zero delay is a plain row, without a time.
  ASSERT_TRUE(out.write(order(2), {.delay = 0ms}));
  EXPECT_EQ(rows->fetch_unpublished(10).value().size(), 1u);
}

TEST_F(OutboxDelay, TheRelayHandsARowToATransportThatHoldsItForTheTimeLeft) {
  const std::string body = encode(order(7)).value();
  ASSERT_TRUE(out.write_encoded(body, "orders", {.delay = 1500ms}));
  // The relay runs 500 ms late: the broker must hold the message for the ~1 s left, not 1.5 s.
  std::this_thread::sleep_for(500ms);
  outbox::relay r(rows, transport, options());
  const auto sent_at = std::chrono::steady_clock::now();
  auto pass = r.flush().value();
  EXPECT_EQ(pass.published, 1u);
  EXPECT_TRUE(rows->fetch_due(10, outbox::due_time::max()).value().empty());  // marked

  EXPECT_TRUE(bqtest::take_all(broker, "orders").empty()) << "published early";
  std::this_thread::sleep_for(700ms);
  EXPECT_TRUE(bqtest::take_all(broker, "orders").empty()) << "published early";
  // Due ~1000 ms after the pass; the memory broker delivers within milliseconds of it.
  std::this_thread::sleep_until(sent_at + 1100ms);
  auto got = bqtest::take_all(broker, "orders");
  ASSERT_EQ(got.size(), 1u) << "not delivered ~1 s after the late relay pass";
  EXPECT_EQ(got[0].body, body);  // the stored bytes, verbatim
}

TEST_F(OutboxDelay, ARowATransportCannotHoldStaysInTheOutboxUntilDue) {
  bqtest::fault_injecting_transport no_delay(transport);
  no_delay.hide_delay = true;
  const std::string body = encode(order(8)).value();
  ASSERT_TRUE(out.write_encoded(body, "orders", {.delay = 1h}));
  auto now = std::chrono::system_clock::now();
  auto o = options();
  o.clock = [&now] { return now; };
  outbox::relay r(rows, no_delay, o);

  auto pass = r.flush().value();
  EXPECT_EQ(pass.attempted(), 0u);  // not fetched at all: no attempt counted, no error
  EXPECT_EQ(no_delay.publishes, 0);
  auto pending = rows->fetch_due(10, outbox::due_time::max()).value();
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].attempts, 0);

  now += 1h + 1s;  // the relay's clock passes the row's time: a plain publish, at once
  pass = r.flush().value();
  EXPECT_EQ(pass.published, 1u);
  EXPECT_EQ(no_delay.publishes, 1);
  auto got = bqtest::take_all(broker, "orders");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].body, body);
}

TEST_F(OutboxDelay, APassedTimeIsAPlainPublishAtOnce) {
  const std::string body = encode(order(9)).value();
  ASSERT_TRUE(out.write_encoded(body, "orders", {.delay = 20ms}));
  std::this_thread::sleep_for(50ms);
  outbox::relay r(rows, transport, options());
  EXPECT_EQ(r.flush().value().published, 1u);
  auto got = bqtest::take_all(broker, "orders");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].body, body);
}

}  // namespace
