// sqs:// delayed publish on ElasticMQ: DelaySeconds on SendMessage and on every
// SendMessageBatch entry, rounded up to whole seconds (never early), SQS's 900 s cap refused
// before anything is sent, and FIFO queues — where SQS (and ElasticMQ) refuse a per-message
// DelaySeconds — answered not_supported instead of a silently dropped delay. SQS itself holds
// the message: it counts in ApproximateNumberOfMessagesDelayed, and no attribute mirrors it.
#include "sqs/sqs_fixture.hpp"

#include <set>
#include <thread>

using namespace std::chrono_literals;
using babelqueue::transport_errc;

namespace {

class SqsDelayedPublish : public bqtest::SqsTest {
 protected:
  /// ApproximateNumberOfMessages<kind> of `queue` ("" = visible, "Delayed", "NotVisible").
  int count(const std::string& queue, const std::string& kind = "") {
    auto u = peer_->url(queue);
    if (!u) return -1;
    auto a = peer_->api().get_queue_attributes(*u, 10s);
    const std::string key = "ApproximateNumberOfMessages" + kind;
    if (!a || !a->contains(key)) return -1;
    return std::stoi((*a)[key].get<std::string>());
  }
};

using steady = std::chrono::steady_clock;

}  // namespace

TEST_F(SqsDelayedPublish, CapabilitiesNameTheCapAndTheGranularity) {
  auto t = open();
  ASSERT_TRUE(t);
  const auto c = t->capabilities();
  EXPECT_TRUE(c.delayed_publish);
  EXPECT_EQ(c.max_delay, 900s) << "SQS's DelaySeconds maximum";
  EXPECT_EQ(c.delay_granularity, 1s) << "whole seconds";
  auto fifo = open("fifo=true");
  ASSERT_TRUE(fifo);
  EXPECT_FALSE(fifo->capabilities().delayed_publish) << "no per-message delay on FIFO queues";
}

TEST_F(SqsDelayedPublish, SqsHoldsTheMessageForItsDelaySecondsAndAddsNoAttribute) {
  auto t = open();
  ASSERT_TRUE(t);
  const std::string body = bqtest::envelope_text(1);
  const auto started = steady::now();
  auto sent = t->publish_delayed(queue_, body, {{"traceparent", "tp-delay"}}, 2s);
  ASSERT_TRUE(sent) << sent.error().message;
  EXPECT_EQ(count(queue_, "Delayed"), 1) << "held by SQS, not by the client";
  EXPECT_EQ(count(queue_), 0);
  EXPECT_FALSE(peer_->get(queue_, 1)) << "visible within 1 s of a 2 s delay";
  auto raw = peer_->get(queue_, 5);
  ASSERT_TRUE(raw) << "never delivered";
  EXPECT_GE(steady::now() - started, 1900ms) << "delivered early";
  EXPECT_EQ(raw->body, body) << "byte for byte";
  std::set<std::string> names;
  for (const auto& a : raw->attributes) names.insert(a.name);
  EXPECT_EQ(names,
            (std::set<std::string>{"bq-job", "bq-trace-id", "bq-message-id", "bq-source-lang",
                                   "bq-schema-version", "bq-created-at", "traceparent"}))
      << "the delay rides in DelaySeconds only, as the Python peer sends it";
}

TEST_F(SqsDelayedPublish, ASubSecondRemainderIsRoundedUpNeverEarly) {
  auto t = open();
  ASSERT_TRUE(t);
  const auto started = steady::now();
  ASSERT_TRUE(t->publish_delayed(queue_, bqtest::envelope_text(2), {}, 1001ms));
  std::this_thread::sleep_until(started + 1500ms);
  EXPECT_EQ(count(queue_, "Delayed"), 1) << "1001 ms is DelaySeconds 2, not 1";
  auto raw = peer_->get(queue_, 5);
  ASSERT_TRUE(raw);
  EXPECT_GE(steady::now() - started, 1900ms);
}

