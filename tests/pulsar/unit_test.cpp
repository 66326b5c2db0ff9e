// pulsar:// without a server: URL → options, validation, the pulsar::Result mapping, the
// pure binding (projection, topic names, the read side of properties, reconciliation), and a
// client that is created lazily (open makes no network call).
#include "pulsar/errors.hpp"

#include <babelqueue/bindings/pulsar.hpp>
#include <babelqueue/pulsar/pulsar_transport.hpp>

#include <gtest/gtest.h>

using babelqueue::transport_errc;
namespace bp = babelqueue::bindings::pulsar;
namespace bpl = babelqueue::pulsar;

namespace {

babelqueue::result<bpl::options> parse(const std::string& url) {
  auto u = babelqueue::broker_url::parse(url);
  if (!u) return babelqueue::fail(u.error());
  return bpl::options_from_url(*u);
}

}  // namespace

TEST(PulsarOptions, DefaultsAreTheDocumentedOnes) {
  auto o = parse("pulsar://broker.example");
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_EQ(o->host, "broker.example");
  EXPECT_EQ(o->port, 6650);
  EXPECT_FALSE(o->tls);
  EXPECT_EQ(o->subscription, "babelqueue");
  EXPECT_EQ(o->subscription_type, bpl::subscription_kind::shared);
  EXPECT_EQ(o->initial_position, "earliest");
  EXPECT_EQ(o->tenant, "public");
  EXPECT_EQ(o->namespace_, "default");
  EXPECT_EQ(o->receiver_queue, 1000);
  EXPECT_EQ(o->ack_timeout.count(), 0);
  EXPECT_EQ(o->negative_ack_delay, std::chrono::seconds(1)) << "not the client's 60 s";
  EXPECT_EQ(o->max_redeliver, 0);
  EXPECT_TRUE(o->ensure_subscription);
  EXPECT_TRUE(o->batching);
  EXPECT_EQ(o->compression, "none");
  auto tls = parse("pulsar+ssl://broker.example");
  ASSERT_TRUE(tls) << tls.error().message;
  EXPECT_TRUE(tls->tls);
  EXPECT_EQ(tls->port, 6651);
  EXPECT_TRUE(tls->tls_verify);
}

TEST(PulsarOptions, EveryKeyMapsOntoItsField) {
  auto o = parse(
      "pulsar+ssl://localhost:7000?subscription=workers&subscription_type=Key_Shared"
      "&initial_position=LATEST&tenant=acme&namespace=orders&receiver_queue=10&ack_timeout=30s"
      "&negative_ack_delay=250ms&max_redeliver=4&ensure_subscription=false&batching=false"
      "&batch_max_messages=50&batch_delay=2ms&compression=ZSTD&connect_timeout=2s"
      "&operation_timeout=5s&token=abc.def.ghi&io_threads=2&tls_ca_file=/ca.pem"
      "&tls_cert_file=/c.pem&tls_key_file=/k.pem&tls_verify=false");
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_EQ(o->port, 7000);
  EXPECT_EQ(o->subscription, "workers");
  EXPECT_EQ(o->subscription_type, bpl::subscription_kind::key_shared);
  EXPECT_EQ(o->initial_position, "latest");
  EXPECT_EQ(o->tenant, "acme");
  EXPECT_EQ(o->namespace_, "orders");
  EXPECT_EQ(o->receiver_queue, 10);
  EXPECT_EQ(o->ack_timeout, std::chrono::seconds(30));
  EXPECT_EQ(o->negative_ack_delay, std::chrono::milliseconds(250));
  EXPECT_EQ(o->max_redeliver, 4);
  EXPECT_FALSE(o->ensure_subscription);
  EXPECT_FALSE(o->batching);
  EXPECT_EQ(o->batch_max_messages, 50);
  EXPECT_EQ(o->batch_delay, std::chrono::milliseconds(2));
  EXPECT_EQ(o->compression, "zstd");
  EXPECT_EQ(o->connect_timeout, std::chrono::seconds(2));
  EXPECT_EQ(o->operation_timeout, std::chrono::seconds(5));
  EXPECT_EQ(o->token, "abc.def.ghi");
  EXPECT_EQ(o->io_threads, 2);
  EXPECT_EQ(o->tls_ca_file, "/ca.pem");
  EXPECT_EQ(o->tls_cert_file, "/c.pem");
  EXPECT_EQ(o->tls_key_file, "/k.pem");
  EXPECT_FALSE(o->tls_verify);
}

