// Contract cases on publish_batch(): batches of 1, 64 and the binding's per-request limit
// (capabilities().max_batch_messages) arrive whole, each message once.
#include "transport_contract/contract_fixture.hpp"

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace bqcontract {
namespace {

// Publishes `count` messages in one publish_batch() and receives them all (in any order
// where the binding promises none), each exactly once; nothing is left.
void batch_arrives_whole(babelqueue::transport& t, const std::string& queue, std::size_t count,
                         const std::function<std::optional<babelqueue::received_message>()>& next,
                         bool ordered) {
  std::vector<babelqueue::outgoing_message> batch;
  for (std::size_t i = 0; i < count; ++i) {
    batch.push_back(
        {bqtest::envelope_text(static_cast<long>(i), "urn:babel:test:item", queue), {}});
  }
  auto r = t.publish_batch(queue, batch);
  ASSERT_TRUE(r) << r.error().message;
  std::multiset<std::string> expected;
  for (const auto& m : batch) expected.insert(m.body);
  for (std::size_t i = 0; i < count; ++i) {
    auto m = next();
    ASSERT_TRUE(m) << "got " << i << " of " << count;
    if (ordered) {
      EXPECT_EQ(m->body, batch[i].body) << "out of order at " << i;
    }
    auto it = expected.find(m->body);
    ASSERT_NE(it, expected.end()) << "a message arrived twice or was never sent";
    expected.erase(it);
    ASSERT_TRUE(t.ack(*m));
  }
}

TEST_P(TransportContract, ABatchOfOneArrives) {
  auto& t = transport();
  batch_arrives_whole(
      t, queue_, 1, [&] { return next(t); }, features().ordered);
}

TEST_P(TransportContract, ABatchOf64ArrivesWhole) {
  auto& t = transport();
  batch_arrives_whole(
      t, queue_, 64, [&] { return next(t); }, features().ordered);
  if (HasFatalFailure()) return;
  EXPECT_TRUE(nothing_within(t, 500ms)) << "more messages than were published";
}

TEST_P(TransportContract, ABatchAtTheBindingsLimitArrivesWhole) {
  BQ_CONTRACT_REQUIRE(max_batch_messages);
  auto& t = transport();
  // One request's worth, plus one: the split into requests loses and repeats nothing.
  batch_arrives_whole(
      t, queue_, features().max_batch_messages + 1, [&] { return next(t); }, features().ordered);
  if (HasFatalFailure()) return;
  EXPECT_TRUE(nothing_within(t, 500ms)) << "more messages than were published";
}

}  // namespace
}  // namespace bqcontract
