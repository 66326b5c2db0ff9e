// amqp:// against the shared RabbitMQ node: the property projection as a raw client reads it,
// round trips, peers' queues, big messages, refused logins, release-by-republish, any integer
// width for x-attempts, settlement misuse, returned publishes, batches, redelivery.
#include "rabbitmq/rabbitmq_fixture.hpp"

#include <babelqueue/bindings/rabbitmq.hpp>

using namespace std::chrono_literals;
using babelqueue::transport_errc;
using bqtest::envelope_text;

namespace {

class RabbitTransport : public bqtest::RabbitTest {};

amqp_table_entry_t int_entry(const char* key, amqp_field_value_t v) {
  amqp_table_entry_t e{};
  e.key = amqp_cstring_bytes(key);
  e.value = v;
  return e;
}

}  // namespace

TEST_F(RabbitTransport, PublishCarriesTheProjectionAsARawClientReadsIt) {
  auto t = open();
  ASSERT_TRUE(t);
  const std::string body = envelope_text(7);
  auto env = babelqueue::decode(body).value();
  ASSERT_TRUE(
      t->publish(queue_, body,
                 {{"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
                  {"blank", " "}}));
  auto m = raw_->get(queue_);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->body, body) << "the body is the envelope byte for byte";
  EXPECT_EQ(m->prop("content_type"), "application/json");
  EXPECT_EQ(m->prop("content_encoding"), "utf-8");
  EXPECT_EQ(m->prop("app_id"), "babelqueue");
  EXPECT_EQ(m->prop("type"), "urn:babel:test:item");
  EXPECT_EQ(m->prop("correlation_id"), std::string(env.trace_id()));
  EXPECT_EQ(m->prop("message_id"), std::string(env.id()));
  EXPECT_EQ(m->props.delivery_mode, 2);
  ASSERT_TRUE(m->headers.count("x-attempts"));
  EXPECT_EQ(m->headers["x-attempts"].kind, AMQP_FIELD_KIND_I32) << "typed, as Go and pika";
  EXPECT_EQ(m->headers["x-attempts"].value.i32, 0);
  EXPECT_EQ(m->headers["x-schema-version"].kind, AMQP_FIELD_KIND_I32);
  EXPECT_EQ(m->headers["x-schema-version"].value.i32, 1);
  EXPECT_EQ(m->headers["x-source-lang"].kind, AMQP_FIELD_KIND_UTF8);
  EXPECT_EQ(m->headers["traceparent"].kind, AMQP_FIELD_KIND_UTF8);
  EXPECT_FALSE(m->headers.count("blank")) << "blank headers are dropped (wire-core §6)";
}

TEST_F(RabbitTransport, RoundTripHandsBackBodyAndHeadersAndAckEmptiesTheQueue) {
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
      << "contract headers are derived from the body, not surfaced";
  EXPECT_EQ((*got)->delivery_count, 0);
  ASSERT_TRUE(t->ack(**got));
  auto none = t->receive(queue_, 0ms);
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());
  ASSERT_TRUE(t->close(std::chrono::steady_clock::now() + 2s));
  EXPECT_EQ(raw_->count(queue_), 0);
}

TEST_F(RabbitTransport, AQueueAPeerDeclaredWithThePlainDurableSettingsIsUsedAsItIs) {
  ASSERT_EQ(raw_->declare(queue_), 0);
  ASSERT_TRUE(raw_->publish(queue_, envelope_text(1)));
  auto t = open();
  ASSERT_TRUE(t);
  ASSERT_TRUE(t->publish(queue_, envelope_text(2))) << "no PRECONDITION_FAILED";
  for (long n : {1L, 2L}) {
    auto got = t->receive(queue_, 5s);
    ASSERT_TRUE(got && got->has_value());
    EXPECT_EQ(babelqueue::decode((*got)->body)->data().value().at("n"), n);
    ASSERT_TRUE(t->ack(**got));
  }
}

