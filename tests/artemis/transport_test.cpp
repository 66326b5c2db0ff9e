// artemis:// against the shared Artemis broker: the projection as a bare AMQP client reads
// it, round trips, failed-delivery counting, 1 MiB, refused logins,
// stock MULTICAST defaults, peers' body shapes, settlement misuse, batches, close, and the
// `durable` option on every publish path.
#include "artemis/artemis_fixture.hpp"
#include "support/files.hpp"

#include <babelqueue/bindings/artemis.hpp>

#include <proton/annotation_key.hpp>
#include <proton/binary.hpp>
#include <proton/message_id.hpp>
#include <proton/scalar.hpp>
#include <proton/symbol.hpp>
#include <proton/timestamp.hpp>
#include <proton/value.hpp>

#include <cstdio>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

using namespace std::chrono_literals;
using babelqueue::transport_errc;
using bqtest::envelope_text;

namespace {

using bqtest::prop;

class ArtemisTransport : public bqtest::ArtemisTest {};

}  // namespace

TEST_F(ArtemisTransport, PublishCarriesTheProjectionAsABareClientReadsIt) {
  auto t = open();
  ASSERT_TRUE(t);
  const std::string body = envelope_text(7);
  auto env = babelqueue::decode(body).value();
  const std::string tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  ASSERT_TRUE(t->publish(queue_, body, {{"traceparent", tp}, {"blank", " "}}));
  auto m = peer_->get(queue_);
  ASSERT_TRUE(m);
  ASSERT_EQ(m->body().type(), proton::STRING) << "an amqp-value string: a JMS TextMessage";
  EXPECT_EQ(proton::get<std::string>(m->body()), body) << "the envelope byte for byte";
  EXPECT_TRUE(m->durable());
  EXPECT_EQ(m->subject(), "urn:babel:test:item") << "the real JMSType (§4.2)";
  const proton::annotation_key jms_type{proton::symbol("x-opt-jms-type")};
  ASSERT_TRUE(m->message_annotations().exists(jms_type));
  EXPECT_EQ(proton::get<std::string>(m->message_annotations().get(jms_type)),
            "urn:babel:test:item");
  EXPECT_EQ(proton::get<std::string>(m->correlation_id()), std::string(env.trace_id()));
  EXPECT_EQ(m->creation_time().milliseconds(), env.created_at());
  EXPECT_EQ(m->content_type(), "application/json");
  EXPECT_EQ(prop(*m, "bq_schema_version"), "1");
  EXPECT_EQ(prop(*m, "bq_source_lang"), "cpp");
  EXPECT_EQ(prop(*m, "bq_attempts"), "0");
  EXPECT_EQ(prop(*m, "bq_app_id"), "babelqueue");
  EXPECT_EQ(prop(*m, "traceparent"), tp);
  EXPECT_EQ(prop(*m, "blank"), "<unset>") << "blank headers are dropped (wire-core §6)";
}

// The AMQP header `durable` of what a bare client receives after each publish path of `t`:
// publish, publish_batch (2 messages), a delayed release's republish (the last: it closes
// `t`). The App's retry and dead-letter republishes are publish() calls.
namespace {

std::vector<bool> durable_flags_received(babelqueue::artemis::artemis_transport& t,
                                         bqtest::artemis_peer& peer, const std::string& queue) {
  std::vector<bool> flags;
  auto take = [&] {
    auto m = peer.get(queue);
    EXPECT_TRUE(m) << "message " << flags.size();
    if (m) flags.push_back(m->durable());
  };
  EXPECT_TRUE(t.publish(queue, envelope_text(1)));
  take();
  std::vector<babelqueue::outgoing_message> batch{{envelope_text(2), {}}, {envelope_text(3), {}}};
  EXPECT_TRUE(t.publish_batch(queue, batch));
  take();
  take();
  // A queue the peer has no receiver (holding credit) on, so the transport gets the message.
  const std::string released = queue + ".released";
  EXPECT_TRUE(t.publish(released, envelope_text(4)));
  auto got = t.receive(released, 5s);
  EXPECT_TRUE(got && got->has_value());
  if (got && got->has_value()) {
    EXPECT_TRUE(t.release(**got, 200ms));
    // Closed so that its receiver (with credit) does not take the republished message.
    EXPECT_TRUE(t.close(std::chrono::steady_clock::now() + 5s));
    auto m = peer.get(released);
    EXPECT_TRUE(m) << "the delayed release's republish";
    if (m) flags.push_back(m->durable());
  }
  return flags;
}

}  // namespace

