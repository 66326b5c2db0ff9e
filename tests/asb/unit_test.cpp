// sb:// without a broker: URL and connection string → options, option checks, and the
// proton::message the projection builds and reads (the same code the transport uses).
#include "amqp10/cbs_reply.hpp"
#include "asb/message.hpp"

#include <babelqueue/asb/asb_transport.hpp>
#include <babelqueue/bindings/asb.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/runtime/url.hpp>

#include <gtest/gtest.h>
#include <proton/annotation_key.hpp>
#include <proton/binary.hpp>
#include <proton/message_id.hpp>
#include <proton/scalar.hpp>
#include <proton/symbol.hpp>
#include <proton/timestamp.hpp>
#include <proton/type_id.hpp>
#include <proton/value.hpp>

using namespace std::chrono_literals;
using babelqueue::transport_errc;
namespace asb = babelqueue::asb;

namespace {

babelqueue::result<asb::options> parse(const std::string& url) {
  auto u = babelqueue::broker_url::parse(url);
  if (!u) return babelqueue::fail(u.error());
  return asb::options_from_url(*u);
}

std::string envelope() {
  babelqueue::make_options mo;
  mo.queue = "orders";
  mo.trace_id = "trace-1";
  auto env = babelqueue::make("urn:babel:orders:created", babelqueue::json{{"id", 1}}, mo).value();
  return babelqueue::encode(env).value();
}

}  // namespace

TEST(AsbOptions, UrlWithAKeyPairAndDefaults) {
  auto o = parse("sb://RootManageSharedAccessKey:a%2Bb%2Fc%3D@ns.servicebus.windows.net");
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_EQ(o->host, "ns.servicebus.windows.net");
  EXPECT_EQ(o->port, 5671) << "TLS";
  EXPECT_FALSE(o->emulator);
  EXPECT_EQ(o->key_name, "RootManageSharedAccessKey");
  EXPECT_EQ(o->key, "a+b/c=") << "the base64 key, percent-decoded";
  EXPECT_EQ(o->prefetch, 1) << "locks tick: no prefetch by default";
  auto emu = parse("sb://k:v@127.0.0.1?emulator=true&prefetch=4&token_ttl=10m");
  ASSERT_TRUE(emu) << emu.error().message;
  EXPECT_TRUE(emu->emulator);
  EXPECT_EQ(emu->port, 5672);
  EXPECT_EQ(emu->prefetch, 4);
  EXPECT_EQ(emu->token_ttl, std::chrono::seconds(600));
  EXPECT_FALSE(emu->tls) << "the emulator speaks no TLS";
  EXPECT_TRUE(o->tls);
  // The flag that turns TLS off, named for what it does.
  auto plain = parse("sb://k:v@standin.local?tls=false");
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_FALSE(plain->tls);
  EXPECT_FALSE(plain->emulator);
  EXPECT_EQ(plain->port, 5672);
  EXPECT_FALSE(parse("sb://k:v@standin.local?tls=false&tls_ca_file=/ca.pem")) << "tls_* need TLS";
}

TEST(AsbOptions, CredentialsAreCheckedWithoutEchoingThem) {
  for (const char* bad :
       {"sb://ns.example", "sb://k@ns.example", "sb://:v@ns.example",
        "sb://k:v@ns.example?sas_token=SharedAccessSignature%20sr%3Dx",
        "sb://ns.example?sas_token=not-a-token", "sb://k:v@ns.example/q",
        "sb://k:v@ns.example?emulator=true&tls_verify=false", "sb://k:v@ns.example?prefetch=0",
        "sb://k:v@ns.example?token_ttl=500ms", "sb://k:v@ns.example?nope=1"}) {
    auto r = parse(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.code(), babelqueue::condition::invalid_argument) << bad;
    EXPECT_EQ(r.error().message.find("not-a-token"), std::string::npos);
  }
  auto token = parse("sb://ns.example?sas_token=SharedAccessSignature%20sr%3Dx%26sig%3Dy");
  ASSERT_TRUE(token) << token.error().message;
  EXPECT_EQ(token->sas_token, "SharedAccessSignature sr=x&sig=y");
}

