// kafka:// when the broker goes away: a full stop/start of the shared broker mid-publish and
// mid-consume. Nothing acknowledged is lost, nothing is committed before it was settled.
// This test stops the shared broker, so CTest runs it alone (RUN_SERIAL).
#include "kafka/kafka_fixture.hpp"
#include "support/delay_restart.hpp"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <set>
#include <thread>

using namespace std::chrono_literals;

using KafkaRestart = bqtest::KafkaTest;

TEST_F(KafkaRestart, ABrokerRestartMidConsumeLosesNothing) {
  const std::string ctl = bqtest::env_or_empty("BABELQUEUE_KAFKA_CTL");
  ASSERT_FALSE(ctl.empty()) << "services.sh exports BABELQUEUE_KAFKA_CTL";
  auto t = open("&operation_timeout=60s");
  ASSERT_TRUE(t);
  auto n_of = [](const std::string& body) {
    return babelqueue::decode(body)->data().value().at("n").get<long>();
  };
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(t->publish(topic_, bqtest::envelope_text(i)));
  std::set<long> seen;
  for (int i = 0; i < 10; ++i) {
    auto m = next(*t, topic_);
    ASSERT_TRUE(m);
    seen.insert(n_of(m->body));
    ASSERT_TRUE(t->ack(*m));
  }
  // One more in flight while the broker goes down: never acked before the restart.
  auto in_flight = next(*t, topic_);
  ASSERT_TRUE(in_flight);
  ASSERT_EQ(std::system((ctl + " restart >/dev/null 2>&1").c_str()), 0) << "restart the broker";
  // Publishing resumes once the broker is back (within operation_timeout).
  for (int i = 20; i < 40; ++i) ASSERT_TRUE(t->publish(topic_, bqtest::envelope_text(i))) << i;
  seen.insert(n_of(in_flight->body));
  (void)t->ack(*in_flight);  // may fail if the group moved on: then it comes again below
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  while (seen.size() < 40 && std::chrono::steady_clock::now() < deadline) {
    auto r = t->receive(topic_, 2s);
    ASSERT_TRUE(r) << r.error().message;
    if (!*r) continue;
    seen.insert(n_of((*r)->body));
    (void)t->ack(**r);
  }
  EXPECT_EQ(seen.size(), 40u) << "every record, before and after the restart";
  ASSERT_TRUE(t->close(std::chrono::steady_clock::now() + 20s));
  EXPECT_EQ(raw_->committed(group_, topic_), 40);
}

// A delayed record is an ordinary record of its tier topic, committed past by the re-injector
// only once it is back on the work topic: a broker restart during the delay loses nothing and
// brings nothing early or twice.
TEST_F(KafkaRestart, ABrokerRestartDuringADelayLosesNothing) {
  const std::string ctl = bqtest::env_or_empty("BABELQUEUE_KAFKA_CTL");
  ASSERT_FALSE(ctl.empty()) << "services.sh exports BABELQUEUE_KAFKA_CTL";
  const std::string tiers = "&retry_topics=5s,60s&operation_timeout=60s";
  auto t = open(tiers);
  ASSERT_TRUE(t);
  bqtest::running_reinjector reinjector(bqtest::kafka_url(group_, tiers), topic_);
  bqtest::delay_restart_plan plan;
  plan.per_delay = 20;
  plan.due_in_outage = 3s;
  plan.due_after = 45s;
  plan.collect_within = 120s;
  bqtest::expect_delays_survive_a_restart(
      *t, *t, topic_,
      [&ctl] { return std::system((ctl + " restart >/dev/null 2>&1").c_str()) == 0; }, plan);
}

// close(deadline) of a consumer honours its deadline when the broker stopped answering
// (SIGSTOP: the process is there, its sockets open, nothing answers): the commit and the
// group leave are abandoned at the deadline and close() says so; nothing is committed past
// what was settled, so the rest comes again (at-least-once).
TEST_F(KafkaRestart, CloseReturnsByItsDeadlineWhenTheBrokerStopsAnswering) {
  const std::string ctl = bqtest::env_or_empty("BABELQUEUE_KAFKA_CTL");
  ASSERT_FALSE(ctl.empty()) << "services.sh exports BABELQUEUE_KAFKA_CTL";
  FILE* p = ::popen((ctl + " pid").c_str(), "r");
  ASSERT_NE(p, nullptr);
  long pid = 0;
  ASSERT_EQ(std::fscanf(p, "%ld", &pid), 1) << "the broker's pid";
  ::pclose(p);
  auto t = open("&operation_timeout=60s");
  ASSERT_TRUE(t);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(t->publish(topic_, bqtest::envelope_text(i)));
  for (int i = 0; i < 3; ++i) {
    auto m = next(*t, topic_);
    ASSERT_TRUE(m);
    ASSERT_TRUE(t->ack(*m));
  }
  ASSERT_EQ(::kill(static_cast<pid_t>(pid), SIGSTOP), 0);
  const auto start = std::chrono::steady_clock::now();
  auto closed = t->close(start + 3s);
  const auto took = std::chrono::steady_clock::now() - start;
  ::kill(static_cast<pid_t>(pid), SIGCONT);
  EXPECT_LT(took, 5s) << "close(now + 3 s) took "
                      << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                      << " ms";
  if (!closed) {
    EXPECT_EQ(closed.code(), babelqueue::condition::timeout) << closed.error().message;
  }
  // Nothing past what was settled is committed: records 3 and 4 (never settled) go to the
  // group's next member. (Receiving them here would wait for the group to drop the member
  // that never left: its rebalance timeout, about 90 s on this broker.)
  EXPECT_LE(raw_->committed(group_, topic_), 3);
  std::cout << "close(now + 3 s) took "
            << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms\n";
}