TEST_F(RabbitTransport, AOneMebibyteMessageRoundTrips) {
  auto t = open();
  ASSERT_TRUE(t);
  babelqueue::make_options mo;
  auto env = babelqueue::make("urn:babel:test:big",
                              babelqueue::json{{"blob", std::string(1 << 20, 'x')}}, mo)
                 .value();
  const std::string body = babelqueue::encode(env).value();
  ASSERT_GT(body.size(), 1u << 20);
  ASSERT_TRUE(t->publish(queue_, body));
  auto got = t->receive(queue_, 10s);
  ASSERT_TRUE(got && got->has_value());
  EXPECT_EQ((*got)->body, body);
  ASSERT_TRUE(t->ack(**got));
}

TEST_F(RabbitTransport, RefusedCredentialsAndAnUnknownVhostArePermissionErrors) {
  auto base = babelqueue::broker_url::parse(bqtest::rabbitmq_url()).value();
  const std::string hostport = base.host + ":" + std::to_string(*base.port);
  auto bad_password = babelqueue::open_transport("amqp://guest:wrong@" + hostport + "/%2F");
  babelqueue::rabbitmq::register_transport();
  bad_password = babelqueue::open_transport("amqp://guest:wrong@" + hostport + "/%2F");
  ASSERT_FALSE(bad_password);
  EXPECT_EQ(bad_password.code(), transport_errc::permission) << bad_password.error().message;
  EXPECT_EQ(bad_password.error().message.find("wrong"), std::string::npos)
      << "no password in errors";
  auto no_vhost = babelqueue::open_transport("amqp://guest:guest@" + hostport + "/nope");
  ASSERT_FALSE(no_vhost);
  EXPECT_EQ(no_vhost.code(), transport_errc::permission) << no_vhost.error().message;
  auto nobody = babelqueue::open_transport("amqp://127.0.0.1:1/%2F?connect_timeout=500ms");
  ASSERT_FALSE(nobody);
  EXPECT_EQ(nobody.code(), transport_errc::unavailable) << nobody.error().message;
}

TEST_F(RabbitTransport, ReleaseRepublishesTheSameBytesToTheTailAndNeverLowersXAttempts) {
  // A Laravel release: body attempts 1, header x-attempts 3 (64-bit).
  babelqueue::make_options mo;
  auto env = babelqueue::make("urn:babel:test:item", babelqueue::json{{"n", 1}}, mo).value();
  env.set_attempts(1);
  const std::string body = babelqueue::encode(env).value();
  amqp_field_value_t three{};
  three.kind = AMQP_FIELD_KIND_I64;
  three.value.i64 = 3;
  amqp_table_entry_t entries[] = {int_entry("x-attempts", three)};
  amqp_basic_properties_t props{};
  props._flags = AMQP_BASIC_HEADERS_FLAG;
  props.headers = amqp_table_t{1, entries};
  ASSERT_EQ(raw_->declare(queue_), 0);
  ASSERT_TRUE(raw_->publish(queue_, body, &props));
  ASSERT_TRUE(raw_->publish(queue_, envelope_text(2)));

  auto t = open("prefetch=1");
  ASSERT_TRUE(t);
  auto got = t->receive(queue_, 5s);
  ASSERT_TRUE(got && got->has_value());
  EXPECT_EQ((*got)->delivery_count, 3);
  EXPECT_EQ(t->reconcile_attempts(1, **got), 3) << "max(body, x-attempts)";
  ASSERT_TRUE(t->release(**got));
  ASSERT_TRUE(t->close(std::chrono::steady_clock::now() + 2s));

  auto first = raw_->get(queue_);
  ASSERT_TRUE(first);
  EXPECT_EQ(babelqueue::decode(first->body)->data().value().at("n"), 2) << "released to the tail";
  auto second = raw_->get(queue_);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->body, body) << "the same bytes";
  ASSERT_TRUE(second->headers.count("x-attempts"));
  EXPECT_EQ(second->headers["x-attempts"].value.i32, 3);
}

