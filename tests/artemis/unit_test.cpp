// artemis:// without a broker: URL → options, option checks, and the proton::message the
// projection builds and reads (the same code the transport sends and receives with).
#include "artemis/message.hpp"

#include <babelqueue/artemis/artemis_transport.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/runtime/url.hpp>

#include <gtest/gtest.h>
#include <proton/annotation_key.hpp>
#include <proton/binary.hpp>
#include <proton/message_id.hpp>
#include <proton/scalar.hpp>
#include <proton/symbol.hpp>
#include <proton/timestamp.hpp>
#include <proton/value.hpp>

using namespace std::chrono_literals;
using babelqueue::transport_errc;
namespace artemis = babelqueue::artemis;

namespace {

babelqueue::result<artemis::options> parse(const std::string& url) {
  auto u = babelqueue::broker_url::parse(url);
  if (!u) return babelqueue::fail(u.error());
  return artemis::options_from_url(*u);
}

std::string envelope() {
  babelqueue::make_options mo;
  mo.queue = "orders";
  mo.trace_id = "trace-1";
  auto env = babelqueue::make("urn:babel:orders:created", babelqueue::json{{"id", 1}}, mo).value();
  return babelqueue::encode(env).value();
}

}  // namespace

TEST(ArtemisOptions, DefaultsAndUrlParts) {
  auto o = parse("artemis://admin:secret@broker.example:5673");
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_EQ(o->host, "broker.example");
  EXPECT_EQ(o->port, 5673);
  EXPECT_EQ(o->username, "admin");
  EXPECT_EQ(o->password, "secret");
  EXPECT_FALSE(o->tls);
  EXPECT_EQ(o->prefetch, 64);
  auto anonymous = parse("artemis://127.0.0.1");
  ASSERT_TRUE(anonymous);
  EXPECT_EQ(anonymous->port, 5672);
  EXPECT_TRUE(anonymous->username.empty()) << "no user: SASL ANONYMOUS";
  auto tls = parse("artemis+ssl://h?tls_ca_file=/ca.pem&tls_server_name=broker");
  ASSERT_TRUE(tls) << tls.error().message;
  EXPECT_TRUE(tls->tls);
  EXPECT_EQ(tls->port, 5671);
  EXPECT_EQ(tls->tls_ca_file, "/ca.pem");
  EXPECT_EQ(tls->tls_server_name, "broker");
}

TEST(ArtemisOptions, QueryKeysAreTypedAndUnknownOnesRefused) {
  auto o = parse(
      "artemis://h?prefetch=5&operation_timeout=2s&connect_timeout=500ms&idle_timeout=0"
      "&reconnect_backoff_min=50&reconnect_backoff_max=1s");
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_EQ(o->prefetch, 5);
  EXPECT_EQ(o->operation_timeout, 2s);
  EXPECT_EQ(o->connect_timeout, 500ms);
  EXPECT_EQ(o->idle_timeout, 0ms);
  EXPECT_EQ(o->reconnect_backoff_max, 1s);
  for (const char* bad :
       {"artemis://h?prefetch=0", "artemis://h?prefetch=10001", "artemis://h?operation_timeout=0",
        "artemis://h?nope=1", "artemis://h?tls_ca_file=/ca.pem", "artemis://h/orders",
        "artemis://h?reconnect_backoff_min=2s&reconnect_backoff_max=1s", "artemis://:pw@h"}) {
    auto r = parse(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.code(), babelqueue::condition::invalid_argument) << bad;
  }
}

TEST(ArtemisOptions, DurableIsOnByDefaultAndTheUrlCanTurnItOff) {
  auto o = parse("artemis://h");
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_TRUE(o->durable) << "the C++ default: durable messages";
  EXPECT_TRUE(artemis::options{}.durable);
  for (const char* off : {"artemis://h?durable=false", "artemis://h?durable=0",
                          "artemis://h?durable=no", "artemis://h?durable=OFF"}) {
    auto r = parse(off);
    ASSERT_TRUE(r) << off << ": " << r.error().message;
    EXPECT_FALSE(r->durable) << off;
  }
  for (const char* on : {"artemis://h?durable=true", "artemis://h?durable=1",
                         "artemis://h?durable=yes", "artemis+ssl://h?durable=on"}) {
    auto r = parse(on);
    ASSERT_TRUE(r) << on << ": " << r.error().message;
    EXPECT_TRUE(r->durable) << on;
  }
  for (const char* bad :
       {"artemis://h?durable=maybe", "artemis://h?durable=", "artemis://h?durable=2"}) {
    auto r = parse(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.code(), babelqueue::condition::invalid_argument) << bad;
    EXPECT_NE(r.error().message.find("durable"), std::string::npos) << r.error().message;
  }
}

