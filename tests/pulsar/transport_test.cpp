// pulsar:// against a real Pulsar standalone: the projection as a bare Pulsar client sees it,
// settlement (ack, negative ack with the redelivery count; delayed release:
// tests/transport_contract), delayed publish, batches, a 1 MiB message, the schema-version gate,
// the subscription made on first publish, the native DeadLetterPolicy, close handing unsettled
// messages back, and bad input.
#include "pulsar/pulsar_fixture.hpp"

#include <babelqueue/bindings/pulsar.hpp>

#include <set>
#include <thread>

using namespace std::chrono_literals;
using babelqueue::transport_errc;
namespace bp = babelqueue::bindings::pulsar;

namespace {

class PulsarTransport : public bqtest::PulsarTest {};

long n_of(const std::string& body) {
  return babelqueue::decode(body)->data().value().at("n").get<long>();
}

// The next message of `q` on `t`, or a test failure.
std::optional<babelqueue::received_message> next(babelqueue::pulsar::pulsar_transport& t,
                                                 const std::string& q,
                                                 std::chrono::milliseconds wait = 10s) {
  auto got = t.receive(q, wait);
  EXPECT_TRUE(got) << got.error().message;
  if (!got || !got->has_value()) return std::nullopt;
  return std::move(**got);
}

}  // namespace

TEST_F(PulsarTransport, APublishIsReadByABareClientWithTheContractProperties) {
  auto t = open();
  ASSERT_TRUE(t);
  babelqueue::make_options mo;
  mo.queue = queue_;
  mo.trace_id = "trace-pulsar-1";
  auto env =
      babelqueue::make("urn:babel:orders:created", babelqueue::json{{"order_id", 7}}, mo).value();
  const std::string body = babelqueue::encode(env).value();
  ASSERT_TRUE(
      t->publish(queue_, body,
                 {{"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
                  {"bq-job", "urn:babel:not:this"}}));
  auto raw = peer_->get(queue_);
  ASSERT_TRUE(raw);
  EXPECT_EQ(raw->payload, body) << "byte-identical payload";
  EXPECT_EQ(bqtest::property_of(*raw, "bq-job"), "urn:babel:orders:created") << "contract wins";
  EXPECT_EQ(bqtest::property_of(*raw, "bq-trace-id"), "trace-pulsar-1");
  EXPECT_EQ(bqtest::property_of(*raw, "bq-message-id"), std::string(env.id()));
  EXPECT_EQ(bqtest::property_of(*raw, "bq-schema-version"), "1");
  EXPECT_EQ(bqtest::property_of(*raw, "bq-source-lang"), "cpp");
  EXPECT_EQ(bqtest::property_of(*raw, "bq-attempts"), "0");
  EXPECT_EQ(bqtest::property_of(*raw, "traceparent"),
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
  EXPECT_EQ(raw->properties.size(), 7u);
  EXPECT_EQ(raw->event_time, static_cast<std::uint64_t>(*env.created_at()))
      << "event time = meta.created_at";
  EXPECT_EQ(raw->redelivery_count, 0);
}

TEST_F(PulsarTransport, ReceiveGivesTheBodyTheOutOfBandHeadersAndTheCount) {
  auto t = open();
  ASSERT_TRUE(t);
  const std::string body = bqtest::envelope_text(1);
  ASSERT_TRUE(t->publish(queue_, body, {{"tenant", "acme"}}));
  auto m = next(*t, queue_);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->body, body);
  EXPECT_EQ(m->queue, queue_);
  EXPECT_EQ(m->hdrs, (babelqueue::headers{{"tenant", "acme"}})) << "bq- properties are not headers";
  EXPECT_EQ(m->delivery_count, 0);
  EXPECT_FALSE(m->refused_schema_version);
  ASSERT_TRUE(t->ack(*m));
  auto again = t->receive(queue_, 1500ms);
  ASSERT_TRUE(again);
  EXPECT_FALSE(again->has_value()) << "acked: gone";
  EXPECT_EQ(t->stats().acked, 1);
}

TEST_F(PulsarTransport, ANegativeAckRedeliversWithTheCountGrowing) {
  auto t = open();
  ASSERT_TRUE(t);
  ASSERT_TRUE(t->publish(queue_, bqtest::envelope_text(3)));
  for (int expected = 0; expected < 3; ++expected) {
    auto m = next(*t, queue_);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->delivery_count, expected);
    EXPECT_EQ(t->reconcile_attempts(0, *m), expected) << "max(body, count), no -1";
    EXPECT_EQ(t->reconcile_attempts(5, *m), 5) << "never lowers the body's count";
    ASSERT_TRUE(t->release(*m));
  }
  auto last = next(*t, queue_);
  ASSERT_TRUE(last);
  ASSERT_TRUE(t->ack(*last));
  EXPECT_EQ(t->stats().nacked, 3);
}