TEST(PulsarOptions, MistakesAreRefusedNamingTheKey) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"pulsar://h?subscription_type=round_robin", "subscription_type"},
      {"pulsar://h?initial_position=middle", "initial_position"},
      {"pulsar://h?tenant=a/b", "tenant"},
      {"pulsar://h?namespace=", "namespace"},
      {"pulsar://h?receiver_queue=-1", "receiver_queue"},
      {"pulsar://h?receiver_queue=0", "receiver_queue"},
      {"pulsar://h?ack_timeout=5s", "ack_timeout"},
      {"pulsar://h?max_redeliver=-2", "max_redeliver"},
      {"pulsar://h?batch_max_messages=0", "batch_max_messages"},
      {"pulsar://h?compression=brotli", "compression"},
      {"pulsar://h?operation_timeout=0s", "operation_timeout"},
      {"pulsar://h?token=a&token_file=/t", "token"},
      {"pulsar://h?io_threads=99", "io_threads"},
      {"pulsar://h?tls_ca_file=/ca.pem", "tls"},
      {"pulsar+ssl://h?tls_cert_file=/c.pem", "tls_cert_file"},
      {"pulsar://user:secret@h", "token"},
      {"pulsar://h/path", "path"},
      {"pulsar://h?subscripton=typo", "subscripton"},
      {"kafka://h", "pulsar"},
  };
  for (const auto& [url, key] : bad) {
    auto o = parse(url);
    ASSERT_FALSE(o) << url;
    EXPECT_EQ(o.code(), babelqueue::condition::invalid_argument)
        << url << ": " << o.error().message;
    EXPECT_NE(o.error().message.find(key), std::string::npos) << url << ": " << o.error().message;
    EXPECT_EQ(o.error().message.find("secret"), std::string::npos) << "never the password";
  }
  auto sni = parse("pulsar+ssl://h?tls_server_name=other");
  ASSERT_FALSE(sni);
  EXPECT_EQ(sni.error().code, transport_errc::not_supported);
}

TEST(PulsarOptions, OpenMakesNoNetworkCallAndAMissingTokenFileFails) {
  bpl::options o;
  o.host = "127.0.0.1";
  o.port = 1;
  auto t = bpl::pulsar_transport::open(o);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ((*t)->scheme(), "pulsar");
  EXPECT_EQ((*t)->topic_of("orders"), "persistent://public/default/orders");
  o.token_file = "/nonexistent/token";
  auto bad = bpl::pulsar_transport::open(o);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, transport_errc::invalid_argument);
  o.token_file.clear();
  o.subscription_type = bpl::subscription_kind::failover;
  auto failover = bpl::pulsar_transport::open(o);
  ASSERT_TRUE(failover);
  EXPECT_FALSE((*failover)->capabilities().native_delay) << "Pulsar delays only on Shared";
}

TEST(PulsarErrors, ResultsMapOntoTransportCodes) {
  namespace pd = babelqueue::pulsar::detail;
  EXPECT_EQ(pd::errc_of(pulsar::ResultTimeout), transport_errc::timeout);
  EXPECT_EQ(pd::errc_of(pulsar::ResultConnectError), transport_errc::unavailable);
  EXPECT_EQ(pd::errc_of(pulsar::ResultLookupError), transport_errc::unavailable);
  EXPECT_EQ(pd::errc_of(pulsar::ResultServiceUnitNotReady), transport_errc::unavailable);
  EXPECT_EQ(pd::errc_of(pulsar::ResultAuthenticationError), transport_errc::permission);
  EXPECT_EQ(pd::errc_of(pulsar::ResultAuthorizationError), transport_errc::permission);
  EXPECT_EQ(pd::errc_of(pulsar::ResultMessageTooBig), transport_errc::too_large);
  EXPECT_EQ(pd::errc_of(pulsar::ResultTopicNotFound), transport_errc::not_found);
  EXPECT_EQ(pd::errc_of(pulsar::ResultInvalidTopicName), transport_errc::invalid_argument);
  EXPECT_EQ(pd::errc_of(pulsar::ResultConsumerBusy), transport_errc::refused);
  EXPECT_EQ(pd::errc_of(pulsar::ResultTopicTerminated), transport_errc::refused);
  auto e = pd::pulsar_error(pulsar::ResultMessageTooBig, "publish to 'x'");
  ASSERT_TRUE(e.native);
  EXPECT_EQ(e.native->source, "pulsar");
  EXPECT_EQ(e.native->code, static_cast<std::int64_t>(pulsar::ResultMessageTooBig));
  EXPECT_NE(e.message.find("publish to 'x'"), std::string::npos);
}

TEST(PulsarBinding, ProjectionWritesTheSixPropertiesAndTheEventTime) {
  babelqueue::make_options mo;
  mo.trace_id = "t-1";
  auto env = babelqueue::make("urn:babel:a:b", babelqueue::json{{"k", 1}}, mo).value();
  const std::string body = babelqueue::encode(env).value();
  auto p = bp::project(body, {{"traceparent", "tp"}, {"bq-trace-id", "ignored"}, {" ", "blank"}});
  EXPECT_EQ(*p.property("bq-job"), "urn:babel:a:b");
  EXPECT_EQ(*p.property("bq-trace-id"), "t-1");
  EXPECT_EQ(*p.property("bq-attempts"), "0");
  EXPECT_EQ(*p.property("traceparent"), "tp");
  EXPECT_EQ(p.properties.size(), 7u);
  EXPECT_EQ(p.event_time_ms, env.created_at());
  auto poison = bp::project("not json", {{"traceparent", "tp"}});
  EXPECT_EQ(poison.properties.size(), 1u) << "a poison body carries the out-of-band ones only";
  EXPECT_FALSE(poison.event_time_ms);
}

