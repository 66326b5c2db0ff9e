// Contract cases on the life of one message: publish → receive → ack leaves nothing; release
// puts it back unchanged, and not before its delay; a consumer that closes without settling
// gives it back; one publisher's order reaches one consumer; peek changes nothing.
#include "transport_contract/contract_fixture.hpp"

#include <string>
#include <vector>

namespace bqcontract {
namespace {

using clock = std::chrono::steady_clock;

// Headers a case sends where the binding carries them (none where it does not).
babelqueue::headers case_headers(const babelqueue::transport_capabilities& f,
                                 const std::string& value) {
  if (!f.headers) return {};
  return {{"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
          {"x-contract", value}};
}

// Every header of `sent` is in `got` with the same bytes.
void expect_headers_kept(const babelqueue::headers& sent, const babelqueue::headers& got) {
  for (const auto& [name, value] : sent) {
    auto it = got.find(name);
    ASSERT_NE(it, got.end()) << "header " << name << " lost";
    EXPECT_EQ(it->second, value) << "header " << name << " changed";
  }
}

TEST_P(TransportContract, PublishReceiveAckLeavesNothing) {
  auto& t = transport();
  const std::string body = bqtest::envelope_text(1, "urn:babel:test:item", queue_);
  ASSERT_TRUE(t.publish(queue_, body));
  auto m = next(t);
  ASSERT_TRUE(m) << "the published message did not arrive";
  EXPECT_EQ(m->body, body) << "the body is the envelope, byte for byte";
  EXPECT_EQ(m->queue, queue_);
  ASSERT_TRUE(t.ack(*m));
  EXPECT_TRUE(nothing_within(t, 1s)) << "an acked message came back";
  // A second consumer sees nothing either: the broker forgot it, not only this instance.
  auto* other = open();
  ASSERT_TRUE(other);
  EXPECT_TRUE(nothing_within(*other, 1s)) << "an acked message reached another consumer";
}

TEST_P(TransportContract, ReleasePutsTheMessageBackUnchanged) {
  auto& t = transport();
  const std::string body = bqtest::envelope_text(2, "urn:babel:test:item", queue_);
  const auto hdrs = case_headers(features(), "release");
  auto first = publish_and_take(t, body, hdrs);
  ASSERT_TRUE(first);
  auto released = t.release(*first);
  ASSERT_TRUE(released) << released.error().message;
  auto again = next(t);
  ASSERT_TRUE(again) << "a released message did not come back";
  EXPECT_EQ(again->body, body);
  expect_headers_kept(hdrs, again->hdrs);
  ASSERT_TRUE(t.ack(*again));
  EXPECT_TRUE(nothing_within(t, 1s));
}

TEST_P(TransportContract, ReleaseWithADelayIsNotSeenBeforeIt) {
  BQ_CONTRACT_REQUIRE(native_delay);
  auto& t = transport();
  const std::string body = bqtest::envelope_text(3, "urn:babel:test:item", queue_);
  const auto hdrs = case_headers(features(), "delayed release");
  auto first = publish_and_take(t, body, hdrs);
  ASSERT_TRUE(first);
  constexpr auto delay = 2s;  // whole seconds: SQS's granularity
  const auto released_at = clock::now();
  auto released = t.release(*first, delay);
  ASSERT_TRUE(released) << released.error().message;
  EXPECT_TRUE(nothing_within(t, 1s)) << "a message released with 2 s came back within 1 s";
  auto again = next(t, 15s);
  ASSERT_TRUE(again) << "a message released with a delay never came back";
  const auto waited = clock::now() - released_at;
  // 100 ms of slack for brokers that schedule on a coarse clock.
  EXPECT_GE(waited, delay - 100ms)
      << "came back after " << std::chrono::duration_cast<std::chrono::milliseconds>(waited).count()
      << " ms";
  EXPECT_EQ(again->body, body);
  expect_headers_kept(hdrs, again->hdrs);
  ASSERT_TRUE(t.ack(*again));
}

TEST_P(TransportContract, AConsumerClosingWithoutAckGivesTheMessageBack) {
  auto* first = open();
  ASSERT_TRUE(first);
  const std::string body = bqtest::envelope_text(4, "urn:babel:test:item", queue_);
  ASSERT_TRUE(first->publish(queue_, body));
  auto m = next(*first);
  ASSERT_TRUE(m);
  ASSERT_TRUE(first->close(clock::now() + 10s));
  auto* second = open();
  ASSERT_TRUE(second);
  // Up to the binding's redelivery time: a consumer group rebalance (Kafka), a visibility
  // timeout (SQS, sqlite: 5 s in these URLs) or at once (AMQP, Pulsar, memory).
  auto again = next(*second, 30s);
  ASSERT_TRUE(again) << "a message received by a consumer that closed without settling it "
                        "was not delivered again";
  EXPECT_EQ(again->body, body);
  ASSERT_TRUE(second->ack(*again));
}

TEST_P(TransportContract, OneConsumerGetsOnePublishersOrder) {
  BQ_CONTRACT_REQUIRE(ordered);
  auto& t = transport();
  constexpr int count = 20;
  std::vector<std::string> sent;
  for (int i = 0; i < count; ++i) {
    sent.push_back(bqtest::envelope_text(i, "urn:babel:test:item", queue_));
    ASSERT_TRUE(t.publish(queue_, sent.back()));
  }
  for (int i = 0; i < count; ++i) {
    auto m = next(t);
    ASSERT_TRUE(m) << "message " << i << " of " << count << " missing";
    EXPECT_EQ(m->body, sent[static_cast<std::size_t>(i)]) << "out of order at " << i;
    ASSERT_TRUE(t.ack(*m));
  }
}

TEST_P(TransportContract, PeekListsWithoutTaking) {
  BQ_CONTRACT_REQUIRE(peek);
  auto& t = transport();
  const std::string a = bqtest::envelope_text(5, "urn:babel:test:item", queue_);
  const std::string b = bqtest::envelope_text(6, "urn:babel:test:item", queue_);
  ASSERT_TRUE(t.publish(queue_, a));
  ASSERT_TRUE(t.publish(queue_, b));
  for (int round = 0; round < 2; ++round) {
    auto seen = t.peek(queue_, 0, 10);
    ASSERT_TRUE(seen) << seen.error().message;
    ASSERT_EQ(seen->size(), 2u);
    EXPECT_EQ((*seen)[0].body, a);
    EXPECT_EQ((*seen)[1].body, b);
  }
  auto skipped = t.peek(queue_, 1, 10);
  ASSERT_TRUE(skipped);
  ASSERT_EQ(skipped->size(), 1u);
  EXPECT_EQ((*skipped)[0].body, b);
  auto m = next(t);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->body, a) << "peek reordered the queue";
  EXPECT_FALSE(m->delivery_count.value_or(1) > 1) << "peek counted as a delivery";
}

}  // namespace
}  // namespace bqcontract