TEST_F(PulsarTransport, PublishAfterDeliversLaterAndMirrorsTheDelay) {
  auto t = open();
  ASSERT_TRUE(t);
  ASSERT_TRUE(peer_->subscribe(queue_));
  const auto sent = std::chrono::steady_clock::now();
  ASSERT_TRUE(t->publish_after(queue_, bqtest::envelope_text(5), 2s));
  auto raw = peer_->get(queue_, 15s);
  ASSERT_TRUE(raw);
  EXPECT_GE(std::chrono::steady_clock::now() - sent, 1900ms);
  EXPECT_EQ(bqtest::property_of(*raw, "bq-delay"), "2000");
}

TEST_F(PulsarTransport, ABatchArrivesWholeAndInOrder) {
  auto t = open("batch_max_messages=100");
  ASSERT_TRUE(t);
  std::vector<babelqueue::outgoing_message> batch;
  for (long i = 0; i < 500; ++i)
    batch.push_back({bqtest::envelope_text(i), {{"k", std::to_string(i)}}});
  ASSERT_TRUE(t->publish_batch(queue_, batch));
  EXPECT_EQ(t->stats().published, 500);
  std::vector<long> got;
  while (got.size() < batch.size()) {
    auto m = next(*t, queue_);
    ASSERT_TRUE(m) << "after " << got.size();
    got.push_back(n_of(m->body));
    EXPECT_EQ(m->hdrs.at("k"), std::to_string(got.back()));
    ASSERT_TRUE(t->ack(*m));
  }
  for (long i = 0; i < 500; ++i) EXPECT_EQ(got[static_cast<std::size_t>(i)], i);
}

TEST_F(PulsarTransport, OneReleasedMessageOfABatchComesBackAlone) {
  // Batch-index acknowledgement: negatively acknowledging one message of a batch must not
  // redeliver its acknowledged neighbours.
  auto t = open();
  ASSERT_TRUE(t);
  std::vector<babelqueue::outgoing_message> batch;
  for (long i = 0; i < 10; ++i) batch.push_back({bqtest::envelope_text(i), {}});
  ASSERT_TRUE(t->publish_batch(queue_, batch));
  for (long i = 0; i < 10; ++i) {
    auto m = next(*t, queue_);
    ASSERT_TRUE(m);
    if (n_of(m->body) == 4) {
      ASSERT_TRUE(t->release(*m));
    } else {
      ASSERT_TRUE(t->ack(*m));
    }
  }
  auto back = next(*t, queue_);
  ASSERT_TRUE(back);
  EXPECT_EQ(n_of(back->body), 4);
  EXPECT_EQ(back->delivery_count, 1);
  ASSERT_TRUE(t->ack(*back));
  auto none = t->receive(queue_, 1500ms);
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value()) << "no neighbour redelivered";
}

TEST_F(PulsarTransport, AOneMebibyteMessageRoundTrips) {
  auto t = open();
  ASSERT_TRUE(t);
  babelqueue::make_options mo;
  mo.queue = queue_;
  auto env =
      babelqueue::make("urn:babel:test:big",
                       babelqueue::json{{"blob", std::string(std::size_t{1024} * 1024, 'x')}}, mo)
          .value();
  const std::string body = babelqueue::encode(env).value();
  ASSERT_GT(body.size(), 1024u * 1024u);
  ASSERT_TRUE(t->publish(queue_, body));
  auto m = next(*t, queue_);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->body, body);
  ASSERT_TRUE(t->ack(*m));
}

