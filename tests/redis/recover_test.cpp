// recover(): a consumer killed with SIGKILL mid-handler leaves its message in :processing;
// recover() returns it to the ready list; ages, untracked values, late acks.
#include "redis/redis_fixture.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <thread>

using namespace std::chrono_literals;
using babelqueue::condition;
using babelqueue::errc;
using babelqueue::transport_errc;
using bqtest::envelope_n;
using bqtest::padded_envelope_text;

class RedisRecover : public bqtest::RedisTest {};

namespace {

// Forks a consumer process that reserves one message, reports it through a pipe, then
// "handles" it forever. Returns the child's pid and what it reported ("" on failure).
std::pair<pid_t, std::string> spawn_stuck_consumer(const babelqueue::redis::options& o,
                                                   const std::string& queue) {
  int fds[2];
  if (::pipe(fds) != 0) return {-1, ""};
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    auto t = babelqueue::redis::redis_transport::open(o);
    std::string report = "error";
    if (t) {
      auto got = (*t)->receive(queue, 2s);
      if (got && got->has_value()) report = std::to_string(envelope_n((*got)->body));
    }
    // The child's only report to the parent; a failed write shows there as a missing report.
    if (::write(fds[1], report.data(), report.size()) < 0) report.clear();
    ::close(fds[1]);
    for (;;) ::pause();  // mid-handler, until SIGKILL
  }
  ::close(fds[1]);
  char buf[64] = {};
  ssize_t n = ::read(fds[0], buf, sizeof buf);
  ::close(fds[0]);
  return {pid, n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string()};
}

}  // namespace

TEST_F(RedisRecover, KilledConsumerLeavesMessageInProcessingAndRecoverReturnsIt) {
  auto t = open();
  ASSERT_TRUE(t->publish("jobs", padded_envelope_text(1)));
  ASSERT_TRUE(t->publish("jobs", padded_envelope_text(2)));

  auto [pid, report] = spawn_stuck_consumer(opts(), "jobs");
  ASSERT_GT(pid, 0);
  EXPECT_EQ(report, "1");
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));

  // The message stays reserved: nothing moves it back by itself.
  EXPECT_EQ(raw_->llen("jobs:processing"), 1);
  EXPECT_EQ(raw_->llen("jobs"), 1);

  // Too young for a 60 s threshold: untouched.
  auto young = t->recover("jobs", 60s);
  ASSERT_TRUE(young) << young.error().message;
  EXPECT_EQ(young->moved, 0);
  EXPECT_EQ(young->remaining, 1);

  std::this_thread::sleep_for(1100ms);
  auto r = t->recover("jobs", 1s);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->moved, 1);
  EXPECT_EQ(r->stamped, 0);
  EXPECT_EQ(r->remaining, 0);
  EXPECT_EQ(raw_->integer({"ZCARD", "jobs:processing:deadlines"}), 0);

  // Back at the END of the ready list, bytes unchanged (attempts not bumped).
  std::vector<long> order;
  for (int i = 0; i < 2; ++i) {
    auto got = t->receive("jobs", 1s);
    ASSERT_TRUE(got && got->has_value());
    order.push_back(envelope_n((*got)->body));
    ASSERT_TRUE(t->ack(**got));
  }
  EXPECT_EQ(order, (std::vector<long>{2, 1}));
  ASSERT_TRUE(t->flush());
  EXPECT_EQ(raw_->llen("jobs:processing"), 0);
}

TEST_F(RedisRecover, TheInConsumerReclaimerReturnsADeadConsumersMessageWithoutCron) {
  // reclaim_after (opt-in): a live consumer's own receive() sweeps the queue it reads, so the
  // message a SIGKILLed consumer left in :processing comes back with no `recover` scheduled.
  auto t = open();
  ASSERT_TRUE(t->publish("jobs", padded_envelope_text(1)));
  auto [pid, report] = spawn_stuck_consumer(opts(), "jobs");
  ASSERT_GT(pid, 0);
  EXPECT_EQ(report, "1");
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  const auto killed = std::chrono::steady_clock::now();
  EXPECT_EQ(raw_->llen("jobs:processing"), 1);

  auto o = opts();
  o.reclaim_after = 500ms;
  auto survivor = open(o);
  std::optional<babelqueue::received_message> got;
  while (!got && std::chrono::steady_clock::now() - killed < 5s) {
    auto r = survivor->receive("jobs", 100ms);
    ASSERT_TRUE(r) << r.error().message;
    got = std::move(*r);
  }
  ASSERT_TRUE(got) << "the dead consumer's message never came back";
  const auto took = std::chrono::steady_clock::now() - killed;
  EXPECT_GE(took, 400ms) << "reclaimed before it was reclaim_after old";
  EXPECT_LT(took, 2s) << "not within 1.5 x reclaim_after (plus the receive's wait)";
  EXPECT_EQ(envelope_n(got->body), 1);
  EXPECT_EQ(babelqueue::decode(got->body).value().attempts(), 0) << "a crash is not a failure";
  ASSERT_TRUE(survivor->ack(*got));
  ASSERT_TRUE(survivor->flush());
  EXPECT_EQ(raw_->llen("jobs:processing"), 0);
}