TEST_F(RabbitTransport, XAttemptsIsReadInAnyIntegerWidthAndAsText) {
  ASSERT_EQ(raw_->declare(queue_), 0);
  std::vector<amqp_field_value_t> values(5);
  values[0].kind = AMQP_FIELD_KIND_I8;
  values[0].value.i8 = 2;
  values[1].kind = AMQP_FIELD_KIND_U16;
  values[1].value.u16 = 3;
  values[2].kind = AMQP_FIELD_KIND_I32;
  values[2].value.i32 = 4;
  values[3].kind = AMQP_FIELD_KIND_I64;
  values[3].value.i64 = 5;
  values[4].kind = AMQP_FIELD_KIND_UTF8;
  values[4].value.bytes = amqp_cstring_bytes("6");
  for (auto& v : values) {
    amqp_table_entry_t entries[] = {int_entry("x-attempts", v)};
    amqp_basic_properties_t props{};
    props._flags = AMQP_BASIC_HEADERS_FLAG;
    props.headers = amqp_table_t{1, entries};
    ASSERT_TRUE(raw_->publish(queue_, envelope_text(0), &props));
  }
  auto t = open();
  ASSERT_TRUE(t);
  for (std::int64_t want = 2; want <= 6; ++want) {
    auto got = t->receive(queue_, 5s);
    ASSERT_TRUE(got && got->has_value());
    EXPECT_EQ((*got)->delivery_count, want);
    EXPECT_EQ(t->reconcile_attempts(0, **got), want);
    ASSERT_TRUE(t->ack(**got));
  }
}

TEST_F(RabbitTransport, SettlementMisuseIsRefusedWithoutTouchingTheBroker) {
  auto t = open();
  ASSERT_TRUE(t);
  ASSERT_TRUE(t->publish(queue_, envelope_text(1)));
  auto got = t->receive(queue_, 5s);
  ASSERT_TRUE(got && got->has_value());
  auto delayed = t->release(**got, 5s);
  ASSERT_FALSE(delayed);
  EXPECT_EQ(delayed.code(), transport_errc::not_supported);
  ASSERT_TRUE(t->ack(**got));
  auto again = t->ack(**got);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.code(), transport_errc::invalid_argument);
  babelqueue::received_message foreign;
  foreign.body = "x";
  EXPECT_EQ(t->ack(foreign).code(), transport_errc::invalid_argument);
  EXPECT_EQ(t->publish("", "x").code(), transport_errc::invalid_argument);
  EXPECT_EQ(t->publish(std::string(256, 'q'), "x").code(), transport_errc::invalid_argument);
  ASSERT_TRUE(t->close(std::chrono::steady_clock::now() + 2s));
  EXPECT_EQ(t->publish(queue_, "x").code(), transport_errc::closed);
  EXPECT_TRUE(t->close(std::chrono::steady_clock::now() + 2s)) << "close twice is a no-op";
}

TEST_F(RabbitTransport, APublishNoQueueTakesIsAnErrorNotASilentLoss) {
  auto t = open("declare_queues=false");
  ASSERT_TRUE(t);
  auto r = t->publish(queue_ + "-missing", envelope_text(1));
  ASSERT_FALSE(r) << "mandatory publish to a queue that does not exist";
  EXPECT_EQ(r.code(), transport_errc::not_found) << r.error().message;
  // The transport stays usable.
  ASSERT_EQ(raw_->declare(queue_), 0);
  EXPECT_TRUE(t->publish(queue_, envelope_text(2)));
  EXPECT_EQ(raw_->count(queue_), 1);
}