TEST_F(PulsarTransport, AMessageOverTheBrokersLimitIsTooLargeAndTheOthersStillGo) {
  auto t = open();
  ASSERT_TRUE(t);
  babelqueue::make_options mo;
  mo.queue = queue_;
  // The test broker's maxMessageSize is Pulsar's default, 5 MiB.
  auto env = babelqueue::make(
                 "urn:babel:test:huge",
                 babelqueue::json{{"blob", std::string(std::size_t{6} * 1024 * 1024, 'x')}}, mo)
                 .value();
  const std::string huge = babelqueue::encode(env).value();
  auto r = t->publish(queue_, huge);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, transport_errc::too_large) << r.error().message;
  std::vector<babelqueue::outgoing_message> batch = {
      {bqtest::envelope_text(1), {}}, {huge, {}}, {bqtest::envelope_text(3), {}}};
  auto each = t->publish_each(queue_, batch);
  ASSERT_EQ(each.size(), 3u);
  EXPECT_TRUE(each[0]);
  ASSERT_FALSE(each[1]);
  EXPECT_EQ(each[1].error().code, transport_errc::too_large);
  EXPECT_TRUE(each[2]);
  std::set<long> got;
  for (int i = 0; i < 2; ++i) {
    auto m = next(*t, queue_);
    ASSERT_TRUE(m);
    got.insert(n_of(m->body));
    ASSERT_TRUE(t->ack(*m));
  }
  EXPECT_EQ(got, (std::set<long>{1, 3}));
}

TEST_F(PulsarTransport, TheSchemaVersionGateReadsTheProperty) {
  auto t = open();
  ASSERT_TRUE(t);
  ASSERT_TRUE(peer_->subscribe(queue_));
  const std::string body = bqtest::envelope_text(1);
  ASSERT_TRUE(peer_->send(queue_, body, {{"bq-schema-version", "2"}}));
  ASSERT_TRUE(peer_->send(queue_, body, {{"bq-schema-version", " "}}));
  ASSERT_TRUE(peer_->send(queue_, body));
  auto refused = next(*t, queue_);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->refused_schema_version, std::optional<std::string>("2"));
  EXPECT_EQ(refused->body, body);
  for (int i = 0; i < 2; ++i) {
    auto ok = next(*t, queue_);
    ASSERT_TRUE(ok);
    EXPECT_FALSE(ok->refused_schema_version) << "blank or absent: decoded normally";
    EXPECT_TRUE(ok->hdrs.empty());
    ASSERT_TRUE(t->ack(*ok));
  }
  ASSERT_TRUE(t->ack(*refused));
}

TEST_F(PulsarTransport, MessagesPublishedBeforeAnyConsumerAreKept) {
  // The first publish makes sure the `babelqueue` subscription exists; without it Pulsar
  // would keep the messages for nobody.
  {
    auto producer = open();
    ASSERT_TRUE(producer);
    ASSERT_TRUE(producer->publish(queue_, bqtest::envelope_text(1)));
    EXPECT_EQ(producer->stats().subscriptions_ensured, 1);
  }
  auto consumer = open("initial_position=latest");
  ASSERT_TRUE(consumer);
  auto m = next(*consumer, queue_);
  ASSERT_TRUE(m) << "kept for the subscription";
  EXPECT_EQ(n_of(m->body), 1);
  ASSERT_TRUE(consumer->ack(*m));
}

TEST_F(PulsarTransport, AFullTopicNameIsTheSameQueue) {
  auto t = open();
  ASSERT_TRUE(t);
  EXPECT_EQ(t->topic_of(queue_), "persistent://public/default/" + queue_);
  ASSERT_TRUE(t->publish("persistent://public/default/" + queue_, bqtest::envelope_text(2)));
  auto m = next(*t, queue_);
  ASSERT_TRUE(m);
  EXPECT_EQ(n_of(m->body), 2);
  ASSERT_TRUE(t->ack(*m));
}

TEST_F(PulsarTransport, TheNativeDeadLetterPolicyMovesItToTheDlqTopic) {
  auto t = open("max_redeliver=1");
  ASSERT_TRUE(t);
  ASSERT_TRUE(peer_->subscribe(bp::dead_letter_queue(queue_)));
  const std::string body = bqtest::envelope_text(9);
  ASSERT_TRUE(t->publish(queue_, body));
  // Delivery 0 and redelivery 1 are negatively acknowledged; the client then moves it.
  for (int i = 0; i < 2; ++i) {
    auto m = next(*t, queue_);
    ASSERT_TRUE(m);
    ASSERT_TRUE(t->release(*m));
  }
  auto none = t->receive(queue_, 2s);
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value()) << "moved away";
  auto dead = peer_->get(bp::dead_letter_queue(queue_), 15s);
  ASSERT_TRUE(dead) << "on " << bp::dead_letter_queue(queue_);
  EXPECT_EQ(dead->payload, body) << "a native move keeps the bytes (no dead_letter block)";
}

