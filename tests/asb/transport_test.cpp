// sb:// against the Service Bus stand-in (Artemis + a CBS responder that verifies SAS
// tokens): the CBS exchange and token renewal, refused keys, the projection a bare AMQP peer
// reads, PeekLock settlement and DeliveryCount, native dead-lettering, the schema gate, the
// D5 runtime rules. What a stand-in cannot prove is listed in docs/transports/asb.md.
#include "asb/asb_fixture.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/runtime/app.hpp>

#include <proton/binary.hpp>
#include <proton/message_id.hpp>
#include <proton/scalar.hpp>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

using namespace std::chrono_literals;
using babelqueue::transport_errc;
using bqtest::envelope_text;

namespace {

class AsbTransport : public bqtest::AsbTest {};

std::string cbs_log() {
  std::ifstream in(bqtest::env_or_empty("BABELQUEUE_ASB_CBS_LOG"));
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_F(AsbTransport, OpenPutsAVerifiedTokenAndMessagesRoundTrip) {
  auto t = open();
  ASSERT_TRUE(t);
  EXPECT_GE(t->stats().tokens_put, 1) << "CBS put-token accepted before any entity link";
  const std::string body = envelope_text(1);
  ASSERT_TRUE(t->publish(queue_, body, {{"traceparent", "tp-1"}}));
  auto got = t->receive(queue_, 5s);
  ASSERT_TRUE(got && got->has_value()) << (got ? "nothing" : got.error().message);
  EXPECT_EQ((*got)->body, body);
  EXPECT_EQ((*got)->hdrs, (babelqueue::headers{{"traceparent", "tp-1"}}));
  EXPECT_EQ((*got)->delivery_count, 1) << "DeliveryCount, 1-based";
  EXPECT_FALSE((*got)->refused_schema_version);
  ASSERT_TRUE(t->ack(**got));
  auto none = t->receive(queue_, 0ms);
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());
  const std::string log = cbs_log();
  EXPECT_NE(log.find("sb://127.0.0.1/"), std::string::npos) << "the namespace audience";
}

TEST_F(AsbTransport, AWrongKeyIsAPermissionErrorWithoutTheKey) {
  auto o = options();
  ASSERT_TRUE(o);
  o->key = "V3JvbmdLZXlWM0pvYm1kTFpYaz0=";
  auto t = babelqueue::asb::asb_transport::open(*o);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.code(), transport_errc::permission) << t.error().message;
  EXPECT_EQ(t.error().message.find(o->key), std::string::npos);
}

TEST_F(AsbTransport, TheTokenIsRenewedBeforeItExpires) {
  auto t = open("token_ttl=2s");
  ASSERT_TRUE(t);
  const auto first = t->stats().tokens_put;
  std::this_thread::sleep_for(3500ms);
  EXPECT_GT(t->stats().tokens_put, first) << "renewed at 3/4 of its lifetime";
  const std::string body = envelope_text(2);
  ASSERT_TRUE(t->publish(queue_, body)) << "still authorised after the first token expired";
  auto got = t->receive(queue_, 5s);
  ASSERT_TRUE(got && got->has_value());
  ASSERT_TRUE(t->ack(**got));
}

TEST_F(AsbTransport, PublishCarriesTheAsbProjectionAsABarePeerReadsIt) {
  auto t = open();
  ASSERT_TRUE(t);
  const std::string body = envelope_text(3);
  auto env = babelqueue::decode(body).value();
  ASSERT_TRUE(t->publish(queue_, body));
  auto m = peer_->get(queue_);
  ASSERT_TRUE(m);
  ASSERT_EQ(m->body().type(), proton::BINARY) << "one data section";
  EXPECT_EQ(std::string(proton::get<proton::binary>(m->body())), body);
  EXPECT_EQ(m->subject(), "urn:babel:test:item");
  EXPECT_EQ(proton::get<std::string>(m->id()), std::string(env.id()));
  EXPECT_EQ(proton::get<std::string>(m->correlation_id()), std::string(env.trace_id()));
  EXPECT_EQ(m->content_type(), "application/json");
  EXPECT_EQ(m->properties().get("bq-schema-version").type(), proton::INT);
  EXPECT_EQ(proton::get<std::int32_t>(m->properties().get("bq-schema-version")), 1);
  EXPECT_EQ(m->properties().get("bq-created-at").type(), proton::LONG);
  EXPECT_EQ(proton::get<std::string>(m->properties().get("bq-source-lang")), "cpp");
}

TEST_F(AsbTransport, AbandonBumpsDeliveryCountAndReconcileReadsIt) {
  auto t = open();
  ASSERT_TRUE(t);
  ASSERT_TRUE(t->publish(queue_, envelope_text(4)));
  for (std::int64_t dc = 1; dc <= 3; ++dc) {
    auto got = t->receive(queue_, 5s);
    ASSERT_TRUE(got && got->has_value());
    EXPECT_EQ((*got)->delivery_count, dc);
    EXPECT_EQ(t->reconcile_attempts(0, **got), dc - 1);
    if (dc < 3) {
      ASSERT_TRUE(t->release(**got));
    } else {
      ASSERT_TRUE(t->ack(**got));
    }
  }
}

