// artemis:// when the broker goes away: a full stop and start of the shared broker
// mid-consume and mid-publish. Nothing accepted is lost (the messages are durable), nothing
// is settled early, the transport reconnects on its own. These tests stop the shared
// broker, so CTest runs them alone (RUN_SERIAL).
#include "artemis/artemis_fixture.hpp"
#include "support/delay_restart.hpp"

#include <cstdlib>
#include <set>
#include <thread>

using namespace std::chrono_literals;
using babelqueue::transport_errc;

namespace {

class ArtemisRestart : public bqtest::ArtemisTest {
 protected:
  void SetUp() override {
    bqtest::ArtemisTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ctl_ = bqtest::env_or_empty("BABELQUEUE_ARTEMIS_CTL");
    ASSERT_FALSE(ctl_.empty()) << "services.sh exports BABELQUEUE_ARTEMIS_CTL";
  }
  void TearDown() override {
    // Whatever happened, leave the broker running for the next test.
    if (!ctl_.empty()) (void)ctl("start");
    bqtest::ArtemisTest::TearDown();
  }
  int ctl(const std::string& action) {
    return std::system((ctl_ + " " + action + " >/dev/null 2>&1").c_str());
  }
  static long n_of(const std::string& body) {
    return babelqueue::decode(body)->data().value().at("n").get<long>();
  }
  std::string ctl_;
};

}  // namespace

TEST_F(ArtemisRestart, ABrokerRestartMidConsumeLosesNothingAndReconnects) {
  auto p = open();
  ASSERT_TRUE(p);
  std::vector<babelqueue::outgoing_message> batch;
  batch.reserve(100);
  for (int i = 0; i < 100; ++i) batch.push_back({bqtest::envelope_text(i), {}});
  ASSERT_TRUE(p->publish_batch(queue_, batch));
  p.reset();
  auto t = open("prefetch=16&reconnect_backoff_min=50ms&reconnect_backoff_max=500ms");
  ASSERT_TRUE(t);
  std::set<long> acked;
  int restarted = 0;
  int errors = 0;
  const auto give_up = std::chrono::steady_clock::now() + 120s;
  while (acked.size() < 100 && std::chrono::steady_clock::now() < give_up) {
    if (acked.size() == 30 && restarted == 0) {
      restarted = 1;
      ASSERT_EQ(ctl("restart"), 0);
    }
    auto got = t->receive(queue_, 1s);
    if (!got) {
      ++errors;  // the outage shows as errors: keep going
      continue;
    }
    if (!got->has_value()) continue;
    EXPECT_EQ(babelqueue::decode((*got)->body)->attempts(), 0);
    if (t->ack(**got)) acked.insert(n_of((*got)->body));
  }
  EXPECT_EQ(acked.size(), 100u) << "every message acked at least once";
  EXPECT_EQ(restarted, 1);
  EXPECT_GE(t->stats().connects, 2) << "reconnected on its own (" << errors << " errors seen)";
}

TEST_F(ArtemisRestart, ABrokerRestartMidPublishLosesNoAcceptedMessage) {
  auto t = open("operation_timeout=2s&reconnect_backoff_min=50ms&reconnect_backoff_max=500ms");
  ASSERT_TRUE(t);
  std::set<long> accepted;
  int failed = 0;
  for (long i = 0; i < 200; ++i) {
    if (i == 60) {
      ASSERT_EQ(ctl("kill-restart"), 0);
    }
    if (t->publish(queue_, bqtest::envelope_text(i))) {
      accepted.insert(i);
    } else {
      ++failed;
    }
  }
  EXPECT_GE(accepted.size(), 150u) << failed << " publishes failed";
  std::set<long> found;
  auto c = open();
  ASSERT_TRUE(c);
  for (;;) {
    auto got = c->receive(queue_, 2s);
    ASSERT_TRUE(got) << got.error().message;
    if (!got->has_value()) break;
    found.insert(n_of((*got)->body));
    ASSERT_TRUE(c->ack(**got));
  }
  for (long n : accepted) EXPECT_TRUE(found.count(n)) << "accepted message " << n << " lost";
}

// Delayed messages are journaled with their x-opt-delivery-time: a broker stop and start during
// the delay loses nothing, delivers nothing twice, and keeps the due times (those due while it
// was down arrive once it is back, the others still wait).
TEST_F(ArtemisRestart, ABrokerRestartDuringADelayLosesNothing) {
  auto t = open("reconnect_backoff_min=50ms&reconnect_backoff_max=500ms");
  ASSERT_TRUE(t);
  bqtest::delay_restart_plan plan;
  plan.per_delay = 20;
  plan.due_after = 30s;  // past the ~15 s the broker takes to come back
  plan.collect_within = 90s;
  bqtest::expect_delays_survive_a_restart(
      *t, *t, queue_,
      [this] {
        if (ctl("stop") != 0) return false;
        std::this_thread::sleep_for(3s);
        return ctl("start") == 0;
      },
      plan);
}