TEST(AsbOptions, AConnectionStringBecomesOptionsAndAUrl) {
  const std::string cs =
      "Endpoint=sb://127.0.0.1:5772;SharedAccessKeyName=RootManageSharedAccessKey;"
      "SharedAccessKey=SAS+KEY/VALUE=;UseDevelopmentEmulator=true;EntityPath=orders";
  auto o = asb::options_from_connection_string(cs);
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_EQ(o->host, "127.0.0.1");
  EXPECT_EQ(o->port, 5772);
  EXPECT_TRUE(o->emulator);
  EXPECT_EQ(o->key, "SAS+KEY/VALUE=");
  EXPECT_EQ(o->entity_path, "orders");
  auto url = asb::url_from_connection_string(cs);
  ASSERT_TRUE(url) << url.error().message;
  auto again = parse(*url);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->key, o->key) << *url;
  EXPECT_EQ(again->port, 5772);
  EXPECT_TRUE(again->emulator);
  EXPECT_EQ(again->entity_path, "orders");
  auto cloud = asb::options_from_connection_string(
      "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=k;SharedAccessKey=v");
  ASSERT_TRUE(cloud);
  EXPECT_EQ(cloud->port, 5671);
  EXPECT_FALSE(cloud->emulator);
  EXPECT_FALSE(asb::options_from_connection_string("Endpoint=sb://ns;Bogus=1"));
}

TEST(AsbMessage, TheProtonMessageCarriesTheProjection) {
  const std::string body = envelope();
  auto env = babelqueue::decode(body).value();
  proton::message m = asb::detail::to_message(body, {{"traceparent", "tp"}});
  ASSERT_EQ(m.body().type(), proton::BINARY) << "one data section";
  EXPECT_EQ(std::string(proton::get<proton::binary>(m.body())), body);
  EXPECT_EQ(m.subject(), "urn:babel:orders:created");
  EXPECT_EQ(proton::get<std::string>(m.correlation_id()), "trace-1");
  EXPECT_EQ(proton::get<std::string>(m.id()), std::string(env.id()));
  EXPECT_EQ(m.content_type(), "application/json");
  EXPECT_TRUE(m.durable()) << "a stand-in broker keeps it across a restart, as Service Bus";
  EXPECT_EQ(m.properties().get("bq-schema-version").type(), proton::INT) << "AMQP int";
  EXPECT_EQ(m.properties().get("bq-created-at").type(), proton::LONG) << "AMQP long";
  EXPECT_EQ(proton::get<std::int64_t>(m.properties().get("bq-created-at")), env.created_at());
  EXPECT_EQ(proton::get<std::string>(m.properties().get("bq-source-lang")), "cpp");
  EXPECT_EQ(proton::get<std::string>(m.properties().get("traceparent")), "tp");
  EXPECT_FALSE(m.message_annotations().exists(
      proton::annotation_key(proton::symbol("x-opt-scheduled-enqueue-time"))));

  babelqueue::received_message r;
  asb::detail::read_message(m, r);
  EXPECT_EQ(r.body, body);
  EXPECT_EQ(r.hdrs, (babelqueue::headers{{"traceparent", "tp"}}));
  EXPECT_EQ(r.delivery_count, 1) << "DeliveryCount = header + 1";
  EXPECT_FALSE(r.refused_schema_version);
}

TEST(AsbMessage, ADelayIsAScheduledEnqueueTimestampAndBqDelay) {
  proton::message m = asb::detail::to_message(envelope(), {}, 2500ms);
  const proton::annotation_key k(proton::symbol("x-opt-scheduled-enqueue-time"));
  ASSERT_TRUE(m.message_annotations().exists(k));
  EXPECT_EQ(m.message_annotations().get(k).type(), proton::TIMESTAMP);
  EXPECT_EQ(proton::get<std::int64_t>(m.properties().get("bq-delay")), 2500);
}

TEST(AsbMessage, PeersBodiesAndDeliveryCountsAreRead) {
  const std::string body = envelope();
  proton::message value;  // an amqp-value string (e.g. a Python str body over pyamqp)
  value.body(body);
  value.delivery_count(2);
  babelqueue::received_message r;
  asb::detail::read_message(value, r);
  EXPECT_EQ(r.body, body);
  EXPECT_EQ(r.delivery_count, 3);
  proton::message node;  // the Node adapter's JSON-stringified body
  node.body(proton::binary(babelqueue::json(body).dump()));
  EXPECT_EQ(asb::detail::body_of(node), body) << "a JSON string literal is unwrapped once";
  proton::message none;
  EXPECT_EQ(asb::detail::body_of(none), "");
}

