// artemis:// delayed publish on the real broker: the message annotation `x-opt-delivery-time`
// (absolute Unix ms, an AMQP long) and the `bq_delay` string property a bare peer reads, the
// broker holding the message until then, and why it is a long: Artemis delivers a
// timestamp-typed `x-opt-delivery-time` at once.
#include "artemis/artemis_fixture.hpp"

#include <proton/annotation_key.hpp>
#include <proton/symbol.hpp>
#include <proton/timestamp.hpp>
#include <proton/value.hpp>

using namespace std::chrono_literals;
using babelqueue::transport_errc;

namespace {

class ArtemisDelayedPublish : public bqtest::ArtemisTest {};

std::int64_t epoch_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

const proton::annotation_key delivery_time{proton::symbol("x-opt-delivery-time")};
using steady = std::chrono::steady_clock;

}  // namespace

TEST_F(ArtemisDelayedPublish, TheBrokerHoldsItUntilTheLongDeliveryTime) {
  auto t = open();
  ASSERT_TRUE(t);
  EXPECT_TRUE(t->capabilities().delayed_publish);
  EXPECT_EQ(t->capabilities().max_delay, 0ms);
  EXPECT_EQ(t->capabilities().delay_granularity, 0ms) << "milliseconds";
  const std::string body = bqtest::envelope_text(1);
  const auto before = epoch_ms();
  const auto started = steady::now();
  auto sent = t->publish_delayed(queue_, body, {{"traceparent", "tp-delay"}}, 2s);
  ASSERT_TRUE(sent) << sent.error().message;
  const auto after = epoch_ms();
  EXPECT_FALSE(peer_->get(queue_, 1s)) << "delivered within 1 s of a 2 s delay";
  auto m = peer_->get(queue_, 15s);
  ASSERT_TRUE(m) << "never delivered";
  EXPECT_GE(steady::now() - started, 1900ms) << "delivered early";
  ASSERT_EQ(m->body().type(), proton::STRING) << "amqp-value string, as publish()";
  EXPECT_EQ(proton::get<std::string>(m->body()), body);
  EXPECT_TRUE(m->durable());
  const proton::value at = m->message_annotations().get(delivery_time);
  ASSERT_EQ(at.type(), proton::LONG) << "x-opt-delivery-time is an AMQP long";
  EXPECT_GE(proton::get<std::int64_t>(at), before + 2000) << "absolute: publish time + delay";
  EXPECT_LE(proton::get<std::int64_t>(at), after + 2000);
  EXPECT_EQ(bqtest::prop(*m, "bq_delay"), "2000") << "the delay in ms, a string (underscore)";
  EXPECT_EQ(bqtest::prop(*m, "bq_schema_version"), "1");
  EXPECT_EQ(bqtest::prop(*m, "traceparent"), "tp-delay");
  EXPECT_FALSE(peer_->get(queue_, 500ms)) << "delivered once";
}

TEST_F(ArtemisDelayedPublish, AZeroDelayCarriesNoDeliveryTime) {
  auto t = open();
  ASSERT_TRUE(t);
  ASSERT_TRUE(t->publish_delayed(queue_, bqtest::envelope_text(2), {}, 0ms));
  auto m = peer_->get(queue_, 5s);
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->message_annotations().exists(delivery_time));
  EXPECT_EQ(bqtest::prop(*m, "bq_delay"), "<unset>");
}

// Why the binding sends a long: the broker schedules on a numeric `x-opt-delivery-time` only.
// The same instant as an AMQP timestamp is delivered at once (pinned on Artemis 2.40.0).
TEST_F(ArtemisDelayedPublish, ArtemisSchedulesOnALongAndNotOnATimestamp) {
  const auto due = epoch_ms() + 30000;
  proton::message as_timestamp(bqtest::envelope_text(3));
  as_timestamp.message_annotations().put(delivery_time, proton::value(proton::timestamp(due)));
  ASSERT_TRUE(peer_->send(queue_, as_timestamp));
  EXPECT_TRUE(peer_->get(queue_, 5s)) << "a timestamp-typed x-opt-delivery-time was held";

  proton::message as_long(bqtest::envelope_text(4));
  as_long.message_annotations().put(delivery_time, proton::value(epoch_ms() + 2000));
  const auto started = steady::now();
  ASSERT_TRUE(peer_->send(queue_, as_long));
  EXPECT_FALSE(peer_->get(queue_, 1s)) << "a long x-opt-delivery-time was not held";
  EXPECT_TRUE(peer_->get(queue_, 15s));
  EXPECT_GE(steady::now() - started, 1900ms);
}

TEST_F(ArtemisDelayedPublish, ADelayedPublishAfterCloseIsClosedAndNothingIsSent) {
  auto t = open();
  ASSERT_TRUE(t);
  auto bad = t->publish_delayed(queue_, bqtest::envelope_text(5), {}, -1ms);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.code(), transport_errc::invalid_argument);
  ASSERT_TRUE(t->close(steady::now() + 5s));
  auto r = t->publish_delayed(queue_, bqtest::envelope_text(5), {}, 1s);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.code(), transport_errc::closed);
  EXPECT_FALSE(peer_->get(queue_, 1s));
}