TEST_F(RedisRecover, TheReclaimerIsOffByDefaultAndRefusedWithoutAReservationAge) {
  EXPECT_EQ(opts().reclaim_after.count(), 0);
  auto u = babelqueue::broker_url::parse(
               "redis://127.0.0.1:6379?laravel=1&retry_after=never"
               "&reclaim_after=1m")
               .value();
  auto o = babelqueue::redis::options_from_url(u);
  ASSERT_FALSE(o);
  EXPECT_EQ(o.code(), transport_errc::invalid_argument) << o.error().message;
  auto ok = babelqueue::redis::options_from_url(
      babelqueue::broker_url::parse("redis://127.0.0.1:6379?reclaim_after=5m").value());
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->reclaim_after, std::chrono::minutes(5));
}

TEST_F(RedisRecover, LateAckOfARecoveredMessageTouchesNothing) {
  auto slow = open();
  auto o = opts();
  o.pipeline_acks = false;
  auto sync = open(o);
  ASSERT_TRUE(sync->publish("late", padded_envelope_text(1)));
  auto first = sync->receive("late", 1s);
  ASSERT_TRUE(first && first->has_value());
  // An operator recovers everything (older_than 0): the slow consumer still holds it.
  auto r = slow->recover("late", 0ms);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->moved, 1);
  // Another consumer takes the re-queued copy (identical bytes).
  auto second = slow->receive("late", 1s);
  ASSERT_TRUE(second && second->has_value());
  EXPECT_EQ((*second)->body, (*first)->body);
  // The slow consumer's late ack is refused and must not remove the other copy.
  EXPECT_EQ(sync->ack(**first).code(), condition::invalid_argument);
  EXPECT_EQ(raw_->llen("late:processing"), 1);
  ASSERT_TRUE(slow->ack(**second));
  ASSERT_TRUE(slow->flush());
  EXPECT_EQ(raw_->llen("late:processing"), 0);
}

TEST_F(RedisRecover, DeferredLateAckRidingOnAPublishIsCountedAndTouchesNothing) {
  auto consumer = open();  // pipeline_acks: the ack travels with the next round trip
  auto other = open();
  ASSERT_TRUE(consumer->publish("ride", padded_envelope_text(1)));
  auto first = consumer->receive("ride", 1s);
  ASSERT_TRUE(first && first->has_value());
  ASSERT_TRUE(other->recover("ride", 0ms));
  auto second = other->receive("ride", 1s);  // the re-queued copy, identical bytes
  ASSERT_TRUE(second && second->has_value());
  ASSERT_TRUE(consumer->ack(**first));  // deferred
  // The publish carries the deferred settle in front of its RPUSH (one round trip): the
  // gate finds the reservation gone, so it counts as stale and removes nothing.
  ASSERT_TRUE(consumer->publish("ride", padded_envelope_text(2)));
  EXPECT_EQ(consumer->stats().stale_acks, 1);
  EXPECT_EQ(raw_->llen("ride:processing"), 1);  // the other consumer's copy is still there
  EXPECT_EQ(raw_->llen("ride"), 1);
}

TEST_F(RedisRecover, UntrackedValuesAreStampedThenRecovered) {
  // A peer SDK (plain BLMOVE, no deadline member) reserved a message and died.
  std::string body = padded_envelope_text(9);
  raw_->integer({"RPUSH", "peer:processing", body});
  auto t = open();
  auto first = t->recover("peer", 500ms);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->moved, 0);
  EXPECT_EQ(first->stamped, 1);
  EXPECT_EQ(raw_->integer({"ZCARD", "peer:processing:deadlines"}), 1);
  auto again = t->recover("peer", 500ms);  // already stamped: not stamped twice
  ASSERT_TRUE(again);
  EXPECT_EQ(again->stamped, 0);
  std::this_thread::sleep_for(600ms);
  auto r = t->recover("peer", 500ms);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->moved, 1);
  EXPECT_EQ(raw_->list("peer"), std::vector<std::string>{body});
  // older_than 0 moves untracked values at once.
  raw_->integer({"RPUSH", "peer:processing", "garbage"});
  auto all = t->recover("peer", 0ms);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->moved, 1);
  EXPECT_EQ(raw_->llen("peer:processing"), 0);
}

TEST_F(RedisRecover, ForeignPythonMembersUseTheirDeadline) {
  // A Python SDK reservation: random token, score = reserved_at + retry_after (90 s).
  std::string body = padded_envelope_text(5);
  raw_->integer({"RPUSH", "py:processing", body});
  auto now_s = std::chrono::duration_cast<std::chrono::seconds>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count();
  std::string token = "0123456789abcdef0123456789abcdef";
  raw_->integer(
      {"ZADD", "py:processing:deadlines", std::to_string(now_s - 10 + 90), token + ":" + body});
  auto t = open();
  auto young = t->recover("py", 60s);  // reserved ~10 s ago
  ASSERT_TRUE(young);
  EXPECT_EQ(young->moved, 0);
  EXPECT_EQ(young->stamped, 0);
  auto old = t->recover("py", 5s);
  ASSERT_TRUE(old);
  EXPECT_EQ(old->moved, 1);
  EXPECT_EQ(raw_->list("py"), std::vector<std::string>{body});
}