TEST(ArtemisOptions, OpenChecksCodeBuiltOptionsLikeTheUrl) {
  artemis::options o;
  o.tls_ca_file = "/ca.pem";  // without tls
  auto t = artemis::artemis_transport::open(o);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.code(), transport_errc::invalid_argument);
}

TEST(ArtemisMessage, TheProtonMessageCarriesTheProjection) {
  const std::string body = envelope();
  proton::message m = artemis::detail::to_message(body, {{"traceparent", "tp"}});
  ASSERT_EQ(m.body().type(), proton::STRING);
  EXPECT_EQ(proton::get<std::string>(m.body()), body);
  EXPECT_TRUE(m.durable());
  EXPECT_EQ(m.subject(), "urn:babel:orders:created");
  EXPECT_EQ(proton::get<std::string>(m.correlation_id()), "trace-1");
  EXPECT_EQ(m.content_type(), "application/json");
  EXPECT_EQ(proton::get<std::string>(m.properties().get("bq_attempts")), "0");
  EXPECT_EQ(proton::get<std::string>(m.properties().get("traceparent")), "tp");
  EXPECT_FALSE(m.message_annotations().exists(
      proton::annotation_key(proton::symbol("x-opt-delivery-time"))));
  EXPECT_EQ(artemis::detail::headers_of(m), (babelqueue::headers{{"traceparent", "tp"}}));
  EXPECT_EQ(artemis::detail::body_of(m), body);
}

TEST(ArtemisMessage, DurableFalseClearsOnlyTheDurableHeader) {
  const std::string body = envelope();
  proton::message m = artemis::detail::to_message(body, {{"traceparent", "tp"}}, std::nullopt,
                                                  /*durable=*/false);
  EXPECT_FALSE(m.durable());
  EXPECT_EQ(m.subject(), "urn:babel:orders:created") << "the rest of the projection is unchanged";
  EXPECT_EQ(proton::get<std::string>(m.properties().get("traceparent")), "tp");
  EXPECT_FALSE(artemis::detail::to_message(body, {}, 2500ms, false).durable()) << "delayed too";
  EXPECT_TRUE(artemis::detail::to_message(body, {}, std::nullopt, true).durable());
}

TEST(ArtemisMessage, ADelayIsAnAmqpLongDeliveryTimeAndBqDelay) {
  proton::message m = artemis::detail::to_message(envelope(), {}, 2500ms);
  const proton::annotation_key k(proton::symbol("x-opt-delivery-time"));
  ASSERT_TRUE(m.message_annotations().exists(k));
  EXPECT_EQ(m.message_annotations().get(k).type(), proton::LONG) << "Artemis casts to Number";
  EXPECT_EQ(proton::get<std::string>(m.properties().get("bq_delay")), "2500");
}

TEST(ArtemisMessage, APoisonBodyIsSentAsItIsWithTheFixedPartsOnly) {
  const std::string poison("\xff\xfe not json", 11);
  proton::message m = artemis::detail::to_message(poison, {});
  EXPECT_EQ(artemis::detail::body_of(m), poison);
  EXPECT_TRUE(m.subject().empty());
  EXPECT_EQ(proton::get<std::string>(m.properties().get("bq_app_id")), "babelqueue");
}

TEST(ArtemisMessage, BodiesOfEveryShapeAreReadWithoutLoss) {
  proton::message bin;
  bin.body(proton::binary(std::string("raw\0bytes", 9)));
  EXPECT_EQ(artemis::detail::body_of(bin), std::string("raw\0bytes", 9));
  proton::message number;
  number.body(proton::value(42));
  EXPECT_EQ(artemis::detail::body_of(number), "42") << "not an envelope: dead-lettered as text";
  proton::message none;  // no body section: Proton's printer throws on it (found by fuzzing)
  EXPECT_EQ(artemis::detail::body_of(none), "");
}