TEST_F(PulsarTransport, CloseHandsUnsettledMessagesBack) {
  {
    auto t = open();
    ASSERT_TRUE(t);
    ASSERT_TRUE(t->publish(queue_, bqtest::envelope_text(1)));
    ASSERT_TRUE(t->publish(queue_, bqtest::envelope_text(2)));
    auto m = next(*t, queue_);
    ASSERT_TRUE(m);  // received, never settled; the other one prefetched
    ASSERT_TRUE(t->close(std::chrono::steady_clock::now() + 10s));
    auto after = t->receive(queue_, 1s);
    ASSERT_FALSE(after);
    EXPECT_EQ(after.error().code, transport_errc::closed);
    EXPECT_EQ(t->ack(*m).error().code, transport_errc::closed);
  }
  auto other = open();
  ASSERT_TRUE(other);
  std::set<long> got;
  for (int i = 0; i < 2; ++i) {
    auto m = next(*other, queue_);
    ASSERT_TRUE(m);
    got.insert(n_of(m->body));
    ASSERT_TRUE(other->ack(*m));
  }
  EXPECT_EQ(got, (std::set<long>{1, 2}));
}

TEST_F(PulsarTransport, ForeignAndSettledMessagesAreRefused) {
  auto a = open();
  auto b = open();
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->publish(queue_, bqtest::envelope_text(1)));
  auto m = next(*a, queue_);
  ASSERT_TRUE(m);
  EXPECT_EQ(b->ack(*m).error().code, transport_errc::invalid_argument) << "not b's";
  ASSERT_TRUE(a->ack(*m));
  EXPECT_EQ(a->ack(*m).error().code, transport_errc::invalid_argument) << "already settled";
  EXPECT_EQ(a->release(*m).error().code, transport_errc::invalid_argument);
  babelqueue::received_message stranger;
  EXPECT_EQ(a->ack(stranger).error().code, transport_errc::invalid_argument);
}

TEST_F(PulsarTransport, BadQueueNamesAreRefusedBeforeAnyCall) {
  auto t = open();
  ASSERT_TRUE(t);
  for (const std::string q : {"", "a/b", "a b", "tab\there"}) {
    auto r = t->publish(q, bqtest::envelope_text(1));
    ASSERT_FALSE(r) << q;
    EXPECT_EQ(r.error().code, transport_errc::invalid_argument) << q;
    auto g = t->receive(q, 0ms);
    ASSERT_FALSE(g) << q;
    EXPECT_EQ(g.error().code, transport_errc::invalid_argument) << q;
  }
}

TEST_F(PulsarTransport, AnUnreachableBrokerIsATransientErrorWithinTheBound) {
  auto url =
      babelqueue::broker_url::parse("pulsar://127.0.0.1:1?operation_timeout=3s&connect_timeout=1s");
  ASSERT_TRUE(url);
  auto o = babelqueue::pulsar::options_from_url(*url);
  ASSERT_TRUE(o);
  auto t = babelqueue::pulsar::pulsar_transport::open(*o);
  ASSERT_TRUE(t) << "open makes no network call";
  const auto started = std::chrono::steady_clock::now();
  auto r = (*t)->publish(queue_, bqtest::envelope_text(1));
  ASSERT_FALSE(r);
  EXPECT_TRUE(r.code() == babelqueue::condition::unavailable ||
              r.code() == babelqueue::condition::timeout)
      << r.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - started, 20s);
  auto g = (*t)->receive(queue_, 100ms);
  ASSERT_FALSE(g);
  EXPECT_TRUE(g.code() == babelqueue::condition::unavailable ||
              g.code() == babelqueue::condition::timeout)
      << g.error().message;
}