TEST_F(AsbTransport, NativeDeadLetteringRejectsWithTheServiceBusCondition) {
  auto t = open();
  ASSERT_TRUE(t);
  ASSERT_TRUE(t->publish(queue_, envelope_text(5)));
  auto got = t->receive(queue_, 5s);
  ASSERT_TRUE(got && got->has_value());
  ASSERT_TRUE(t->dead_letter_natively(**got, "poison", "cannot decode"));
  auto again = t->receive(queue_, 1s);
  ASSERT_TRUE(again);
  EXPECT_FALSE(again->has_value()) << "rejected: moved to the broker's dead-letter address";
}

TEST_F(AsbTransport, AnUnsupportedSchemaVersionPropertyIsRefusedBeforeDecoding) {
  proton::message m;
  m.body(proton::binary(envelope_text(6)));
  m.properties().put("bq-schema-version", proton::scalar(std::int32_t{2}));
  ASSERT_TRUE(peer_->send(queue_, m));
  auto t = open();
  ASSERT_TRUE(t);
  auto got = t->receive(queue_, 5s);
  ASSERT_TRUE(got && got->has_value());
  EXPECT_EQ((*got)->refused_schema_version, "2");
  ASSERT_TRUE(t->ack(**got));
}

TEST_F(AsbTransport, TheAppRetriesAndDeadLettersOverServiceBus) {
  babelqueue::asb::register_transport();
  babelqueue::app_options o;
  o.queue = queue_;
  o.poll_timeout = 300ms;
  o.dead_letter = true;
  babelqueue::app app(
      babelqueue::asb::url_from_connection_string(bqtest::asb_connection_string()).value(), o);
  std::vector<std::int64_t> seen;
  app.handle("urn:babel:orders:created", [&](babelqueue::message& m) {
    seen.push_back(m.attempts());
    throw std::runtime_error("boom");
  });
  auto id = app.publish("urn:babel:orders:created", babelqueue::json{{"order_id", 1}},
                        {.queue = "", .trace_id = "trace-asb-1", .hdrs = {}});
  ASSERT_TRUE(id) << id.error().message;
  auto n = app.drain();
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(seen, (std::vector<std::int64_t>{0, 1, 2}));
  auto dlq = peer_->get(queue_ + ".dlq");
  ASSERT_TRUE(dlq);
  auto env = babelqueue::decode(std::string(proton::get<proton::binary>(dlq->body()))).value();
  EXPECT_EQ(env.attempts(), 3);
  EXPECT_EQ(env.trace_id(), "trace-asb-1");
  EXPECT_EQ(proton::get<std::string>(dlq->correlation_id()), "trace-asb-1");
}

TEST_F(AsbTransport, TlsToTheStandInWithItsCaWorksAndWithoutItIsRefused) {
  // The stand-in's broker also serves AMQP over TLS (the artemis amqps acceptor, the same
  // SASL ANONYMOUS + CBS): the SAS token goes inside TLS, the certificate checked against the
  // test CA and the name `localhost`.
  const std::string tls_url = bqtest::env_or_empty("BABELQUEUE_ARTEMIS_TLS_URL");
  const std::string ca = bqtest::env_or_empty("BABELQUEUE_ARTEMIS_TLS_CA");
  ASSERT_FALSE(tls_url.empty() || ca.empty()) << "services.sh exports the artemis TLS acceptor";
  auto tls_port = babelqueue::broker_url::parse(tls_url).value().port;
  ASSERT_TRUE(tls_port);
  auto o = options().value();
  o.emulator = false;
  o.tls = true;
  o.host = "localhost";
  o.port = *tls_port;
  o.tls_ca_file = ca;
  o.connect_timeout = 5s;
  auto t = babelqueue::asb::asb_transport::open(o);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_TRUE((*t)->security_warnings().empty());
  ASSERT_TRUE((*t)->publish(queue_, envelope_text(1)));
  auto got = (*t)->receive(queue_, 5s);
  ASSERT_TRUE(got && got->has_value()) << (got ? "nothing" : got.error().message);
  ASSERT_TRUE((*t)->ack(**got));
  ASSERT_TRUE((*t)->close(std::chrono::steady_clock::now() + 5s));

  o.tls_ca_file.clear();  // the system trust store does not know the test CA
  const auto t0 = std::chrono::steady_clock::now();
  auto stranger = babelqueue::asb::asb_transport::open(o);
  ASSERT_FALSE(stranger);
  EXPECT_EQ(stranger.code(), transport_errc::unavailable) << stranger.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
}
