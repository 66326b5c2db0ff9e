// pulsar:// when the broker goes away: the shared Pulsar standalone killed (SIGKILL) and
// started again mid-consume. Nothing acknowledged is lost, a message in flight comes back, the
// client reconnects by itself (same transport instance), and a publish while the broker is down
// waits for it within operation_timeout or fails with a transient error — never a hang, never
// a loss. These tests stop the shared broker, so CTest runs them alone (RUN_SERIAL).
#include "pulsar/pulsar_fixture.hpp"
#include "support/delay_restart.hpp"

#include <cstdlib>
#include <set>
#include <thread>

using namespace std::chrono_literals;

namespace {

class PulsarRestart : public bqtest::PulsarTest {
 protected:
  void SetUp() override {
    bqtest::PulsarTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ctl_ = bqtest::env_or_empty("BABELQUEUE_PULSAR_CTL");
    ASSERT_FALSE(ctl_.empty()) << "services.sh exports BABELQUEUE_PULSAR_CTL";
  }
  void TearDown() override {
    (void)ctl("start");  // whatever happened, leave the broker running
  }
  int ctl(const std::string& action) {
    return std::system((ctl_ + " " + action + " >/dev/null 2>&1").c_str());
  }
  static long n_of(const std::string& body) {
    return babelqueue::decode(body)->data().value().at("n").get<long>();
  }
  // Receives and acks until `seen` holds `want` numbers or `within` passes; receive errors
  // during the reconnect are tolerated (counted), hangs are not.
  void collect(babelqueue::pulsar::pulsar_transport& t, std::set<long>& seen, std::size_t want,
               std::chrono::seconds within) {
    const auto deadline = std::chrono::steady_clock::now() + within;
    while (seen.size() < want && std::chrono::steady_clock::now() < deadline) {
      auto r = t.receive(queue_, 2s);
      if (!r) {
        EXPECT_TRUE(r.code() == babelqueue::condition::unavailable ||
                    r.code() == babelqueue::condition::timeout)
            << r.error().message;
        std::this_thread::sleep_for(500ms);
        continue;
      }
      if (!*r) continue;
      seen.insert(n_of((*r)->body));
      (void)t.ack(**r);  // a failed ack only means it comes again
    }
  }
  std::string ctl_;
};

}  // namespace

TEST_F(PulsarRestart, AKilledBrokerMidConsumeLosesNothingAndEveryCallIsBounded) {
  // One outage (SIGKILL, then a start on the same ports and data) serves both checks: the
  // broker takes ~40 s to come back on these machines.
  auto t = open("operation_timeout=60s&receiver_queue=5");
  ASSERT_TRUE(t);
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(t->publish(queue_, bqtest::envelope_text(i)));
  std::set<long> seen;
  for (int i = 0; i < 10; ++i) {
    auto m = t->receive(queue_, 10s);
    ASSERT_TRUE(m && m->has_value());
    seen.insert(n_of((*m)->body));
    ASSERT_TRUE(t->ack(**m));
  }
  // One more in flight while the broker goes down: never acked before the restart.
  auto in_flight = t->receive(queue_, 10s);
  ASSERT_TRUE(in_flight && in_flight->has_value());
  const long held = n_of((*in_flight)->body);
  std::this_thread::sleep_for(300ms);  // the acks above reach the broker (grouped, 100 ms)
  ASSERT_EQ(ctl("kill"), 0) << "kill the broker";

  // While it is down: a publish with a short bound fails with a transient error in time.
  auto impatient = open("operation_timeout=3s&connect_timeout=1s");
  ASSERT_TRUE(impatient);
  const auto started = std::chrono::steady_clock::now();
  auto pub = impatient->publish(queue_, bqtest::envelope_text(99));
  ASSERT_FALSE(pub) << "nothing listens";
  EXPECT_TRUE(pub.code() == babelqueue::condition::unavailable ||
              pub.code() == babelqueue::condition::timeout)
      << pub.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - started, 20s) << "bounded";
  impatient.reset();

  ASSERT_EQ(ctl("start"), 0) << "start it again";
  // The same instance: the client reconnects by itself; publishing resumes within
  // operation_timeout.
  for (int i = 20; i < 40; ++i) ASSERT_TRUE(t->publish(queue_, bqtest::envelope_text(i))) << i;
  collect(*t, seen, 40, 120s);
  EXPECT_EQ(seen.size(), 40u) << "every message, before and after the outage";
  EXPECT_TRUE(seen.count(held)) << "the one in flight came back";
  EXPECT_FALSE(seen.count(99)) << "the failed publish was not persisted";
}

// deliverAt is part of the persisted message: a broker killed and started again during the
// delay loses nothing and delivers nothing twice or early (the Shared subscription's delayed
// delivery tracker is rebuilt from the backlog).
TEST_F(PulsarRestart, AKilledBrokerDuringADelayLosesNothing) {
  auto t = open("operation_timeout=60s");
  ASSERT_TRUE(t);
  bqtest::delay_restart_plan plan;
  plan.per_delay = 20;
  plan.due_after = 70s;  // past the ~40 s the broker takes to come back
  plan.collect_within = 120s;
  bqtest::expect_delays_survive_a_restart(
      *t, *t, queue_, [this] { return ctl("kill-restart") == 0; }, plan);
}
