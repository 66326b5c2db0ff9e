// Redrive on an SQS FIFO queue within the 5-minute deduplication window (ElasticMQ keeps it):
// the redriven body is the original byte for byte (attempts 0, same meta.id), and so are its
// retry and dead-letter copies. Without the redrive run's token in MessageDeduplicationId
// (headers.hpp redrive_header, src/sqs/message.hpp) SQS accepts each of those sends and drops
// it as a duplicate: the redriven message never arrives, and its DLQ copy is acked — lost.
#include "sqs/message.hpp"
#include "sqs/sqs_fixture.hpp"

#include <babelqueue/headers.hpp>
#include <babelqueue/redrive/redrive.hpp>
#include <babelqueue/runtime/app.hpp>

#include <stdexcept>
#include <vector>

using namespace std::chrono_literals;
using babelqueue::json;

namespace {

class SqsFifoRedrive : public bqtest::SqsTest {
 protected:
  void SetUp() override {
    bqtest::SqsTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    babelqueue::sqs::register_transport();
    url_ = bqtest::sqs_url() + "&create_queues=true";
    fifo_ = queue_ + ".fifo";
  }
  babelqueue::app_options app_opts() {
    babelqueue::app_options o;
    o.queue = fifo_;
    o.poll_timeout = 300ms;
    o.dead_letter = true;
    return o;
  }
  std::string url_, fifo_;
};

TEST_F(SqsFifoRedrive, ARedriveAndASecondFailureWithinTheWindowAreDeliveredNotDeduplicated) {
  babelqueue::app app(url_, app_opts());
  std::vector<std::int64_t> seen;
  app.handle("urn:babel:orders:created", [&](babelqueue::message& m) {
    seen.push_back(m.attempts());
    throw std::runtime_error("still failing");
  });
  auto id = app.publish("urn:babel:orders:created", json{{"order_id", 1}});
  ASSERT_TRUE(id) << id.error().message;
  ASSERT_EQ(app.drain().value(), 3u);  // attempts 0, 1, 2, then the DLQ
  EXPECT_EQ(seen, (std::vector<std::int64_t>{0, 1, 2}));

  auto broker = babelqueue::open_transport(url_).value();
  babelqueue::redrive_options quick;
  quick.receive_timeout = 1s;
  auto first = babelqueue::redrive(*broker, fifo_ + ".dlq", quick);
  ASSERT_TRUE(first.ok()) << first.error->message;
  ASSERT_EQ(first.redriven, 1u);

  // Within the window: the redriven generation arrives and fails through its retries again.
  seen.clear();
  EXPECT_EQ(app.drain().value(), 3u) << "the redriven message was swallowed by deduplication";
  EXPECT_EQ(seen, (std::vector<std::int64_t>{0, 1, 2}));

  // ... and its second dead-letter copy reached the DLQ (not deduplicated against the first).
  quick.dry_run = true;
  auto listed = babelqueue::redrive(*broker, fifo_ + ".dlq", quick);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed.items.size(), 1u) << "the second failure's DLQ copy was swallowed";
  EXPECT_EQ(listed.items[0].id, *id);
  (void)broker->close(std::chrono::steady_clock::now() + 5s);
}

}  // namespace

// The run token as redrive writes it (Unix ms, digits) is used as it is; anything else a
// sender put in `bq-redrive` — forged, long, characters SQS refuses — becomes 16 hex digits
// of its SHA-256, so the id stays within SQS's rules and 128 characters.
TEST(SqsDeduplicationId, AForgedRedriveTokenIsHashedIntoCharactersSqsAccepts) {
#if BABELQUEUE_TEST_SHARED_LIBS
  GTEST_SKIP() << "a detail function: tested in the static builds";
#else
  namespace d = babelqueue::sqs::detail;
  const std::string body = bqtest::envelope_text(1);
  const std::string id = "0b6f8a2e-1c4d-4e5f-8a9b-0c1d2e3f4a5b";
  auto with = [&](const std::string& token) {
    return d::deduplication_id(body, id, {{std::string(babelqueue::redrive_header), token}});
  };
  EXPECT_EQ(with("1765000000000"), id + ":r1765000000000");
  EXPECT_EQ(d::deduplication_id(body, id, {}), id);
  for (const std::string& forged :
       {std::string("not-a-number"), std::string("12 34"), std::string("\xC3\xA9t\xC3\xA9"),
        std::string(21, '9'), std::string(5000, 'x'), std::string("1\n2"), std::string("-1")}) {
    const std::string got = with(forged);
    ASSERT_EQ(got.size(), id.size() + 2 + 16) << forged.substr(0, 20);
    EXPECT_EQ(got.substr(0, id.size() + 2), id + ":r");
    EXPECT_EQ(got.find_first_not_of("0123456789abcdef", id.size() + 2), std::string::npos) << got;
  }
  EXPECT_NE(with("a"), with("b")) << "different tokens, different ids";
  const std::string long_id(120, 'i');
  EXPECT_LE(d::deduplication_id(body, long_id, {{"bq-redrive", "forged"}}).size(), 128U);
#endif
}
