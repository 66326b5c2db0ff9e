// kafka:// without a broker: URLs and options, the pure binding (projection, attempts,
// schema gate, retry tiers), the per-partition commit tracker and route_retry().
#include "kafka/offset_tracker.hpp"

#include <babelqueue/bindings/kafka.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/kafka/kafka_transport.hpp>
#include <babelqueue/kafka/reinjector.hpp>
#include <babelqueue/runtime/error.hpp>
#include <babelqueue/runtime/url.hpp>

#include <gtest/gtest.h>

using namespace std::chrono_literals;
namespace kafka = babelqueue::kafka;
namespace bk = babelqueue::bindings::kafka;

namespace {

babelqueue::result<kafka::options> parse(const std::string& url) {
  auto u = babelqueue::broker_url::parse(url);
  if (!u) return babelqueue::fail(u.error());
  return kafka::options_from_url(*u);
}

std::string order_body(std::int64_t attempts = 0) {
  babelqueue::make_options mo;
  mo.queue = "orders";
  mo.trace_id = "trace-k-1";
  auto env = babelqueue::make("urn:babel:orders:created", babelqueue::json{{"id", 1}}, mo).value();
  env.set_attempts(attempts);
  return babelqueue::encode(env).value();
}

}  // namespace

TEST(KafkaOptions, TheHostListIsTheBootstrapServers) {
  auto o = parse("kafka://k1:9093,k2,[::1]:9094");
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_EQ(o->brokers, (std::vector<std::string>{"k1:9093", "k2:9092", "[::1]:9094"}));
  EXPECT_EQ(o->group, "babelqueue");
  EXPECT_EQ(o->acks, "all");
  EXPECT_TRUE(o->retry_topics.empty());
  EXPECT_EQ(parse("kafka://h")->brokers, std::vector<std::string>{"h:9092"});
}

TEST(KafkaOptions, TypedKeysAndThePassThroughPrefix) {
  auto o = parse(
      "kafka://h:9092?group=billing&client_id=c1&acks=1&linger=20ms&batch=500&compression=lz4"
      "&retry_topics=1m,5s,10m&operation_timeout=3s&commit_interval=0&commit_batch=10"
      "&rdkafka.fetch.wait.max.ms=50&sasl_password=s3cret&security_protocol=sasl_plaintext");
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_EQ(o->group, "billing");
  EXPECT_EQ(o->client_id, "c1");
  EXPECT_EQ(o->acks, "1");
  EXPECT_EQ(o->linger, 20ms);
  EXPECT_EQ(o->batch, 500);
  EXPECT_EQ(o->compression, "lz4");
  EXPECT_EQ(o->retry_topics, (std::vector<std::chrono::milliseconds>{5s, 1min, 10min}));
  EXPECT_EQ(o->operation_timeout, 3s);
  EXPECT_EQ(o->commit_interval, 0ms);
  EXPECT_EQ(o->commit_batch, 10);
  EXPECT_EQ(o->rdkafka.at("fetch.wait.max.ms"), "50");
  EXPECT_EQ(o->sasl_password, "s3cret");
}

TEST(KafkaOptions, MistakesAreRefusedWithTheirReason) {
  for (const char* url :
       {"kafka://h?grup=x", "kafka://h?acks=2", "kafka://h?retry_topics=5s,,1m",
        "kafka://h?retry_topics=5s,5s", "kafka://h?retry_topics=0s", "kafka://h?batch=0",
        "kafka://u:p@h", "kafka://h/topic", "kafka://h?rdkafka.=1", "kafka://h?group="}) {
    auto o = parse(url);
    ASSERT_FALSE(o) << url;
    EXPECT_TRUE(o.code() == babelqueue::condition::invalid_argument)
        << url << ": " << o.code().message();
    EXPECT_FALSE(o.error().message.empty());
  }
}

