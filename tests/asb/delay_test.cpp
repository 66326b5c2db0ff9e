// sb:// delayed publish (ScheduledEnqueueTime) on the Service Bus stand-in, through its
// scheduling front (scheduling_front.hpp: Artemis ignores `x-opt-scheduled-enqueue-time`, the
// front reads it and makes the broker hold the message). What is pinned: the annotation is an
// AMQP timestamp = publish time + delay, `bq-delay` is an AMQP long of the delay in ms, the
// message is not delivered before that time and is byte-exact after it, a release with a
// delay is scheduled the same way — and the front holds only what Service Bus would (a
// timestamp), so a client sending another type would fail these tests.
#include "asb/asb_fixture.hpp"
#include "asb/scheduling_front.hpp"

#include <proton/annotation_key.hpp>
#include <proton/binary.hpp>
#include <proton/scalar.hpp>
#include <proton/symbol.hpp>
#include <proton/timestamp.hpp>
#include <proton/value.hpp>

using namespace std::chrono_literals;
using babelqueue::transport_errc;
using bqtest::envelope_text;

namespace {

std::int64_t unix_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class AsbDelayedPublish : public bqtest::AsbTest {
 protected:
  void SetUp() override {
    bqtest::AsbTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    std::uint16_t upstream = 0;
    ASSERT_TRUE(bqtest::scheduling_front::through(bqtest::asb_connection_string(), 0, &upstream));
    std::string why;
    front_ = bqtest::scheduling_front::start(upstream, why);
    ASSERT_TRUE(front_) << why;
  }
  /// An sb:// transport whose connection goes through the scheduling front.
  std::unique_ptr<babelqueue::asb::asb_transport> open_scheduled() {
    auto url = babelqueue::asb::url_from_connection_string(bqtest::asb_connection_string());
    EXPECT_TRUE(url);
    if (!url) return nullptr;
    auto via = bqtest::scheduling_front::through(*url, front_->port());
    EXPECT_TRUE(via) << "no 127.0.0.1:<port> in the stand-in's URL";
    if (!via) return nullptr;
    auto o = babelqueue::asb::options_from_url(babelqueue::broker_url::parse(*via).value());
    EXPECT_TRUE(o) << o.error().message;
    if (!o) return nullptr;
    auto t = babelqueue::asb::asb_transport::open(*o);
    EXPECT_TRUE(t) << t.error().message;
    if (!t) return nullptr;
    return std::move(*t);
  }
  std::unique_ptr<bqtest::scheduling_front> front_;
};

const proton::annotation_key scheduled_key{proton::symbol("x-opt-scheduled-enqueue-time")};

}  // namespace

TEST_F(AsbDelayedPublish, TheAnnotationIsATimestampAndTheMessageWaitsForIt) {
  auto t = open_scheduled();
  ASSERT_TRUE(t);
  EXPECT_TRUE(t->capabilities().delayed_publish);
  EXPECT_EQ(t->capabilities().max_delay, 0ms) << "no cap of the binding's own";
  const std::string body = envelope_text(21);
  const auto before = unix_now_ms();
  const auto started = std::chrono::steady_clock::now();
  auto sent = t->publish_delayed(queue_, body, {{"traceparent", "tp-delay"}}, 2s);
  ASSERT_TRUE(sent) << sent.error().message;
  const auto after = unix_now_ms();

  const auto seen = front_->seen();
  ASSERT_EQ(seen.size(), 1u) << "one x-opt-scheduled-enqueue-time on the wire";
  EXPECT_EQ(seen[0].amqp_type, 0x83) << "an AMQP timestamp (0x83)";
  EXPECT_GE(seen[0].value_ms, before + 2000) << "publish time + delay";
  EXPECT_LE(seen[0].value_ms, after + 2000);
  EXPECT_TRUE(seen[0].held) << seen[0].why;

  EXPECT_FALSE(peer_->get(queue_, 1s)) << "delivered within 1 s of a 2 s delay";
  auto m = peer_->get(queue_, 15s);
  ASSERT_TRUE(m) << "never delivered";
  EXPECT_GE(std::chrono::steady_clock::now() - started, 1900ms) << "delivered early";
  ASSERT_EQ(m->body().type(), proton::BINARY);
  EXPECT_EQ(std::string(proton::get<proton::binary>(m->body())), body) << "byte for byte";
  const proton::value at = m->message_annotations().get(scheduled_key);
  ASSERT_EQ(at.type(), proton::TIMESTAMP) << "as Service Bus consumers read ScheduledEnqueueTime";
  EXPECT_EQ(proton::get<proton::timestamp>(at).milliseconds(), seen[0].value_ms);
  ASSERT_TRUE(m->properties().exists("bq-delay"));
  EXPECT_EQ(m->properties().get("bq-delay").type(), proton::LONG) << "an AMQP long, as .NET/Java";
  EXPECT_EQ(proton::get<std::int64_t>(m->properties().get("bq-delay")), 2000);
  EXPECT_EQ(proton::get<std::int32_t>(m->properties().get("bq-schema-version")), 1);
  EXPECT_EQ(proton::get<std::string>(m->properties().get("traceparent")), "tp-delay");
}