TEST(PulsarBinding, ReconcileIsTheMaxWithNoMinusOne) {
  EXPECT_EQ(bp::reconcile_attempts(0, std::nullopt), 0);
  EXPECT_EQ(bp::reconcile_attempts(2, std::nullopt), 2);
  EXPECT_EQ(bp::reconcile_attempts(0, 2), 2);
  EXPECT_EQ(bp::reconcile_attempts(5, 1), 5);
  EXPECT_EQ(bp::reconcile_attempts(3, -4), 3) << "a negative count is ignored";
}

TEST(PulsarBinding, TopicNamesAndQueueNameRules) {
  EXPECT_EQ(bp::topic_name("orders"), "persistent://public/default/orders");
  EXPECT_EQ(bp::topic_name("orders", "acme", "prod"), "persistent://acme/prod/orders");
  EXPECT_EQ(bp::topic_name("non-persistent://a/b/c"), "non-persistent://a/b/c");
  EXPECT_EQ(bp::dead_letter_queue("orders"), "orders.dlq");
  EXPECT_FALSE(bp::invalid_queue_name("orders.dlq"));
  EXPECT_FALSE(bp::invalid_queue_name("persistent://a/b/c"));
  EXPECT_TRUE(bp::invalid_queue_name(""));
  EXPECT_TRUE(bp::invalid_queue_name("a/b"));
  EXPECT_TRUE(bp::invalid_queue_name("a b"));
  EXPECT_TRUE(bp::invalid_queue_name(std::string(256, 'q')));
}

TEST(PulsarBinding, TheReadSideSplitsHeadersAndGates) {
  std::map<std::string, std::string> props = {
      {"bq-job", "urn:babel:a:b"},  {"bq-attempts", "2"},  {"bq-delay", "500"},
      {"bq-schema-version", "1.0"}, {"traceparent", "tp"}, {"tenant", "acme"}};
  auto r = bp::read_properties(props);
  EXPECT_EQ(r.out_of_band, (babelqueue::headers{{"tenant", "acme"}, {"traceparent", "tp"}}));
  EXPECT_EQ(r.refused_schema_version, std::optional<std::string>("1.0"));
  props["bq-schema-version"] = "1";
  EXPECT_FALSE(bp::read_properties(props).refused_schema_version);
  props["bq-schema-version"] = " \t";
  EXPECT_FALSE(bp::read_properties(props).refused_schema_version) << "blank: decode normally";
  props["bq-schema-version"] = " 1";
  EXPECT_TRUE(bp::read_properties(props).refused_schema_version) << "compared as-is";
}

// Exclusive and Failover subscriptions dispatch a delayed message at once, so a transport on
// one refuses a delay before anything is sent (open made no connection: port 1 answers
// nothing, and a send would fail with unavailable, not not_supported).
TEST(PulsarOptions, ADelayIsRefusedOnExclusiveAndFailoverSubscriptions) {
  using namespace std::chrono_literals;
  bpl::options o;
  o.host = "127.0.0.1";
  o.port = 1;
  for (auto kind : {bpl::subscription_kind::shared, bpl::subscription_kind::key_shared,
                    bpl::subscription_kind::failover, bpl::subscription_kind::exclusive}) {
    o.subscription_type = kind;
    auto t = bpl::pulsar_transport::open(o);
    ASSERT_TRUE(t) << t.error().message;
    const bool delays =
        kind == bpl::subscription_kind::shared || kind == bpl::subscription_kind::key_shared;
    const auto caps = (*t)->capabilities();
    EXPECT_EQ(caps.delayed_publish, delays);
    EXPECT_EQ(caps.max_delay, 0ms) << "no cap of the binding's own";
    EXPECT_EQ(caps.delay_granularity, 0ms);
    EXPECT_EQ((*t)->publish_delayed("orders", "{}", {}, -1ms).code(),
              transport_errc::invalid_argument);
    if (!delays) {
      EXPECT_EQ((*t)->publish_delayed("orders", "{}", {}, 1s).code(),
                transport_errc::not_supported);
      EXPECT_EQ((*t)->publish_after("orders", "{}", 1s).code(), transport_errc::not_supported);
    }
    ASSERT_TRUE((*t)->close(std::chrono::steady_clock::now() + 5s));
    EXPECT_EQ((*t)->publish_delayed("orders", "{}", {}, 1s).code(), transport_errc::closed);
    EXPECT_EQ((*t)->publish_after("orders", "{}", 1s).code(), transport_errc::closed);
  }
}
