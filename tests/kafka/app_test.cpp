// The D5 runtime rules over kafka:// (the App on Kafka): retries back onto the topic without
// tiers, the tier path end to end with the re-injector (fail twice, succeed from .retry.2
// after its delay; past the cap → .dlq), poison bytes and a refused schema-version header
// dead-lettered unchanged, the bq-attempts header overriding the body, an unknown URN
// released to the tail, out-of-band headers surviving a retry, trace_id on every hop.
#include "kafka/kafka_fixture.hpp"

#include <babelqueue/runtime/app.hpp>

#include <stdexcept>
#include <thread>

using namespace std::chrono_literals;
using babelqueue::json;

namespace {

class KafkaApp : public bqtest::KafkaTest {
 protected:
  babelqueue::app_options app_opts() {
    babelqueue::kafka::register_transport();
    babelqueue::app_options o;
    o.queue = topic_;
    o.poll_timeout = 8s;  // the first receive includes the group join
    o.dead_letter = true;
    return o;
  }
  std::string url(const std::string& extra = "") { return bqtest::kafka_url(group_, extra); }
};

}  // namespace

TEST_F(KafkaApp, WithoutTiersRetriesGoBackToTheTopicAndTheDlqCarriesThree) {
  babelqueue::app app(url(), app_opts());
  std::vector<std::int64_t> seen;
  app.handle("urn:babel:orders:created", [&](babelqueue::message& m) {
    seen.push_back(m.attempts());
    throw std::runtime_error("Payment gateway timeout");
  });
  auto id = app.publish("urn:babel:orders:created", json{{"order_id", 1}},
                        {.queue = "", .trace_id = "trace-kafka-1", .hdrs = {}});
  ASSERT_TRUE(id) << id.error().message;
  auto n = app.drain(topic_, 3);
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(*n, 3u);
  EXPECT_EQ(seen, (std::vector<std::int64_t>{0, 1, 2}));
  auto work = raw_->read_all(topic_, 3);
  ASSERT_EQ(work.size(), 3u) << "the original and two retry copies, on the work topic";
  EXPECT_EQ(work[2].header("bq-attempts"), "2");
  auto dlq = raw_->read_all(topic_ + ".dlq", 1);
  ASSERT_EQ(dlq.size(), 1u);
  auto env = babelqueue::decode(dlq[0].value).value();
  EXPECT_EQ(env.attempts(), 3);
  EXPECT_EQ(env.id(), *id);
  ASSERT_TRUE(env.dead_letter());
  EXPECT_EQ(env.dead_letter()->reason, "failed");
  EXPECT_EQ(dlq[0].header("bq-attempts"), "3") << "bq-attempts = the body's attempts";
  EXPECT_EQ(dlq[0].header("bq-trace-id"), "trace-kafka-1") << "trace_id on every hop";
}

