// kafka:// against the real broker of scripts/services.sh: the record a publish writes (as a
// plain librdkafka consumer reads it), delivery reports, process-then-commit with in-order
// commits, release to the tail and to a tier, the schema-version gate, large records, and
// the errors of an unreachable broker.
#include "kafka/kafka_fixture.hpp"

#include <babelqueue/bindings/kafka.hpp>

#include <set>

using namespace std::chrono_literals;
using bqtest::KafkaTest;

TEST_F(KafkaTest, APublishWritesTheEnvelopeTheBqHeadersAndCreatedAtWithNoKey) {
  auto t = open();
  ASSERT_TRUE(t);
  const std::string body = bqtest::envelope_text(7);
  const auto env = babelqueue::decode(body).value();
  ASSERT_TRUE(t->publish(
      topic_, body, {{"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}));
  EXPECT_EQ(t->stats().published, 1);
  auto recs = raw_->read_all(topic_, 1);
  ASSERT_EQ(recs.size(), 1u);
  const auto& r = recs[0];
  EXPECT_EQ(r.value, body) << "value = the envelope bytes, unchanged";
  EXPECT_FALSE(r.key) << "no key";
  EXPECT_EQ(r.timestamp_type, RD_KAFKA_TIMESTAMP_CREATE_TIME);
  EXPECT_EQ(r.timestamp, env.created_at());
  EXPECT_EQ(r.header("bq-job"), "urn:babel:test:item");
  EXPECT_EQ(r.header("bq-trace-id"), std::string(env.trace_id()));
  EXPECT_EQ(r.header("bq-message-id"), std::string(env.id()));
  EXPECT_EQ(r.header("bq-schema-version"), "1");
  EXPECT_EQ(r.header("bq-source-lang"), "cpp");
  EXPECT_EQ(r.header("bq-attempts"), "0");
  EXPECT_EQ(r.header("traceparent"), "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
  EXPECT_EQ(r.headers.size(), 7u);
}

TEST_F(KafkaTest, AKeyedPublishAndABatchArriveInOrder) {
  ASSERT_TRUE(raw_->create_topic(topic_, 3));
  auto t = open();
  ASSERT_TRUE(t);
  std::vector<babelqueue::outgoing_message> batch;
  batch.reserve(50);
  for (int i = 0; i < 50; ++i) batch.push_back({bqtest::envelope_text(i), {}});
  ASSERT_TRUE(t->publish_batch(topic_, batch));
  ASSERT_TRUE(t->publish_keyed(topic_, "customer-42", bqtest::envelope_text(100)));
  ASSERT_TRUE(t->publish_keyed(topic_, "customer-42", bqtest::envelope_text(101)));
  EXPECT_EQ(t->stats().published, 52);
  auto recs = raw_->read_all(topic_, 52);
  ASSERT_EQ(recs.size(), 52u);
  std::vector<std::int32_t> keyed;
  for (const auto& r : recs) {
    if (r.key) {
      EXPECT_EQ(*r.key, "customer-42");
      keyed.push_back(r.partition);
    }
  }
  ASSERT_EQ(keyed.size(), 2u);
  EXPECT_EQ(keyed[0], keyed[1]) << "the same key goes to the same partition";
}

TEST_F(KafkaTest, ReceiveSurfacesHeadersAndTheAuthoritativeAttemptsHeader) {
  const std::string body = bqtest::envelope_text(1);  // body attempts 0
  ASSERT_EQ(raw_->produce(topic_, body,
                          {{"bq-job", "urn:babel:test:item"},
                           {"bq-attempts", "2"},
                           {"traceparent", "00-aa-bb-01"}}),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  auto t = open();
  ASSERT_TRUE(t);
  auto m = next(*t, topic_);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->body, body);
  EXPECT_EQ(m->queue, topic_);
  EXPECT_EQ(m->delivery_count, 2);
  EXPECT_EQ(t->reconcile_attempts(0, *m), 2) << "the header wins, even over a higher body";
  EXPECT_EQ(t->reconcile_attempts(5, *m), 2);
  EXPECT_EQ(m->hdrs.count("traceparent"), 1u);
  EXPECT_EQ(m->hdrs.count("bq-job"), 0u) << "contract headers are derived from the body";
  EXPECT_FALSE(m->refused_schema_version);
  ASSERT_TRUE(t->ack(*m));
  EXPECT_EQ(t->ack(*m).code(), babelqueue::transport_errc::invalid_argument) << "settled twice";
}

TEST_F(KafkaTest, AnUnsettledRecordIsDeliveredAgainAndCommitsNeverPassIt) {
  {
    auto p = open();
    ASSERT_TRUE(p);
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(p->publish(topic_, bqtest::envelope_text(i)));
  }
  {
    auto t = open("&commit_interval=0");
    ASSERT_TRUE(t);
    auto a = next(*t, topic_), b = next(*t, topic_, 5s), c = next(*t, topic_, 5s);
    ASSERT_TRUE(a && b && c);
    ASSERT_TRUE(t->ack(*c));
    ASSERT_TRUE(t->ack(*b));
    // `a` is still in flight: nothing may be committed past it.
    ASSERT_TRUE(t->close(std::chrono::steady_clock::now() + 10s));
  }
  const auto committed = raw_->committed(group_, topic_);
  EXPECT_TRUE(committed == 0 || committed == RD_KAFKA_OFFSET_INVALID) << committed;
  {
    auto t = open();
    ASSERT_TRUE(t);
    auto again = next(*t, topic_);
    ASSERT_TRUE(again);
    EXPECT_EQ(babelqueue::decode(again->body).value().data().value()["n"], 0)
        << "the unsettled record comes back first";
    ASSERT_TRUE(t->ack(*again));
    for (int i = 1; i < 3; ++i) {
      auto m = next(*t, topic_, 5s);
      ASSERT_TRUE(m) << "records 1 and 2 come again too (at-least-once)";
      ASSERT_TRUE(t->ack(*m));
    }
    ASSERT_TRUE(t->close(std::chrono::steady_clock::now() + 10s));
  }
  EXPECT_EQ(raw_->committed(group_, topic_), 3);
}

TEST_F(KafkaTest, BatchedCommitsLandAtCloseAndNothingIsRedelivered) {
  auto p = open();
  ASSERT_TRUE(p);
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(p->publish(topic_, bqtest::envelope_text(i)));
  {
    auto t = open("&commit_interval=1m&commit_batch=1000");
    for (int i = 0; i < 20; ++i) {
      auto m = next(*t, topic_);
      ASSERT_TRUE(m);
      ASSERT_TRUE(t->ack(*m));
    }
    ASSERT_TRUE(t->close(std::chrono::steady_clock::now() + 10s));
  }
  EXPECT_EQ(raw_->committed(group_, topic_), 20);
  auto t = open();
  auto none = t->receive(topic_, 4s);
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);
}

TEST_F(KafkaTest, ReleaseRepublishesToTheTailOrToATierAndRefusesWithoutOne) {
  auto t = open("&retry_topics=1s,1m");
  ASSERT_TRUE(t);
  const std::string body = bqtest::envelope_text(5);
  ASSERT_TRUE(t->publish(topic_, body, {{"traceparent", "00-cc-dd-01"}}));
  auto m = next(*t, topic_);
  ASSERT_TRUE(m);
  ASSERT_TRUE(t->release(*m));
  auto again = next(*t, topic_);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->body, body);
  EXPECT_EQ(again->hdrs.at("traceparent"), "00-cc-dd-01");
  EXPECT_EQ(again->delivery_count, 0) << "a release is not a retry";
  EXPECT_EQ(t->release(*again, 2min).code(), babelqueue::transport_errc::not_supported)
      << "longer than every tier";
  ASSERT_TRUE(t->release(*again, 30s));
  auto tier = raw_->read_all(topic_ + ".retry.2", 1);
  ASSERT_EQ(tier.size(), 1u);
  EXPECT_EQ(tier[0].value, body);
  EXPECT_EQ(tier[0].header("bq-delay"), "30000");
  EXPECT_EQ(tier[0].header("bq-original-topic"), topic_);

  // Another group: a member of t's group that does not poll would hold up the join.
  group_ = bqtest::unique_name("bq-g");
  auto plain = open();
  ASSERT_TRUE(plain->publish(topic_ + "-b", body));
  auto n = next(*plain, topic_ + "-b");
  ASSERT_TRUE(n);
  EXPECT_EQ(plain->release(*n, 5s).code(), babelqueue::transport_errc::not_supported)
      << "no tiers: a delay is an error, never a drop";
  EXPECT_FALSE(plain->capabilities().native_delay);
  EXPECT_TRUE(t->capabilities().native_delay);
}

TEST_F(KafkaTest, TheSchemaVersionHeaderGateRefusesBeforeDecoding) {
  const std::string body = bqtest::envelope_text(1);
  ASSERT_EQ(raw_->produce(topic_, body, {{"bq-schema-version", "2"}}), RD_KAFKA_RESP_ERR_NO_ERROR);
  ASSERT_EQ(raw_->produce(topic_, body, {{"bq-schema-version", "  "}}), RD_KAFKA_RESP_ERR_NO_ERROR);
  auto t = open();
  auto a = next(*t, topic_);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->refused_schema_version, "2");
  auto b = next(*t, topic_);
  ASSERT_TRUE(b);
  EXPECT_FALSE(b->refused_schema_version) << "ASCII-blank = decode normally";
}

TEST_F(KafkaTest, AOneMebibyteRecordTravelsAndALargerOneIsTooLarge) {
  auto t = open("&rdkafka.message.max.bytes=8000000");
  ASSERT_TRUE(t);
  babelqueue::make_options mo;
  mo.queue = topic_;
  const std::string big(1 << 20, 'x');
  auto env = babelqueue::make("urn:babel:test:big", babelqueue::json{{"blob", big}}, mo).value();
  const std::string body = babelqueue::encode(env).value();
  ASSERT_TRUE(t->publish(topic_, body));
  auto m = next(*t, topic_);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->body, body);
  ASSERT_TRUE(t->ack(*m));
  // Over the broker's message.max.bytes (2 MiB in the test broker): the broker refuses it.
  auto huge = babelqueue::make("urn:babel:test:big",
                               babelqueue::json{{"blob", std::string(3 << 20, 'y')}}, mo)
                  .value();
  auto r = t->publish(topic_, babelqueue::encode(huge).value());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.code(), babelqueue::transport_errc::too_large) << r.error().message;
  // Over the producer's own limit (librdkafka's default 1000000): refused before sending.
  auto small = open();
  auto local = small->publish(topic_, body);
  ASSERT_FALSE(local);
  EXPECT_EQ(local.code(), babelqueue::transport_errc::too_large) << local.error().message;
}