TEST(AsbMessage, TheSchemaVersionPropertyGatesBeforeAnyDecode) {
  auto gate = [](const proton::scalar& v) {
    proton::message m;
    m.properties().put("bq-schema-version", v);
    return asb::detail::refused_schema_version(m);
  };
  EXPECT_FALSE(gate(proton::scalar(std::int32_t{1})));
  EXPECT_FALSE(gate(proton::scalar(std::int64_t{1})));
  EXPECT_FALSE(gate(proton::scalar(std::uint8_t{1})));
  EXPECT_FALSE(gate(proton::scalar(std::string("1"))));
  EXPECT_FALSE(gate(proton::scalar(std::string(" "))));
  EXPECT_EQ(gate(proton::scalar(std::int32_t{2})), "2");
  EXPECT_EQ(gate(proton::scalar(std::string("01"))), "01");
  EXPECT_TRUE(gate(proton::scalar(true)));
  EXPECT_TRUE(gate(proton::scalar(1.0)));
  // Refused values of other types name their type: none reads as the accepted "1" (fuzzing
  // found a double 1.0, a symbol "1" and a timestamp 1 refused as "1").
  for (const proton::scalar& v :
       {proton::scalar(1.0), proton::scalar(1.0F), proton::scalar(wchar_t{'1'}),
        proton::scalar(proton::symbol("1")), proton::scalar(proton::timestamp(1))}) {
    const auto refused = gate(v);
    ASSERT_TRUE(refused) << proton::type_name(v.type());
    EXPECT_NE(*refused, "1");
    EXPECT_EQ(refused->rfind(proton::type_name(v.type()) + ":", 0), 0U) << *refused;
  }
  proton::message absent;
  EXPECT_FALSE(asb::detail::refused_schema_version(absent));
}

TEST(CbsReply, OnlyTheAnswerToOurRequestWithStatus200Or202PutsTheToken) {
  namespace a10 = babelqueue::amqp10;
  auto reply = [](const proton::message_id& correlation, const proton::scalar& status,
                  const std::string& description) {
    proton::message m;
    m.correlation_id(correlation);
    m.properties().put("status-code", status);
    m.properties().put("status-description", proton::scalar(description));
    return m;
  };
  const auto ok = a10::read_cbs_reply(reply(proton::message_id(std::string("req-1")),
                                            proton::scalar(std::int32_t{202}), "Accepted"),
                                      "req-1");
  EXPECT_TRUE(ok.answers_request);
  EXPECT_TRUE(ok.accepted);
  EXPECT_EQ(ok.description, "Accepted");
  const auto refused = a10::read_cbs_reply(
      reply(proton::message_id(std::string("req-1")), proton::scalar(std::int64_t{401}), "no"),
      "req-1");
  EXPECT_TRUE(refused.answers_request);
  EXPECT_FALSE(refused.accepted);
  EXPECT_EQ(refused.status, 401);
  EXPECT_FALSE(a10::read_cbs_reply(reply(proton::message_id(std::string("req-2")),
                                         proton::scalar(std::int32_t{200}), ""),
                                   "req-1")
                   .answers_request)
      << "another request's answer";
  EXPECT_FALSE(
      a10::read_cbs_reply(
          reply(proton::message_id(std::uint64_t{1}), proton::scalar(std::int32_t{200}), ""), "1")
          .answers_request)
      << "a numeric correlation-id is not our string id";
  const auto text = a10::read_cbs_reply(
      reply(proton::message_id(std::string("req-1")), proton::scalar(std::string("200")),
            std::string(600, 'x') + "\xC3\xA9"),
      "req-1");
  EXPECT_FALSE(text.accepted) << "a status that is not an integer";
  EXPECT_EQ(text.description.size(), a10::max_cbs_description);
  const auto cut = a10::read_cbs_reply(
      reply(proton::message_id(std::string("req-1")), proton::scalar(std::int32_t{500}),
            std::string(511, 'x') + "\xC3\xA9"),
      "req-1");
  EXPECT_EQ(cut.description, std::string(511, 'x')) << "cut before a character, not inside";
}