TEST_F(AsbDelayedPublish, AZeroDelayIsAPlainPublishWithNoSchedule) {
  auto t = open_scheduled();
  ASSERT_TRUE(t);
  ASSERT_TRUE(t->publish_delayed(queue_, envelope_text(22), {}, 0ms));
  auto m = peer_->get(queue_, 5s);
  ASSERT_TRUE(m);
  EXPECT_TRUE(front_->seen().empty());
  EXPECT_FALSE(m->message_annotations().exists(scheduled_key));
  EXPECT_FALSE(m->properties().exists("bq-delay"));
}

TEST_F(AsbDelayedPublish, ADelayedReleaseIsScheduledTheSameWay) {
  auto t = open_scheduled();
  ASSERT_TRUE(t);
  const std::string body = envelope_text(23);
  ASSERT_TRUE(t->publish(queue_, body));
  auto got = t->receive(queue_, 5s);
  ASSERT_TRUE(got && got->has_value());
  const auto started = std::chrono::steady_clock::now();
  ASSERT_TRUE(t->release(**got, 1500ms));
  const auto seen = front_->seen();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].amqp_type, 0x83);
  EXPECT_TRUE(seen[0].held) << seen[0].why;
  auto none = t->receive(queue_, 800ms);
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value()) << "a release delayed by 1.5 s came back within 0.8 s";
  auto again = t->receive(queue_, 15s);
  ASSERT_TRUE(again && again->has_value());
  EXPECT_GE(std::chrono::steady_clock::now() - started, 1400ms);
  EXPECT_EQ((*again)->body, body);
  ASSERT_TRUE(t->ack(**again));
}

TEST_F(AsbDelayedPublish, ABadDelayIsRefusedBeforeTheWire) {
  auto t = open_scheduled();
  ASSERT_TRUE(t);
  auto r = t->publish_delayed(queue_, envelope_text(24), {}, -5ms);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.code(), transport_errc::invalid_argument);
  ASSERT_TRUE(t->close(std::chrono::steady_clock::now() + 5s));
  auto closed = t->publish_delayed(queue_, envelope_text(24), {}, 1s);
  ASSERT_FALSE(closed);
  EXPECT_EQ(closed.code(), transport_errc::closed);
  EXPECT_TRUE(front_->seen().empty());
  EXPECT_FALSE(peer_->get(queue_, 1s));
}

// The stand-in's own check: Service Bus schedules only on a timestamp. A long-typed annotation
// (a plausible client bug) is recorded and NOT held, so the delay tests above would catch it.
TEST_F(AsbDelayedPublish, TheStandInHoldsOnlyATimestamp) {
  babelqueue::amqp10::client_config c;
  c.host = "127.0.0.1";
  c.port = front_->port();
  c.name = "raw";
  auto raw = babelqueue::amqp10::client::open(c);
  ASSERT_TRUE(raw) << raw.error().message;
  proton::message m;
  m.body(proton::binary(envelope_text(25)));
  const std::int64_t due = unix_now_ms() + 30000;
  m.message_annotations().put(scheduled_key, proton::value(due));  // an AMQP long
  std::vector<proton::message> one;
  one.push_back(std::move(m));
  ASSERT_TRUE((*raw)->send(queue_, std::move(one), std::chrono::steady_clock::now() + 10s));
  const auto seen = front_->seen();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].amqp_type, 0x81);
  EXPECT_EQ(seen[0].value_ms, due);
  EXPECT_FALSE(seen[0].held);
  EXPECT_NE(seen[0].why.find("timestamp"), std::string::npos) << seen[0].why;
  EXPECT_TRUE(peer_->get(queue_, 5s)) << "not held: delivered at once, as by Service Bus";
  (void)(*raw)->close(std::chrono::steady_clock::now() + 5s);
}