TEST(KafkaErrors, AnUnreachableBrokerIsUnavailableAtOpen) {
  auto u = babelqueue::broker_url::parse("kafka://127.0.0.1:1?operation_timeout=1500ms");
  auto t = babelqueue::kafka::kafka_transport::open(
      babelqueue::kafka::options_from_url(u.value()).value());
  ASSERT_FALSE(t);
  EXPECT_EQ(t.code(), babelqueue::transport_errc::unavailable) << t.error().message;
}

TEST_F(KafkaTest, BadNamesAndForeignHandlesAreInvalidArguments) {
  auto t = open();
  EXPECT_EQ(t->publish("bad topic!", "x").code(), babelqueue::transport_errc::invalid_argument);
  babelqueue::received_message foreign;
  EXPECT_EQ(t->ack(foreign).code(), babelqueue::transport_errc::invalid_argument);
  ASSERT_TRUE(t->close(std::chrono::steady_clock::now() + 5s));
  EXPECT_EQ(t->publish(topic_, "x").code(), babelqueue::transport_errc::closed);
}

TEST_F(KafkaTest, AHeldRecordPausesOnlyItsOwnPartition) {
  // .retry.2 holds a record due in 30 s; the record of .retry.1, due in 1 s, still flows.
  const std::string later = bqtest::envelope_text(2), sooner = bqtest::envelope_text(1);
  ASSERT_EQ(
      raw_->produce(topic_ + ".retry.2", later,
                    {{"bq-attempts", "1"}, {"bq-delay", "30000"}, {"bq-original-topic", topic_}}),
      RD_KAFKA_RESP_ERR_NO_ERROR);
  ASSERT_EQ(raw_->produce(topic_ + ".retry.1", sooner,
                          {{"bq-attempts", "1"},
                           {"bq-delay", "1000"},
                           {"bq-original-topic", topic_},
                           {"traceparent", "00-ee-ff-01"}}),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  auto o = bqtest::kafka_options(group_);
  o.retry_topics = {std::chrono::seconds(1), std::chrono::seconds(30)};
  auto r = babelqueue::kafka::reinjector::open(o, {topic_});
  ASSERT_TRUE(r) << r.error().message;
  std::int64_t moved = 0;
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  // Either record may be fetched first: run until the due one moved and the other was held.
  while ((moved < 1 || (*r)->stats().held < 1) && std::chrono::steady_clock::now() < deadline) {
    auto n = (*r)->run_for(1s);
    ASSERT_TRUE(n) << n.error().message;
    moved += *n;
  }
  EXPECT_EQ(moved, 1);
  EXPECT_GE((*r)->stats().held, 1) << "the 30 s record was held, not waited for";
  auto work = raw_->read_all(topic_, 1);
  ASSERT_EQ(work.size(), 1u);
  EXPECT_EQ(work[0].value, sooner);
  EXPECT_EQ(work[0].header("traceparent"), "00-ee-ff-01");
  EXPECT_EQ(work[0].header("bq-attempts"), "1");
  EXPECT_FALSE(work[0].header("bq-delay"));
  EXPECT_FALSE(work[0].header("bq-original-topic"));
  ASSERT_TRUE((*r)->close());
}

TEST_F(KafkaTest, AReinjectedRecordGoesOnlyWhereTheOperatorAllows) {
  // bq-original-topic and bq-delay are data anyone producing to a tier can set: a record on
  // <topic>.retry.1 naming another topic goes to <topic> (counted), one naming an allowed
  // topic goes there, and a bq-delay of INT64_MAX waits no longer than the longest tier.
  const std::string elsewhere = topic_ + "-elsewhere", allowed = topic_ + "-allowed";
  ASSERT_TRUE(raw_->create_topic(elsewhere, 1));
  ASSERT_TRUE(raw_->create_topic(allowed, 1));
  const std::string hijack = bqtest::envelope_text(1), routed = bqtest::envelope_text(2),
                    forever = bqtest::envelope_text(3);
  const std::string tier = topic_ + ".retry.1";
  ASSERT_EQ(raw_->produce(tier, hijack, {{"bq-delay", "0"}, {"bq-original-topic", elsewhere}}),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  ASSERT_EQ(raw_->produce(tier, routed, {{"bq-delay", "0"}, {"bq-original-topic", allowed}}),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  ASSERT_EQ(raw_->produce(tier, forever,
                          {{"bq-delay", "9223372036854775807"}, {"bq-original-topic", topic_}}),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  auto o = bqtest::kafka_options(group_);
  o.retry_topics = {std::chrono::seconds(2)};
  auto r = babelqueue::kafka::reinjector::open(o, {topic_}, {allowed});
  ASSERT_TRUE(r) << r.error().message;
  std::int64_t moved = 0;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (moved < 3 && std::chrono::steady_clock::now() < deadline) {
    auto n = (*r)->run_for(1s);
    ASSERT_TRUE(n) << n.error().message;
    moved += *n;
  }
  EXPECT_EQ(moved, 3) << "the INT64_MAX delay waited at most the 2 s tier";
  EXPECT_EQ((*r)->stats().refused_destinations, 1);
  auto work = raw_->read_all(topic_, 2);
  ASSERT_EQ(work.size(), 2u);
  std::set<std::string> bodies{work[0].value, work[1].value};
  EXPECT_EQ(bodies, (std::set<std::string>{hijack, forever}));
  auto there = raw_->read_all(allowed, 1);
  ASSERT_EQ(there.size(), 1u);
  EXPECT_EQ(there[0].value, routed);
  EXPECT_TRUE(raw_->read_all(elsewhere, 0, 2s).empty());
  ASSERT_TRUE((*r)->close());
}