TEST_F(SqsDelayedPublish, PublishEachPutsDelaySecondsOnEveryBatchEntry) {
  auto t = open();
  ASSERT_TRUE(t);
  std::vector<babelqueue::outgoing_message> batch;
  batch.reserve(3);
  for (int i = 0; i < 3; ++i) batch.push_back({bqtest::envelope_text(10 + i), {}});
  const auto started = steady::now();
  auto results = t->publish_each(queue_, batch, 2s);
  ASSERT_EQ(results.size(), 3u);
  for (const auto& r : results) ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(count(queue_, "Delayed"), 3);
  EXPECT_FALSE(peer_->get(queue_, 1));
  int got = 0;
  while (got < 3 && peer_->get(queue_, 5)) ++got;
  EXPECT_EQ(got, 3);
  EXPECT_GE(steady::now() - started, 1900ms);
}

TEST_F(SqsDelayedPublish, OverNineHundredSecondsIsRefusedAndNothingIsSent) {
  auto t = open();
  ASSERT_TRUE(t);
  auto over = t->publish_delayed(queue_, bqtest::envelope_text(3), {}, 900001ms);
  ASSERT_FALSE(over);
  EXPECT_EQ(over.code(), transport_errc::invalid_argument) << over.error().message;
  std::vector<babelqueue::outgoing_message> batch{{bqtest::envelope_text(4), {}}};
  auto each = t->publish_each(queue_, batch, 901s);
  ASSERT_FALSE(each.at(0));
  EXPECT_EQ(each[0].code(), transport_errc::invalid_argument);
  auto negative = t->publish_each(queue_, batch, -1ms);
  ASSERT_FALSE(negative.at(0));
  EXPECT_EQ(negative[0].code(), transport_errc::invalid_argument);
  EXPECT_EQ(count(queue_, "Delayed") + count(queue_), 0) << "nothing reached SQS";
  // The cap itself is taken: DelaySeconds 900.
  ASSERT_TRUE(t->publish_delayed(queue_, bqtest::envelope_text(5), {}, 900s));
  EXPECT_EQ(count(queue_, "Delayed"), 1);
  (void)peer_->api().purge_queue(*peer_->url(queue_), 10s);
}

TEST_F(SqsDelayedPublish, AFifoQueueTakesNoPerMessageDelay) {
  const std::string fifo_queue = queue_ + ".fifo";
  peer_->create(fifo_queue);
  // What SQS (and ElasticMQ) answer to DelaySeconds on a FIFO message: why the binding refuses
  // it up front rather than sending it or dropping it.
  const std::string body = bqtest::envelope_text(6);
  babelqueue::sqs::detail::send_entry e;
  e.body = body;
  e.group_id = "g";
  e.deduplication_id = "d-1";
  e.delay_seconds = 1;
  auto server = peer_->api().send_message(*peer_->url(fifo_queue), e, 10s);
  ASSERT_FALSE(server);
  EXPECT_NE(server.error().message.find("DelaySeconds"), std::string::npos)
      << server.error().message;

  for (const std::string query : {"", "fifo=true"}) {
    SCOPED_TRACE(query.empty() ? "a .fifo name" : query);
    auto t = open(query);
    ASSERT_TRUE(t);
    auto r = t->publish_delayed(fifo_queue, body, {}, 1s);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.code(), transport_errc::not_supported) << r.error().message;
    std::vector<babelqueue::outgoing_message> batch{{body, {}}};
    auto each = t->publish_each(fifo_queue, batch, 1s);
    ASSERT_FALSE(each.at(0));
    EXPECT_EQ(each[0].code(), transport_errc::not_supported);
  }
  EXPECT_EQ(count(fifo_queue, "Delayed") + count(fifo_queue), 0) << "nothing was sent";
  auto t = open("fifo=true");
  ASSERT_TRUE(t);
  ASSERT_TRUE(t->publish_delayed(fifo_queue, body, {}, 0ms)) << "no delay: a plain publish";
  EXPECT_EQ(count(fifo_queue), 1);
}

TEST_F(SqsDelayedPublish, ADelayedPublishAfterCloseIsClosed) {
  auto t = open();
  ASSERT_TRUE(t);
  ASSERT_TRUE(t->close(steady::now() + 5s));
  auto r = t->publish_delayed(queue_, bqtest::envelope_text(7), {}, 1s);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.code(), transport_errc::closed);
  auto fifo = open("fifo=true");
  ASSERT_TRUE(fifo);
  ASSERT_TRUE(fifo->close(steady::now() + 5s));
  auto f = fifo->publish_delayed(queue_ + ".fifo", bqtest::envelope_text(7), {}, 1s);
  ASSERT_FALSE(f);
  EXPECT_EQ(f.code(), transport_errc::closed) << "closed before not_supported";
}