TEST(KafkaOptions, ALibrdkafkaTypoFailsAtOpenWithLibrdkafkasMessage) {
  kafka::options o;
  o.rdkafka["fetch.wait.max.msec"] = "5";  // no such property
  auto t = kafka::kafka_transport::open(o);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.code(), babelqueue::transport_errc::invalid_argument);
  EXPECT_NE(t.error().message.find("fetch.wait.max.msec"), std::string::npos) << t.error().message;
}

// Issue #39: `babelqueue kafka reinject` against a broker that does not answer crashed (the
// destructor of the half-opened re-injector closed a consumer it never had): open() now
// answers the probe's error, and nothing crashes.
TEST(KafkaReinjector, OpeningAgainstNoBrokerFailsWithoutACrash) {
  auto o = parse("kafka://127.0.0.1:1?retry_topics=5s&operation_timeout=1s");
  ASSERT_TRUE(o) << o.error().message;
  auto r = kafka::reinjector::open(*o, {"t"});
  ASSERT_FALSE(r);
  EXPECT_TRUE(r.code() == babelqueue::condition::unavailable ||
              r.code() == babelqueue::condition::timeout)
      << r.error().message;
}

TEST(KafkaOptions, AHostListIsParsedAndRedactedWhole) {
  babelqueue::kafka::register_transport();
  auto u = babelqueue::broker_url::parse("kafka://a:1,b:2?x=1");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->more_hosts.size(), 1u);
  EXPECT_EQ(u->redacted(), "kafka://a:1,b:2?x=1");
}

TEST(KafkaBinding, ProjectionWritesTheSixHeadersAndCreatedAt) {
  const std::string body = order_body(2);
  auto env = babelqueue::decode(body).value();
  const auto p =
      bk::project(body, {{"traceparent", "00-ab-cd-01"}, {"bq-attempts", "9"}, {"", "x"}});
  ASSERT_EQ(p.headers.size(), 7u);
  EXPECT_EQ(p.headers[0], (bk::record_header{"bq-job", "urn:babel:orders:created"}));
  EXPECT_EQ(*p.header("bq-trace-id"), "trace-k-1");
  EXPECT_EQ(*p.header("bq-message-id"), env.id());
  EXPECT_EQ(*p.header("bq-schema-version"), "1");
  EXPECT_EQ(*p.header("bq-source-lang"), "cpp");
  EXPECT_EQ(*p.header("bq-attempts"), "2") << "a contract header wins a collision";
  EXPECT_EQ(*p.header("traceparent"), "00-ab-cd-01");
  EXPECT_EQ(p.timestamp_ms, env.created_at());
  const auto poison = bk::project("not json", {{"bq-dead-letter-reason", "poison"}});
  ASSERT_EQ(poison.headers.size(), 1u);
  EXPECT_FALSE(poison.timestamp_ms);
}

TEST(KafkaBinding, AttemptsHeaderIsAuthoritativeWhenParseable) {
  EXPECT_EQ(bk::parse_attempts("3"), 3);
  EXPECT_EQ(bk::parse_attempts(" 4 "), 4);
  EXPECT_EQ(bk::parse_attempts("+2"), 2);
  EXPECT_FALSE(bk::parse_attempts("3x"));
  EXPECT_FALSE(bk::parse_attempts("abc"));
  EXPECT_FALSE(bk::parse_attempts("-1"));
  EXPECT_FALSE(bk::parse_attempts(""));
  EXPECT_EQ(bk::reconcile_attempts(5, 1), 1);
  EXPECT_EQ(bk::reconcile_attempts(3, std::nullopt), 3);
}

TEST(KafkaBinding, SchemaVersionGateFollowsThePhpRule) {
  EXPECT_FALSE(bk::refused_schema_version(std::nullopt));
  EXPECT_FALSE(bk::refused_schema_version(""));
  EXPECT_FALSE(bk::refused_schema_version(" \t "));
  EXPECT_FALSE(bk::refused_schema_version("1"));
  EXPECT_EQ(bk::refused_schema_version("2"), "2");
  EXPECT_EQ(bk::refused_schema_version(" 1"), " 1");
  EXPECT_EQ(bk::refused_schema_version("1.0"), "1.0");
  EXPECT_EQ(bk::refused_schema_version("\xc2\xa0"), "\xc2\xa0") << "NBSP is not ASCII blank";
  EXPECT_EQ(bk::unsupported_schema_urn("2"), "babelqueue:unsupported-schema-version:2");
}