TEST_F(ArtemisTransport, DurableFalseSendsNonDurableMessagesOnEveryPublishPath) {
  auto t = open("durable=false");
  ASSERT_TRUE(t);
  EXPECT_FALSE(t->config().durable);
  EXPECT_EQ(durable_flags_received(*t, *peer_, queue_), std::vector<bool>(4, false))
      << "publish, batch x2, delayed release: header durable false, as the peers send";
}

TEST_F(ArtemisTransport, MessagesAreDurableByDefaultOnEveryPublishPath) {
  auto t = open();
  ASSERT_TRUE(t);
  EXPECT_EQ(durable_flags_received(*t, *peer_, queue_), std::vector<bool>(4, true));
  auto explicit_on = open("durable=true");
  ASSERT_TRUE(explicit_on);
  ASSERT_TRUE(explicit_on->publish(queue_, envelope_text(5)));
  auto m = peer_->get(queue_);
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->durable());
}

TEST_F(ArtemisTransport, RoundTripHandsBackBodyAndHeadersAndAckEmptiesTheQueue) {
  auto t = open();
  ASSERT_TRUE(t);
  const std::string body = envelope_text(1);
  ASSERT_TRUE(t->publish(queue_, body, {{"bq-replay-bypass", "1"}}));
  auto got = t->receive(queue_, 5s);
  ASSERT_TRUE(got) << got.error().message;
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->body, body);
  EXPECT_EQ((*got)->queue, queue_);
  EXPECT_EQ((*got)->hdrs, (babelqueue::headers{{"bq-replay-bypass", "1"}}))
      << "contract properties are derived from the body, not surfaced";
  EXPECT_EQ((*got)->delivery_count, 0);
  ASSERT_TRUE(t->ack(**got));
  auto none = t->receive(queue_, 0ms);
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());
  ASSERT_TRUE(t->close(std::chrono::steady_clock::now() + 2s));
  EXPECT_EQ(peer_->drain(queue_), 0);
}

TEST_F(ArtemisTransport, ReleaseIsAFailedDeliveryTheBrokerCountsAndReconcileReads) {
  auto t = open();
  ASSERT_TRUE(t);
  const std::string body = envelope_text(2);
  ASSERT_TRUE(t->publish(queue_, body));
  for (std::int64_t expected = 0; expected < 3; ++expected) {
    auto got = t->receive(queue_, 5s);
    ASSERT_TRUE(got && got->has_value());
    EXPECT_EQ((*got)->body, body);
    EXPECT_EQ((*got)->delivery_count, expected)
        << "modified{delivery-failed} bumps delivery-count (plain `released` would not)";
    EXPECT_EQ(t->reconcile_attempts(0, **got), expected);
    EXPECT_EQ(t->reconcile_attempts(5, **got), 5) << "never lowers the body's count";
    if (expected < 2) {
      ASSERT_TRUE(t->release(**got));
    } else {
      ASSERT_TRUE(t->ack(**got));
    }
  }
}

TEST_F(ArtemisTransport, AOneMebibyteMessageRoundTrips) {
  auto t = open();
  ASSERT_TRUE(t);
  babelqueue::make_options mo;
  mo.queue = queue_;
  auto env = babelqueue::make("urn:babel:test:big",
                              babelqueue::json{{"blob", std::string(1 << 20, 'x')}}, mo)
                 .value();
  const std::string body = babelqueue::encode(env).value();
  ASSERT_TRUE(t->publish(queue_, body));
  auto got = t->receive(queue_, 10s);
  ASSERT_TRUE(got && got->has_value()) << (got ? "nothing" : got.error().message);
  EXPECT_EQ((*got)->body, body);
  ASSERT_TRUE(t->ack(**got));
}

TEST_F(ArtemisTransport, RefusedCredentialsAreAPermissionError) {
  auto url = babelqueue::broker_url::parse(bqtest::artemis_url()).value();
  auto o = babelqueue::artemis::options_from_url(url).value();
  o.password = "wrong-password";
  auto t = babelqueue::artemis::artemis_transport::open(o);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.code(), transport_errc::permission) << t.error().message;
  EXPECT_EQ(t.error().message.find("wrong-password"), std::string::npos) << "no secret in errors";
}