TEST_F(PulsarTransport, TheUrlFactoryOpensBothSchemes) {
  babelqueue::pulsar::register_transport();
  auto url = babelqueue::broker_url::parse(bqtest::pulsar_url());
  ASSERT_TRUE(url);
  auto t = babelqueue::open_transport(*url);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ((*t)->scheme(), "pulsar");
  EXPECT_TRUE((*t)->capabilities().native_delay);
  ASSERT_TRUE((*t)->publish(queue_, bqtest::envelope_text(1)));
  auto m = (*t)->receive(queue_, 10s);
  ASSERT_TRUE(m && m->has_value());
  ASSERT_TRUE((*t)->ack(**m));
}

TEST_F(PulsarTransport, PulsarSslWithTheBrokersCaWorksAndAStrangerIsRefused) {
  const std::string tls_url = bqtest::env_or_empty("BABELQUEUE_PULSAR_TLS_URL");
  const std::string ca = bqtest::env_or_empty("BABELQUEUE_PULSAR_TLS_CA");
  ASSERT_FALSE(tls_url.empty() || ca.empty()) << "services.sh exports the TLS listener";
  const auto open_tls = [&](const std::string& query) {
    auto url = babelqueue::broker_url::parse(tls_url + "?" + query);
    EXPECT_TRUE(url) << url.error().message;
    auto o = babelqueue::pulsar::options_from_url(*url);
    EXPECT_TRUE(o) << o.error().message;
    return babelqueue::pulsar::pulsar_transport::open(*o).value();
  };
  auto t = open_tls("tls_ca_file=" + ca);
  EXPECT_EQ(t->scheme(), "pulsar+ssl");
  ASSERT_TRUE(t->publish(queue_, bqtest::envelope_text(7))) << "verified: CA and host name";
  auto m = next(*t, queue_);
  ASSERT_TRUE(m);
  EXPECT_EQ(n_of(m->body), 7);
  ASSERT_TRUE(t->ack(*m));
  // The system trust store does not know the throwaway CA: the handshake fails, as a typed
  // transient error within the bound (the client keeps retrying until operation_timeout).
  auto stranger = open_tls("operation_timeout=3s&connect_timeout=1s");
  auto r = stranger->publish(queue_, bqtest::envelope_text(8));
  ASSERT_FALSE(r);
  EXPECT_TRUE(r.code() == babelqueue::condition::unavailable ||
              r.code() == babelqueue::condition::timeout)
      << r.error().message;
}

TEST_F(PulsarTransport, ATokenTheBrokerSignedIsAcceptedAndAForgedOneIsRefused) {
  // The standalone authenticates tokens (HS256, services.sh): the valid one connects, one
  // with a forged signature is refused within the bound, and neither the token nor its
  // signature appears in the error. (The Pulsar C++ client 4.0.1 reports the refusal as
  // ConnectError, so it is `unavailable`, not `permission`: it cannot be told apart from a
  // broker that is down.)
  const std::string token = bqtest::env_or_empty("BABELQUEUE_PULSAR_TOKEN");
  ASSERT_FALSE(token.empty()) << "services.sh exports BABELQUEUE_PULSAR_TOKEN";
  auto t = open("token=" + token);
  ASSERT_TRUE(t);
  EXPECT_TRUE(t->security_warnings().empty()) << "a token to a loopback broker";
  ASSERT_TRUE(t->publish(queue_, bqtest::envelope_text(1)));
  auto m = next(*t, queue_);
  ASSERT_TRUE(m);
  EXPECT_EQ(n_of(m->body), 1);
  ASSERT_TRUE(t->ack(*m));

  const std::string forged_signature = "c2lnbmVkLWJ5LXNvbWVib2R5LWVsc2UtZW50aXJlbHk";
  const std::string forged = token.substr(0, token.rfind('.') + 1) + forged_signature;
  auto f = open("token=" + forged + "&operation_timeout=3s&connect_timeout=1s");
  ASSERT_TRUE(f);
  const auto t0 = std::chrono::steady_clock::now();
  auto r = f->publish(queue_, bqtest::envelope_text(2));
  ASSERT_FALSE(r);
  EXPECT_TRUE(r.code() == babelqueue::transport_errc::unavailable ||
              r.code() == babelqueue::transport_errc::permission)
      << r.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
  EXPECT_EQ(r.error().message.find(forged_signature), std::string::npos) << r.error().message;
  EXPECT_EQ(r.error().message.find(token), std::string::npos) << r.error().message;
}
