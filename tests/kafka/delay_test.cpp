// publish_delayed() on kafka:// against the real broker (issue #37): the record it parks —
// which tier, which headers, which timestamp — as a plain librdkafka consumer reads it; the
// seam's checks with and without tiers; and the record coming back to the work topic through
// the re-injector no earlier than its delay, byte for byte.
#include "kafka/kafka_fixture.hpp"

#include <babelqueue/bindings/kafka.hpp>

#include <regex>

using namespace std::chrono_literals;
using bqtest::KafkaTest;

namespace {

std::int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// An envelope made an hour ago: were the parked record stamped with meta.created_at (as a
// plain publish is), the re-injector would find it long due and return it at once.
std::string made_an_hour_ago(long n) {
  const std::string body = bqtest::envelope_text(n, "urn:babel:test:later");
  return std::regex_replace(
      body, std::regex(R"("created_at":\d+)"),
      "\"created_at\":" + std::to_string(wall_ms() - std::int64_t{3600} * 1000));
}

const std::string delay_traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

}  // namespace

TEST_F(KafkaTest, ADelayedPublishParksOnTheSmallestTierThatHoldsTheDelay) {
  auto t = open("&retry_topics=1s,5s,30s");
  ASSERT_TRUE(t);
  const auto caps = t->capabilities();
  EXPECT_TRUE(caps.delayed_publish);
  EXPECT_EQ(caps.max_delay, 30s) << "the longest tier";
  EXPECT_EQ(caps.delay_granularity, 0ms);
  const std::string body = made_an_hour_ago(1);
  const auto before = wall_ms();
  ASSERT_TRUE(t->publish_delayed(topic_, body, {{"traceparent", delay_traceparent}}, 2s));
  const auto after = wall_ms();
  // One more per tier boundary: exactly a tier's delay stays on it; 1 ms more is the next one.
  ASSERT_TRUE(t->publish_delayed(topic_, bqtest::envelope_text(2), {}, 1s));
  ASSERT_TRUE(t->publish_delayed(topic_, bqtest::envelope_text(3), {}, 5001ms));

  auto tier2 = raw_->read_all(topic_ + ".retry.2", 1);
  ASSERT_EQ(tier2.size(), 1u) << "2 s waits on the 5 s tier";
  const auto& r = tier2[0];
  EXPECT_EQ(r.value, body) << "the envelope bytes, unchanged";
  EXPECT_FALSE(r.key);
  EXPECT_EQ(r.header("bq-delay"), "2000") << "the delay asked for, in ms (not the tier's 5000)";
  EXPECT_EQ(r.header("bq-original-topic"), topic_);
  EXPECT_EQ(r.header("bq-attempts"), "0") << "a delay is not a retry";
  EXPECT_EQ(r.header("bq-job"), "urn:babel:test:later");
  EXPECT_EQ(r.header("bq-schema-version"), "1");
  EXPECT_EQ(r.header("bq-source-lang"), "cpp");
  EXPECT_EQ(r.header("traceparent"), delay_traceparent);
  EXPECT_EQ(r.headers.size(), 9u) << "six bq- headers, bq-delay, bq-original-topic, traceparent";
  EXPECT_EQ(r.timestamp_type, RD_KAFKA_TIMESTAMP_CREATE_TIME);
  EXPECT_GE(r.timestamp, before) << "stamped at the publish, not meta.created_at";
  EXPECT_LE(r.timestamp, after);

  auto tier1 = raw_->read_all(topic_ + ".retry.1", 1);
  ASSERT_EQ(tier1.size(), 1u);
  EXPECT_EQ(tier1[0].header("bq-delay"), "1000");
  auto tier3 = raw_->read_all(topic_ + ".retry.3", 1);
  ASSERT_EQ(tier3.size(), 1u);
  EXPECT_EQ(tier3[0].header("bq-delay"), "5001");
  EXPECT_TRUE(raw_->read_all(topic_, 0, 1s).empty()) << "nothing on the work topic itself";
}

