// amqp:// URLs and options (no server): vhost decoding, defaults, typed keys, refusals.
#include <babelqueue/bindings/rabbitmq.hpp>
#include <babelqueue/error.hpp>
#include <babelqueue/rabbitmq/rabbitmq_transport.hpp>

#include <gtest/gtest.h>

using namespace std::chrono_literals;
namespace rmq = babelqueue::rabbitmq;

namespace {

babelqueue::result<rmq::options> parse(const std::string& url) {
  auto u = babelqueue::broker_url::parse(url);
  if (!u) return babelqueue::fail(u.error());
  return rmq::options_from_url(*u);
}

}  // namespace

TEST(RabbitOptions, DefaultsFollowTheAmqpUriConventions) {
  auto o = parse("amqp://rabbit.internal");
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_EQ(o->host, "rabbit.internal");
  EXPECT_EQ(o->port, 5672);
  EXPECT_EQ(o->vhost, "/");
  EXPECT_EQ(o->username, "guest");
  EXPECT_EQ(o->password, "guest");
  EXPECT_FALSE(o->tls);
  auto s = parse("amqps://u:p@h");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->port, 5671);
  EXPECT_TRUE(s->tls);
  EXPECT_EQ(s->username, "u");
  EXPECT_EQ(s->password, "p");
}

TEST(RabbitOptions, TheVhostIsThePercentDecodedPath) {
  EXPECT_EQ(parse("amqp://h/%2F")->vhost, "/");
  EXPECT_EQ(parse("amqp://h/")->vhost, "/");
  EXPECT_EQ(parse("amqp://h/orders")->vhost, "orders");
  EXPECT_EQ(parse("amqp://h/a%2Fb")->vhost, "a/b");
}

TEST(RabbitOptions, EveryQueryKeyIsTyped) {
  auto o = parse(
      "amqp://h/%2F?connect_timeout=2s&operation_timeout=1m&heartbeat=10s&prefetch=8&"
      "confirm_window=32&frame_max=65536&declare_queues=false&reconnect_backoff_min=50ms&"
      "reconnect_backoff_max=2s");
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_EQ(o->connect_timeout, 2s);
  EXPECT_EQ(o->operation_timeout, 60s);
  EXPECT_EQ(o->heartbeat, 10s);
  EXPECT_EQ(o->prefetch, 8);
  EXPECT_EQ(o->confirm_window, 32);
  EXPECT_EQ(o->frame_max, 65536);
  EXPECT_FALSE(o->declare_queues);
  EXPECT_EQ(o->reconnect_backoff_min, 50ms);
  EXPECT_EQ(o->reconnect_backoff_max, 2s);
  EXPECT_EQ(parse("amqp://h?heartbeat=0")->heartbeat, 0s);
}

TEST(RabbitOptions, BadValuesAndUnknownKeysAreRefusedWithTheirName) {
  for (const char* url :
       {"amqp://h?prefech=8", "amqp://h?prefetch=0", "amqp://h?prefetch=70000",
        "amqp://h?heartbeat=1500ms", "amqp://h?confirm_window=0", "amqp://h?frame_max=10",
        "amqp://h?operation_timeout=0",
        "amqp://h?reconnect_backoff_min=2s&reconnect_backoff_max=1s",
        "amqp://h?tls_ca_file=/ca.pem", "amqp://h?tls_verify=true",
        "amqps://h?tls_cert_file=/c.pem", "amqps://h?declare_queues=maybe", "redis://h"}) {
    auto o = parse(url);
    ASSERT_FALSE(o) << url;
    EXPECT_EQ(o.error().code, babelqueue::condition::invalid_argument) << url;
    EXPECT_FALSE(o.error().message.empty());
  }
  auto typo = parse("amqp://h?prefech=8");
  EXPECT_NE(typo.error().message.find("prefech"), std::string::npos) << typo.error().message;
}

TEST(RabbitOptions, OptionsBuiltInCodeGetTheSameChecks) {
  rmq::options o;
  o.prefetch = 0;
  auto t = rmq::rabbitmq_transport::open(o);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, babelqueue::condition::invalid_argument);
  rmq::options tls_on_plain;
  tls_on_plain.tls_ca_file = "/ca.pem";
  EXPECT_FALSE(rmq::rabbitmq_transport::open(tls_on_plain));
}

TEST(RabbitOptions, TheUrlIsRegisteredForBothSchemesAndRedacted) {
  rmq::register_transport();
  auto schemes = babelqueue::registered_schemes();
  EXPECT_NE(std::find(schemes.begin(), schemes.end(), "amqp"), schemes.end());
  EXPECT_NE(std::find(schemes.begin(), schemes.end(), "amqps"), schemes.end());
  EXPECT_EQ(babelqueue::redact_url("amqp://user:s3cret@h:5672/%2F"), "amqp://user:***@h:5672/%2F");
}

TEST(RabbitBinding, AnUndecodableBodyGetsOnlyTheFixedPropertiesAndItsHeaders) {
  namespace rb = babelqueue::bindings::rabbitmq;
  auto p = rb::project("not json", {{"traceparent", "t"}});
  EXPECT_FALSE(p.type);
  EXPECT_FALSE(p.correlation_id);
  EXPECT_FALSE(p.message_id);
  ASSERT_EQ(p.headers.size(), 1u);
  EXPECT_EQ(p.headers[0].first, "traceparent");
  EXPECT_EQ(p.content_type, "application/json");
  EXPECT_EQ(p.delivery_mode, 2);
}

TEST(RabbitBinding, AUrnLongerThanAShortStringIsLeftOutOfType) {
  namespace rb = babelqueue::bindings::rabbitmq;
  const std::string urn = "urn:babel:test:" + std::string(300, 'a');
  babelqueue::make_options mo;
  auto env = babelqueue::make(urn, babelqueue::json::object(), mo);
  ASSERT_TRUE(env) << env.error().message;
  auto p = rb::project(babelqueue::encode(*env).value());
  EXPECT_FALSE(p.type) << "an AMQP short string holds 255 bytes at most";
  EXPECT_TRUE(p.correlation_id);
  EXPECT_EQ(rb::reconcile_attempts(1, 3), 3);
  EXPECT_EQ(rb::reconcile_attempts(4, 3), 4);
  EXPECT_EQ(rb::reconcile_attempts(2, std::nullopt), 2);
  EXPECT_EQ(rb::dead_letter_queue("orders"), "orders.dlq");
}