TEST_F(RabbitTransport, ABatchIsPipelinedUnderTheConfirmWindowAndFullyConfirmed) {
  auto t = open("confirm_window=16");
  ASSERT_TRUE(t);
  std::vector<babelqueue::outgoing_message> batch;
  for (int i = 0; i < 500; ++i) batch.push_back({envelope_text(i), {}});
  ASSERT_TRUE(t->publish_batch(queue_, batch));
  EXPECT_EQ(t->stats().published, 500);
  EXPECT_EQ(raw_->count(queue_), 500);
  for (int i = 0; i < 500; ++i) {
    auto got = t->receive(queue_, 5s);
    ASSERT_TRUE(got && got->has_value());
    ASSERT_EQ((*got)->body, batch[static_cast<std::size_t>(i)].body) << "in order";
    ASSERT_TRUE(t->ack(**got));
  }
}

TEST_F(RabbitTransport, UnackedDeliveriesGoBackToTheQueueWhenTheTransportCloses) {
  {
    auto t = open("prefetch=8");
    ASSERT_TRUE(t);
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(t->publish(queue_, envelope_text(i)));
    auto got = t->receive(queue_, 5s);
    ASSERT_TRUE(got && got->has_value());
    // Neither acked nor released: closing hands it (and the prefetched two) back.
    ASSERT_TRUE(t->close(std::chrono::steady_clock::now() + 2s));
  }
  auto t = open();
  for (int i = 0; i < 3; ++i) {
    auto got = t->receive(queue_, 5s);
    ASSERT_TRUE(got && got->has_value());
    EXPECT_EQ(babelqueue::decode((*got)->body)->attempts(), 0) << "redelivery is not an attempt";
    ASSERT_TRUE(t->ack(**got));
  }
}

TEST_F(RabbitTransport, ReceiveWaitsAtMostItsTimeout) {
  auto t = open();
  ASSERT_TRUE(t);
  const auto start = std::chrono::steady_clock::now();
  auto got = t->receive(queue_, 300ms);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(got);
  EXPECT_FALSE(got->has_value());
  EXPECT_GE(took, 250ms);
  EXPECT_LT(took, 5s);
}

TEST_F(RabbitTransport, TheKeeperThreadKeepsAnIdleConnectionAliveAcrossALongHandler) {
  auto t = open("heartbeat=1s");
  ASSERT_TRUE(t);
  ASSERT_TRUE(t->publish(queue_, envelope_text(1)));
  auto got = t->receive(queue_, 5s);
  ASSERT_TRUE(got && got->has_value());
  // A "handler" four heartbeats long: without heartbeats the broker drops us after two.
  std::this_thread::sleep_for(4500ms);
  EXPECT_GT(t->stats().heartbeats_sent, 2);
  ASSERT_TRUE(t->ack(**got)) << "the delivery is still ours";
  EXPECT_EQ(t->stats().connects, 1) << "no reconnect happened";
  ASSERT_TRUE(t->close(std::chrono::steady_clock::now() + 2s));
  EXPECT_EQ(raw_->count(queue_), 0);
}

TEST_F(RabbitTransport, AConsumerTheBrokerCancelsIsStartedAgain) {
  auto t = open();
  ASSERT_TRUE(t);
  ASSERT_TRUE(t->publish(queue_, envelope_text(1)));
  auto got = t->receive(queue_, 5s);
  ASSERT_TRUE(got && got->has_value());
  ASSERT_TRUE(t->ack(**got));
  // Deleting the queue cancels our consumer (consumer_cancel_notify); publishing again
  // re-declares it, and the next receive starts a new consumer.
  raw_->remove(queue_);
  std::this_thread::sleep_for(200ms);
  ASSERT_TRUE(t->publish(queue_, envelope_text(2)));
  std::optional<babelqueue::received_message> next;
  for (int i = 0; i < 10 && !next; ++i) {
    auto r = t->receive(queue_, 500ms);
    if (r && r->has_value()) next = std::move(**r);
  }
  ASSERT_TRUE(next) << "no delivery after the consumer was cancelled";
  EXPECT_EQ(babelqueue::decode(next->body)->data().value().at("n"), 2);
  ASSERT_TRUE(t->ack(*next));
}