TEST_F(KafkaTest, DelaysWithoutTiersOrOverTheLongestAreRefusedAndNothingIsSent) {
  auto plain = open();
  ASSERT_TRUE(plain);
  EXPECT_FALSE(plain->capabilities().delayed_publish);
  EXPECT_EQ(plain->capabilities().max_delay, 0ms);
  auto r = plain->publish_delayed(topic_, bqtest::envelope_text(1), {}, 1s);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.code(), babelqueue::transport_errc::not_supported) << r.error().message;
  EXPECT_NE(r.error().message.find("retry_topics"), std::string::npos) << r.error().message;

  auto tiers = open("&retry_topics=1s,5s");
  ASSERT_TRUE(tiers);
  auto over = tiers->publish_delayed(topic_, bqtest::envelope_text(2), {}, 5001ms);
  ASSERT_FALSE(over);
  EXPECT_EQ(over.code(), babelqueue::transport_errc::invalid_argument) << over.error().message;
  auto bad = tiers->publish_delayed("bad topic!", bqtest::envelope_text(3), {}, 1s);
  EXPECT_EQ(bad.code(), babelqueue::transport_errc::invalid_argument);
  for (const auto& topic : {topic_, topic_ + ".retry.1", topic_ + ".retry.2"}) {
    EXPECT_TRUE(raw_->read_all(topic, 0, 1s).empty()) << topic;
  }

  ASSERT_TRUE(plain->close(std::chrono::steady_clock::now() + 5s));
  ASSERT_TRUE(tiers->close(std::chrono::steady_clock::now() + 5s));
  EXPECT_EQ(plain->publish_delayed(topic_, "x", {}, 1s).code(), babelqueue::transport_errc::closed);
  EXPECT_EQ(tiers->publish_delayed(topic_, "x", {}, 1s).code(), babelqueue::transport_errc::closed);
}

// The re-injector counts the delay (bq-delay, 2 s; parked on the 10 s tier) from the record's
// timestamp (the publish), although the envelope is an hour old, and returns it unchanged
// minus its two tier headers.
TEST_F(KafkaTest, TheReinjectorReturnsADelayedRecordNoEarlierThanItsDelay) {
  const std::string tiers = "&retry_topics=1s,10s";
  auto t = open(tiers);
  ASSERT_TRUE(t);
  bqtest::running_reinjector reinjector(bqtest::kafka_url(group_, tiers), topic_);
  const std::string body = made_an_hour_ago(4);
  const auto sent = std::chrono::steady_clock::now();
  ASSERT_TRUE(t->publish_delayed(topic_, body, {{"traceparent", delay_traceparent}}, 2s));
  auto early = t->receive(topic_, 1500ms);
  ASSERT_TRUE(early) << early.error().message;
  EXPECT_FALSE(early->has_value()) << "arrived before its delay";
  auto m = next(*t, topic_);
  ASSERT_TRUE(m) << "never came back";
  const auto waited = std::chrono::steady_clock::now() - sent;
  EXPECT_GE(waited, 1900ms);
  EXPECT_LT(waited, 8s) << "due at its own delay, not at the 10 s tier's";
  EXPECT_EQ(m->body, body);
  EXPECT_EQ(m->hdrs, (babelqueue::headers{{"traceparent", delay_traceparent}}))
      << "bq-delay and bq-original-topic are the tier's, dropped on the way back";
  EXPECT_EQ(m->delivery_count, 0);
  ASSERT_TRUE(t->ack(*m));
  EXPECT_EQ(reinjector.stop().reinjected, 1);
  auto work = raw_->read_all(topic_, 1);
  ASSERT_EQ(work.size(), 1u);
  EXPECT_FALSE(work[0].header("bq-delay"));
  EXPECT_FALSE(work[0].header("bq-original-topic"));
  EXPECT_EQ(work[0].header("bq-attempts"), "0");
}
