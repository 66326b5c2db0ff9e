// sqs:// when the server goes away: ElasticMQ killed (SIGKILL) mid-consume and started
// again on the same port. Every call in the outage fails with a typed error within its
// bound (never a hang, never a crash), messages handed out before the outage cannot be
// settled any more, and the transport works again — same instance, the connection opened
// anew — once the server is back (it keeps queues and messages across the restart: H2
// storage). These tests stop the shared server, so CTest runs them alone (RUN_SERIAL).
#include "sqs/sqs_fixture.hpp"

#include <cstdlib>

using namespace std::chrono_literals;
using babelqueue::transport_errc;

namespace {

class SqsRestart : public bqtest::SqsTest {
 protected:
  void SetUp() override {
    bqtest::SqsTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ctl_ = bqtest::env_or_empty("BABELQUEUE_SQS_CTL");
    ASSERT_FALSE(ctl_.empty()) << "services.sh exports BABELQUEUE_SQS_CTL";
  }
  void TearDown() override {
    (void)ctl("start");  // whatever happened, leave the server running
  }
  int ctl(const std::string& action) {
    return std::system((ctl_ + " " + action + " >/dev/null 2>&1").c_str());
  }
  std::string ctl_;
};

}  // namespace

TEST_F(SqsRestart, AKilledServerMidConsumeIsTypedErrorsThenWorksAgain) {
  auto t = open("retries=1&operation_timeout=3s&connect_timeout=1s");
  ASSERT_TRUE(t);
  std::vector<babelqueue::outgoing_message> batch;
  batch.reserve(5);
  for (int i = 0; i < 5; ++i) batch.push_back({bqtest::envelope_text(i), {}});
  ASSERT_TRUE(t->publish_batch(queue_, batch));
  auto held = t->receive(queue_, 5s);
  ASSERT_TRUE(held && held->has_value());
  const auto connects_before = t->stats().connects;

  ASSERT_EQ(ctl("kill"), 0);
  const auto started = std::chrono::steady_clock::now();
  auto ack = t->ack(**held);
  ASSERT_FALSE(ack);
  EXPECT_EQ(ack.code(), transport_errc::unavailable) << ack.error().message;
  auto pub = t->publish(queue_, bqtest::envelope_text(9));
  ASSERT_FALSE(pub);
  EXPECT_EQ(pub.code(), transport_errc::unavailable) << pub.error().message;
  // The messages already buffered are handed out (they are real deliveries); once the
  // buffer is empty, receive reaches the server and fails.
  bool receive_failed = false;
  for (int i = 0; i < 10 && !receive_failed; ++i) {
    auto r = t->receive(queue_, 1s);
    if (r) continue;
    EXPECT_EQ(r.code(), transport_errc::unavailable) << r.error().message;
    receive_failed = true;
  }
  EXPECT_TRUE(receive_failed) << "receive never reached the dead server";
  EXPECT_LT(std::chrono::steady_clock::now() - started, 20s) << "every call bounded";

  ASSERT_EQ(ctl("start"), 0);
  peer_->create(queue_);  // in-memory server: the queue is gone
  ASSERT_TRUE(t->publish(queue_, bqtest::envelope_text(42))) << "same instance, new connection";
  auto got = t->receive(queue_, 5s);
  ASSERT_TRUE(got && got->has_value()) << (got ? "nothing" : got.error().message);
  EXPECT_EQ(babelqueue::decode((*got)->body)->data().value().at("n").get<long>(), 42);
  ASSERT_TRUE(t->ack(**got));
  EXPECT_GT(t->stats().connects, connects_before);
}