TEST_F(ArtemisTransport, NoBrokerIsUnavailableWithinTheConnectTimeout) {
  babelqueue::artemis::options o;
  o.port = 1;  // nothing listens there
  o.connect_timeout = 2s;
  const auto start = std::chrono::steady_clock::now();
  auto t = babelqueue::artemis::artemis_transport::open(o);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.code(), transport_errc::unavailable) << t.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 4s);
}

TEST_F(ArtemisTransport, TheQueueCapabilityQueuesEvenWhereTheBrokerDefaultsToMulticast) {
  // services.sh keeps Artemis's stock MULTICAST defaults for addresses under `multicast.`:
  // there a bare link's message to a new address, with no subscriber yet, is dropped.
  const std::string bare_q = "multicast." + queue_ + "-bare";
  bqtest::artemis_peer bare(false);
  proton::message m(envelope_text(4));
  ASSERT_TRUE(bare.send(bare_q, m)) << "accepted by the broker...";
  auto t = open();
  ASSERT_TRUE(t);
  auto dropped = t->receive(bare_q, 1s);
  ASSERT_TRUE(dropped);
  EXPECT_FALSE(dropped->has_value()) << "...and dropped: no queue on a multicast address";

  const std::string q = "multicast." + queue_;
  const std::string body = envelope_text(5);
  ASSERT_TRUE(t->publish(q, body)) << "the sender target carries the `queue` capability";
  auto got = t->receive(q, 5s);
  ASSERT_TRUE(got && got->has_value()) << "anycast queue auto-created: nothing was lost";
  EXPECT_EQ((*got)->body, body);
  ASSERT_TRUE(t->ack(**got));
}

TEST_F(ArtemisTransport, APeersBinaryBodyAndForeignPropertiesAreRead) {
  const std::string body = envelope_text(6);
  proton::message m;
  m.body(proton::binary(body));  // a STOMP / JMS BytesMessage producer
  m.properties().put("traceparent", std::string("tp-2"));
  m.properties().put("bq_attempts", std::string("1"));
  m.properties().put("x-number", proton::scalar(std::int64_t{42}));  // not a header
  ASSERT_TRUE(peer_->send(queue_, m));
  auto t = open();
  ASSERT_TRUE(t);
  auto got = t->receive(queue_, 5s);
  ASSERT_TRUE(got && got->has_value());
  EXPECT_EQ((*got)->body, body);
  EXPECT_EQ((*got)->hdrs, (babelqueue::headers{{"traceparent", "tp-2"}}));
  ASSERT_TRUE(t->ack(**got));
}

TEST_F(ArtemisTransport, SettlementMisuseIsRefused) {
  auto a = open();
  auto b = open();
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->publish(queue_, envelope_text(1)));
  auto got = a->receive(queue_, 5s);
  ASSERT_TRUE(got && got->has_value());
  auto other = b->ack(**got);
  ASSERT_FALSE(other);
  EXPECT_EQ(other.code(), transport_errc::invalid_argument);
  ASSERT_TRUE(a->ack(**got));
  auto twice = a->ack(**got);
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.code(), transport_errc::invalid_argument);
  auto delayed = a->release(**got, 1s);
  ASSERT_FALSE(delayed);
  EXPECT_EQ(delayed.code(), transport_errc::invalid_argument);
  auto copy = a->receive(queue_, 1500ms);
  ASSERT_TRUE(copy);
  EXPECT_FALSE(copy->has_value()) << "a settled message is never republished by a late release";
  babelqueue::received_message forged;
  auto none = a->release(forged);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.code(), transport_errc::invalid_argument);
  auto empty = a->publish("", envelope_text(1));
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.code(), transport_errc::invalid_argument);
}

TEST_F(ArtemisTransport, ABatchIsFullyAcceptedAndArrivesInOrder) {
  auto t = open("prefetch=16");
  ASSERT_TRUE(t);
  std::vector<babelqueue::outgoing_message> batch;
  for (long i = 0; i < 300; ++i) batch.push_back({envelope_text(i), {}});
  ASSERT_TRUE(t->publish_batch(queue_, batch));
  EXPECT_EQ(t->stats().published, 300);
  for (long i = 0; i < 300; ++i) {
    auto got = t->receive(queue_, 5s);
    ASSERT_TRUE(got && got->has_value()) << i;
    EXPECT_EQ((*got)->body, batch[static_cast<std::size_t>(i)].body);
    ASSERT_TRUE(t->ack(**got));
  }
}