TEST_F(KafkaApp, TheTierPathFailsTwiceAndSucceedsFromRetryTwoAfterItsDelay) {
  const std::string tiers = "&retry_topics=1s,2s";
  babelqueue::app app(url(tiers), app_opts());
  bqtest::running_reinjector reinjector(url(tiers), topic_);
  std::vector<std::int64_t> seen;
  std::vector<std::chrono::steady_clock::time_point> when;
  app.handle("urn:babel:orders:created", [&](babelqueue::message& m) {
    seen.push_back(m.attempts());
    when.push_back(std::chrono::steady_clock::now());
    if (m.attempts() < 2) throw std::runtime_error("not yet");
  });
  auto id = app.publish(
      "urn:babel:orders:created", json{{"order_id", 2}},
      {.queue = "",
       .trace_id = "trace-tier",
       .hdrs = {{"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}});
  ASSERT_TRUE(id);
  auto o = app_opts();
  auto n = app.drain(topic_, 3);
  ASSERT_TRUE(n) << n.error().message;
  ASSERT_EQ(seen, (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_GE(when[1] - when[0], 1s) << "waited tier 1";
  EXPECT_GE(when[2] - when[1], 2s) << "waited tier 2";
  auto t1 = raw_->read_all(topic_ + ".retry.1", 1);
  ASSERT_EQ(t1.size(), 1u);
  EXPECT_EQ(t1[0].header("bq-attempts"), "1");
  EXPECT_EQ(t1[0].header("bq-delay"), "1000");
  EXPECT_EQ(t1[0].header("bq-original-topic"), topic_);
  EXPECT_EQ(t1[0].header("traceparent"), "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
  EXPECT_EQ(babelqueue::decode(t1[0].value)->attempts(), 1);
  auto t2 = raw_->read_all(topic_ + ".retry.2", 1);
  ASSERT_EQ(t2.size(), 1u);
  EXPECT_EQ(t2[0].header("bq-attempts"), "2");
  EXPECT_EQ(t2[0].header("bq-delay"), "2000");
  auto work = raw_->read_all(topic_, 3);
  ASSERT_EQ(work.size(), 3u) << "the original and two re-injected copies";
  EXPECT_FALSE(work[2].header("bq-delay")) << "re-injected without the tier headers";
  EXPECT_EQ(work[2].header("bq-trace-id"), "trace-tier");
  EXPECT_EQ(babelqueue::decode(work[2].value)->id(), *id);
  EXPECT_TRUE(raw_->read_all(topic_ + ".dlq", 0, 1s).empty());
  EXPECT_EQ(reinjector.stop().reinjected, 2);
}

TEST_F(KafkaApp, PastTheCapTheTierPathEndsOnTheDlq) {
  const std::string tiers = "&retry_topics=1s";
  auto o = app_opts();
  o.max_attempts = 2;
  babelqueue::app app(url(tiers), o);
  bqtest::running_reinjector reinjector(url(tiers), topic_);
  std::vector<std::int64_t> seen;
  app.handle("urn:babel:orders:created", [&](babelqueue::message& m) {
    seen.push_back(m.attempts());
    throw std::runtime_error("always");
  });
  ASSERT_TRUE(app.publish("urn:babel:orders:created", json{{"order_id", 3}}));
  auto n = app.drain(topic_, 2);
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(seen, (std::vector<std::int64_t>{0, 1}));
  auto dlq = raw_->read_all(topic_ + ".dlq", 1);
  ASSERT_EQ(dlq.size(), 1u);
  auto env = babelqueue::decode(dlq[0].value).value();
  EXPECT_EQ(env.attempts(), 2);
  EXPECT_EQ(dlq[0].header("bq-attempts"), "2");
  ASSERT_TRUE(env.dead_letter());
  EXPECT_EQ(env.dead_letter()->attempts, 2);
}

TEST_F(KafkaApp, PoisonBytesAndARefusedSchemaVersionAreDeadLetteredUnchanged) {
  const std::string valid = bqtest::envelope_text(9);
  const std::vector<std::string> garbage = {"not json", std::string("\xff\xfe\x00 bin", 7),
                                            R"({"job":"urn:babel:x:y"})"};
  for (const auto& g : garbage) ASSERT_EQ(raw_->produce(topic_, g), RD_KAFKA_RESP_ERR_NO_ERROR);
  ASSERT_EQ(raw_->produce(topic_, valid, {{"bq-schema-version", "2"}}), RD_KAFKA_RESP_ERR_NO_ERROR);
  babelqueue::app app(url(), app_opts());
  int handled = 0;
  app.handle("urn:babel:test:item", [&](babelqueue::message&) { ++handled; });
  auto n = app.drain(topic_, 4);
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(handled, 0) << "a refused schema-version header never reaches a handler";
  auto dlq = raw_->read_all(topic_ + ".dlq", 4);
  ASSERT_EQ(dlq.size(), 4u);
  for (std::size_t i = 0; i < garbage.size(); ++i) EXPECT_EQ(dlq[i].value, garbage[i]);
  EXPECT_EQ(dlq[3].value, valid) << "original bytes";
  EXPECT_EQ(dlq[3].header("bq-dead-letter-reason"), "poison");
}

TEST_F(KafkaApp, TheAttemptsHeaderOverridesTheBody) {
  ASSERT_EQ(raw_->produce(topic_, bqtest::envelope_text(5), {{"bq-attempts", "2"}}),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  babelqueue::app app(url(), app_opts());
  std::vector<std::int64_t> seen;
  app.handle("urn:babel:test:item", [&](babelqueue::message& m) {
    seen.push_back(m.attempts());
    throw std::runtime_error("boom");
  });
  ASSERT_TRUE(app.drain(topic_, 1));
  EXPECT_EQ(seen, (std::vector<std::int64_t>{2}));
  auto dlq = raw_->read_all(topic_ + ".dlq", 1);
  ASSERT_EQ(dlq.size(), 1u);
  EXPECT_EQ(babelqueue::decode(dlq[0].value)->attempts(), 3);
}

TEST_F(KafkaApp, AnUnknownUrnIsReleasedUnchangedToTheTail) {
  auto o = app_opts();
  o.on_unknown_urn = babelqueue::unknown_urn_strategy::release;
  babelqueue::app app(url(), o);
  app.handle("urn:babel:test:item", [](babelqueue::message&) {});
  const std::string stranger = bqtest::envelope_text(1, "urn:babel:other:thing");
  ASSERT_TRUE(app.publish(
      babelqueue::decode(stranger).value(),
      {.queue = topic_,
       .hdrs = {{"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}}));
  ASSERT_TRUE(app.drain(topic_, 2));
  auto recs = raw_->read_all(topic_, 2);
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[1].value, stranger) << "same bytes";
  EXPECT_EQ(recs[1].header("traceparent"),
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
  EXPECT_EQ(recs[1].header("bq-attempts"), "0") << "a release is not an attempt";
}

TEST_F(KafkaApp, OutOfBandHeadersSurviveARetry) {
  babelqueue::app app(url(), app_opts());
  std::vector<std::string> seen;
  int calls = 0;
  app.handle("urn:babel:test:item", [&](babelqueue::message& m) {
    auto it = m.hdrs().find("tenant");
    seen.push_back(it == m.hdrs().end() ? "<none>" : it->second);
    if (++calls == 1) throw std::runtime_error("once");
  });
  ASSERT_TRUE(app.publish("urn:babel:test:item", json{{"n", 1}},
                          {.queue = "", .trace_id = "", .hdrs = {{"tenant", "acme"}}}));
  ASSERT_TRUE(app.drain(topic_, 2));
  EXPECT_EQ(seen, (std::vector<std::string>{"acme", "acme"}));
}