TEST(KafkaBinding, RetryTierNamesAndChoices) {
  EXPECT_EQ(bk::retry_topic("orders", 2), "orders.retry.2");
  EXPECT_EQ(bk::work_topic_of("orders.retry.2"), "orders");
  EXPECT_EQ(bk::work_topic_of("a.retry.x.retry.10"), "a.retry.x");
  EXPECT_FALSE(bk::work_topic_of("orders.retry."));
  EXPECT_FALSE(bk::work_topic_of("orders"));
  EXPECT_EQ(bk::retry_tier(0, 3), 1u);
  EXPECT_EQ(bk::retry_tier(1, 3), 2u);
  EXPECT_EQ(bk::retry_tier(7, 3), 3u);
  EXPECT_EQ(bk::retry_tier(0, 0), 0u);
  const std::vector<std::chrono::milliseconds> tiers{5s, 1min};
  EXPECT_EQ(bk::delay_tier(1ms, tiers), 1u);
  EXPECT_EQ(bk::delay_tier(5s, tiers), 1u);
  EXPECT_EQ(bk::delay_tier(6s, tiers), 2u);
  EXPECT_EQ(bk::delay_tier(2min, tiers), 0u);
  EXPECT_EQ(bk::dead_letter_topic("orders"), "orders.dlq");
  EXPECT_EQ(kafka::parse_retry_topics("10m,5s")->front(), 5s);
}

TEST(KafkaOffsetTracker, NeverCommitsPastARecordInFlight) {
  babelqueue::kafka::detail::offset_tracker t;
  t.assign(0);
  auto a = t.track(0, 10), b = t.track(0, 11), c = t.track(0, 12);
  EXPECT_TRUE(t.settle(c));
  EXPECT_TRUE(t.settle(b));
  auto commits = t.take_commits();
  ASSERT_EQ(commits.size(), 1u);
  EXPECT_EQ(commits[0], (std::pair<std::int32_t, std::int64_t>{0, 10})) << "stuck behind 10";
  EXPECT_TRUE(t.settle(a));
  commits = t.take_commits();
  ASSERT_EQ(commits.size(), 1u);
  EXPECT_EQ(commits[0].second, 13);
  EXPECT_TRUE(t.take_commits().empty()) << "nothing moved";
  EXPECT_FALSE(t.settle(a)) << "settled twice";
}

TEST(KafkaOffsetTracker, ARevokedPartitionsRecordsAreStale) {
  babelqueue::kafka::detail::offset_tracker t;
  t.assign(0);
  t.assign(1);
  auto a = t.track(0, 5), b = t.track(1, 7);
  EXPECT_EQ(t.revoke(0), 1u);
  EXPECT_FALSE(t.settle(a));
  t.assign(0);
  EXPECT_FALSE(t.settle(a)) << "a new assignment is a new epoch";
  EXPECT_TRUE(t.settle(b));
  auto only = t.take_commits(std::set<std::int32_t>{1});
  ASSERT_EQ(only.size(), 1u);
  EXPECT_EQ(only[0], (std::pair<std::int32_t, std::int64_t>{1, 8}));
}

TEST(KafkaOffsetTracker, ARewoundRecordHoldsItsPartitionsCommit) {
  babelqueue::kafka::detail::offset_tracker t;
  auto a = t.track(3, 40);
  EXPECT_TRUE(t.rewind(a));
  auto held = t.take_commits();
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].second, 40) << "the next record to consume is the rewound one, not past it";
  auto again = t.track(3, 40);
  EXPECT_TRUE(t.settle(again));
  EXPECT_EQ(t.take_commits().at(0).second, 41);
}