TEST_F(ArtemisTransport, UnsettledMessagesGoBackToTheQueueWhenTheTransportCloses) {
  const std::string body = envelope_text(8);
  {
    auto t = open();
    ASSERT_TRUE(t);
    ASSERT_TRUE(t->publish(queue_, body));
    auto got = t->receive(queue_, 5s);
    ASSERT_TRUE(got && got->has_value());
    ASSERT_TRUE(t->close(std::chrono::steady_clock::now() + 2s));
    auto after = t->ack(**got);
    ASSERT_FALSE(after);
    EXPECT_EQ(after.code(), transport_errc::closed);
  }
  auto t = open();
  ASSERT_TRUE(t);
  auto again = t->receive(queue_, 5s);
  ASSERT_TRUE(again && again->has_value());
  EXPECT_EQ((*again)->body, body);
  ASSERT_TRUE(t->ack(**again));
}

namespace {

// The broker's own counters for `queue` (`artemis queue stat` through the services script's
// control command): {message count, messages acked}, or {-1, -1} when it has no such queue.
std::pair<long, long> broker_queue_stat(const std::string& ctl, const std::string& queue) {
  const std::string cmd =
      ctl + " queue-stat --queueName " + babelqueue::test::shell_quote(queue) + " 2>&1";
  const std::string out = babelqueue::test::run_command(cmd).out;
  // |NAME|ADDRESS|CONSUMER COUNT|MESSAGE COUNT|MESSAGES ADDED|DELIVERING COUNT|MESSAGES ACKED|
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> cells;
    std::istringstream row(line);
    for (std::string cell; std::getline(row, cell, '|');)
      cells.push_back(babelqueue::test::trim(cell));
    if (cells.size() > 7 && cells[1] == queue) {
      return {std::stol(cells[4]), std::stol(cells[7])};
    }
  }
  return {-1, -1};
}

}  // namespace

// Between calls the keeper pumps the connection: a settlement that waited for its run (another
// message of the receiver was buffered) reaches the broker while the caller is busy elsewhere.
// Without the keeper it would wait for the caller's next call (checked: this test fails then).
TEST_F(ArtemisTransport, TheKeeperPumpsTheConnectionWhileTheCallerIsBusy) {
  const std::string ctl = bqtest::env_or_empty("BABELQUEUE_ARTEMIS_CTL");
  if (ctl.empty()) GTEST_SKIP() << "needs BABELQUEUE_ARTEMIS_CTL (scripts/services.sh)";
  auto t = open("idle_timeout=2s");  // the keeper pumps every quarter of it
  ASSERT_TRUE(t);
  ASSERT_TRUE(t->publish(queue_, envelope_text(1)));
  auto first = t->receive(queue_, 5s);
  ASSERT_TRUE(first && first->has_value());
  const auto delivered = t->stats().delivered;
  ASSERT_TRUE(t->publish(queue_, envelope_text(2)));
  // The second message is buffered before the first is settled (the publish's own pump may
  // already have read it; else the keeper does).
  const auto until = std::chrono::steady_clock::now() + 5s;
  while (t->stats().delivered == delivered && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_EQ(t->stats().delivered, delivered + 1);
  // Settled while the second is buffered: not written by ack() (it waits for its run), so only
  // the keeper can bring it to the broker during the second below (no call meanwhile).
  ASSERT_TRUE(t->ack(**first));
  std::this_thread::sleep_for(1s);
  auto [count, acked] = broker_queue_stat(ctl, queue_);
  EXPECT_EQ(acked, 1) << "the broker has the settlement without another call";
  EXPECT_EQ(count, 1) << "only the second message is left";
  auto second = t->receive(queue_, 5s);
  ASSERT_TRUE(second && second->has_value());
  ASSERT_TRUE(t->ack(**second));
}

TEST_F(ArtemisTransport, ReceiveWaitsAtMostItsTimeout) {
  auto t = open();
  ASSERT_TRUE(t);
  const auto start = std::chrono::steady_clock::now();
  auto got = t->receive(queue_, 400ms);
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_FALSE(got->has_value());
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, 350ms);
  EXPECT_LT(waited, 3s);
}

TEST_F(ArtemisTransport, TheUrlFactoryOpensBothSchemes) {
  babelqueue::artemis::register_transport();
  auto t = babelqueue::open_transport(bqtest::artemis_url());
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ((*t)->scheme(), "artemis");
  EXPECT_TRUE((*t)->capabilities().delivery_count);
}
