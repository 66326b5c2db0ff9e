// Consumer-group behaviour of kafka:// against the real broker: a rebalance while four
// workers have records in flight (nothing lost, everything committed at the end), a
// rebalance while a member holds a run of records not handed out yet (they go to the new
// owner), a slow handler working through a run (the keep-alive poll keeps it in the group),
// and a worker process killed with SIGKILL mid-handler (the record goes to the next member
// of the group and is handled once more, never lost).
#include "kafka/kafka_fixture.hpp"

#include <babelqueue/runtime/app.hpp>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <map>
#include <mutex>
#include <set>
#include <thread>

extern char** environ;

using namespace std::chrono_literals;
using babelqueue::json;

namespace {

class KafkaGroup : public bqtest::KafkaTest {
 protected:
  babelqueue::app_options app_opts(unsigned workers) {
    babelqueue::kafka::register_transport();
    babelqueue::app_options o;
    o.queue = topic_;
    o.poll_timeout = 500ms;
    o.workers = workers;
    o.dead_letter = true;
    return o;
  }

  /// The envelope's `n`.
  static long number_of(const babelqueue::received_message& m) {
    return babelqueue::decode(m.body).value().data().value().at("n").get<long>();
  }

  /// `count` envelopes numbered from `first`.
  static std::vector<std::string> envelopes(long first, long count) {
    std::vector<std::string> out;
    for (long n = first; n < first + count; ++n) out.push_back(bqtest::envelope_text(n));
    return out;
  }

  /// Once the group's members closed: nothing of the topic is left uncommitted. Each
  /// partition gets a sentinel record (n < 0), then a fresh member of the group reads from
  /// the committed offsets until it has every sentinel; a partition is read in order, so a
  /// record left before its sentinel would come first.
  void expect_nothing_left(int partitions) {
    for (int p = 0; p < partitions; ++p) {
      ASSERT_EQ(raw_->produce_to(topic_, p, {bqtest::envelope_text(-1 - p)}),
                RD_KAFKA_RESP_ERR_NO_ERROR);
    }
    auto fresh = open();
    ASSERT_TRUE(fresh);
    std::set<long> sentinels;
    std::vector<long> left;
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (sentinels.size() < static_cast<std::size_t>(partitions) &&
           std::chrono::steady_clock::now() < deadline) {
      auto r = fresh->receive(topic_, 500ms);
      ASSERT_TRUE(r) << r.error().message;
      if (!*r) continue;
      const long n = number_of(**r);
      if (n < 0) {
        sentinels.insert(n);
      } else {
        left.push_back(n);
      }
      ASSERT_TRUE(fresh->ack(**r));
    }
    EXPECT_EQ(sentinels.size(), static_cast<std::size_t>(partitions))
        << "a fresh member reached every sentinel";
    EXPECT_TRUE(left.empty()) << left.size() << " records were left uncommitted, e.g. n="
                              << (left.empty() ? 0 : left.front());
    EXPECT_TRUE(fresh->close(std::chrono::steady_clock::now() + 10s));
  }
};

}  // namespace

TEST_F(KafkaGroup, ARebalanceWhileFourWorkersHoldRecordsLosesNothing) {
  ASSERT_TRUE(raw_->create_topic(topic_, 4));
  constexpr int total = 200;
  const std::string url = bqtest::kafka_url(group_);
  {
    auto p = open();
    std::vector<babelqueue::outgoing_message> batch;
    for (int i = 0; i < total; ++i) batch.push_back({bqtest::envelope_text(i), {}});
    ASSERT_TRUE(p->publish_batch(topic_, batch));
  }
  std::mutex mu;
  std::multiset<long> handled;
  auto handler = [&](babelqueue::message& m) {
    std::this_thread::sleep_for(15ms);  // records stay in flight while the group changes
    std::lock_guard lock(mu);
    handled.insert(m.data().at("n").get<long>());
  };
  auto distinct = [&] {
    std::lock_guard lock(mu);
    return std::set<long>(handled.begin(), handled.end()).size();
  };
  babelqueue::app first(url, app_opts(4));
  first.handle("urn:babel:test:item", handler);
  std::thread a([&] { EXPECT_TRUE(first.consume()); });
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  while (distinct() < total / 4 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(20ms);
  // Two more members join mid-flight: the group rebalances under the four busy workers.
  babelqueue::app second(url, app_opts(2));
  second.handle("urn:babel:test:item", handler);
  std::thread b([&] { EXPECT_TRUE(second.consume()); });
  while (distinct() < static_cast<std::size_t>(total) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(50ms);
  }
  first.stop();
  second.stop();
  a.join();
  b.join();
  EXPECT_EQ(distinct(), static_cast<std::size_t>(total)) << "every record handled";
  std::int64_t committed = 0;
  for (int p = 0; p < 4; ++p)
    committed += std::max<std::int64_t>(raw_->committed(group_, topic_, p), 0);
  EXPECT_EQ(committed, total) << "every offset committed once the workers stopped";
  std::cout
      << "[ rebalance ] handled " << handled.size() << " times for " << total
      << " records (duplicates are at-least-once redeliveries of abandoned in-flight records)\n";
  EXPECT_TRUE(raw_->read_all(topic_ + ".dlq", 0, 1s).empty());
}

// A rebalance in the middle of a run (consumer.cpp, fetched_records.hpp). Member A joins
// alone, hands out the first record of partition 1 (one poll), then takes a run of the
// records librdkafka has queued (up to 64; partition 1 holds 200, partition 0 nothing yet)
// and hands out its first one, `in_flight`, whose handler is "still running". Member B
// joins; A keeps handing out one record per turn (a slow handler) while the group
// rebalances under it. Member ids are "<client.id>-<uuid>" and the range assignor gives the
// lower member the lower partition, so after the rebalance A owns partition 0 and B owns
// partition 1: the records of partition 1 that A held but had not handed out at its revoke
// must be dropped by A and delivered to B.
//
// Duplicates (at-least-once): only records handed out and not yet committed at the revoke
// may repeat. The revoke commits what is settled, but never past an unsettled record, and
// `in_flight` is unsettled: B gets partition 1 again from `in_flight` on. So the records
// handed out twice must be a subset of what A handed out before its revoke; expected: every
// one of those but the very first record (committed), i.e. `in_flight` and the records A
// handed out after it before the revoke.
TEST_F(KafkaGroup, ARebalanceInTheMiddleOfARunGivesTheHeldRecordsToTheNewOwner) {
  ASSERT_TRUE(raw_->create_topic(topic_, 2));
  // Partition 1: n = 1000..1199; partition 0: n = 0..99, written once A holds its run.
  constexpr long lost_first = 1000;
  constexpr long lost_count = 200;
  constexpr long kept_count = 100;
  constexpr std::size_t total = lost_count + kept_count;
  const auto partition_of = [](long n) { return n >= lost_first ? 1 : 0; };
  ASSERT_EQ(raw_->produce_to(topic_, 1, envelopes(lost_first, lost_count)),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  const std::string member = "&rdkafka.partition.assignment.strategy=range&client_id=";
  auto a = open(member + "bq-a");
  ASSERT_TRUE(a);
  auto first = next(*a, topic_);
  ASSERT_TRUE(first);
  ASSERT_TRUE(a->ack(*first));
  auto in_flight = next(*a, topic_);
  ASSERT_TRUE(in_flight);
  ASSERT_EQ(a->stats().rebalances, 1) << "A alone, assigned both partitions";
  ASSERT_EQ(raw_->produce_to(topic_, 0, envelopes(0, kept_count)), RD_KAFKA_RESP_ERR_NO_ERROR);

  std::map<long, int> handed_out;  // n -> times handed out (by A or B)
  std::map<long, int> acked;       // n -> successful acks
  std::set<long> a_before;         // handed out by A before its revoke
  std::vector<long> a_after_lost;  // handed out by A after its revoke, of partition 1
  std::set<long> by_b;
  for (const auto* m : {&*first, &*in_flight}) {
    ++handed_out[number_of(*m)];
    a_before.insert(number_of(*m));
  }
  ++acked[number_of(*first)];
  auto b = open(member + "bq-b");
  ASSERT_TRUE(b);
  bool revoked = false;  // A's revoke was served (its second rebalance callback)
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  while ((acked.size() < total || !revoked) && std::chrono::steady_clock::now() < deadline) {
    // Until A's revoke, B's empty receive paces A to about one record per 100 ms: the run
    // outlasts the rebalance.
    const auto turn = revoked ? 10ms : 100ms;
    auto ra = a->receive(topic_, turn);
    ASSERT_TRUE(ra) << ra.error().message;
    if (!revoked && a->stats().rebalances >= 2) {
      revoked = true;
      EXPECT_EQ(a->ack(*in_flight).code(), babelqueue::transport_errc::unavailable)
          << "the record in flight at the revoke was abandoned";
    }
    if (*ra) {
      const long n = number_of(**ra);
      ++handed_out[n];
      if (!revoked) a_before.insert(n);
      if (revoked && partition_of(n) == 1) a_after_lost.push_back(n);
      if (a->ack(**ra)) ++acked[n];
    }
    auto rb = b->receive(topic_, turn);
    ASSERT_TRUE(rb) << rb.error().message;
    if (*rb) {
      const long n = number_of(**rb);
      ++handed_out[n];
      by_b.insert(n);
      if (b->ack(**rb)) ++acked[n];
    }
  }
  ASSERT_TRUE(revoked) << "B's join revoked A's partitions";
  EXPECT_TRUE(a->close(std::chrono::steady_clock::now() + 10s));
  EXPECT_TRUE(b->close(std::chrono::steady_clock::now() + 10s));

  EXPECT_EQ(acked.size(), total) << "every record acked at least once";
  EXPECT_TRUE(a_after_lost.empty()) << "A handed out " << a_after_lost.size()
                                    << " records of partition 1 after its revoke, first n="
                                    << (a_after_lost.empty() ? 0 : a_after_lost.front());
  for (long n : by_b) EXPECT_EQ(partition_of(n), 1) << "B took partition 1 over, got n=" << n;
  // Of partition 1, not handed out by A before its revoke (A's held run, and what librdkafka
  // still queued): each must reach B.
  std::vector<long> held_not_to_b;
  long not_handed_out = 0;
  for (long n = lost_first; n < lost_first + lost_count; ++n) {
    if (a_before.count(n) != 0) continue;
    ++not_handed_out;
    if (by_b.count(n) == 0) held_not_to_b.push_back(n);
  }
  EXPECT_GT(not_handed_out, 0) << "A still had records of partition 1 to hand out at its revoke";
  EXPECT_TRUE(held_not_to_b.empty()) << held_not_to_b.size() << " records of partition 1 that A "
                                     << "had not handed out never reached B, e.g. n="
                                     << (held_not_to_b.empty() ? 0 : held_not_to_b.front());
  EXPECT_EQ(by_b.count(number_of(*in_flight)), 1u) << "the abandoned in-flight record went to B";
  long duplicates = 0;
  std::vector<long> repeated_beyond_bound;
  for (const auto& [n, times] : handed_out) {
    if (times < 2) continue;
    duplicates += times - 1;
    if (a_before.count(n) == 0 || times > 2) repeated_beyond_bound.push_back(n);
  }
  EXPECT_TRUE(repeated_beyond_bound.empty())
      << repeated_beyond_bound.size() << " records repeated that A had not handed out before its "
      << "revoke (or more than twice), e.g. n="
      << (repeated_beyond_bound.empty() ? 0 : repeated_beyond_bound.front());
  std::cout << "[ run rebalance ] A handed out " << a_before.size()
            << " records before its revoke (the bound); " << duplicates
            << " handed out twice; A received " << a->stats().received << ", B "
            << b->stats().received << "\n";
  EXPECT_EQ(raw_->committed(group_, topic_, 0), kept_count);
  EXPECT_EQ(raw_->committed(group_, topic_, 1), lost_count);
  expect_nothing_left(2);
}

// The keep-alive poll (consumer.cpp keepalive_poll()): a handler that works through a run
// slowly must not be evicted by max.poll.interval.ms. Here max.poll.interval.ms = 6000 (its
// lowest: librdkafka requires it >= session.timeout.ms, 6000 in kafka_url(), the broker's
// default group.min.session.timeout.ms). Each record takes 150 ms, so the run of 64 that
// the second receive takes lasts ~9.6 s with no librdkafka call but the keep-alive polls:
// without them librdkafka would leave the group after 6 s (the revoke counts a rebalance,
// and the next receive fails with "Maximum application poll interval exceeded").
TEST_F(KafkaGroup, ASlowHandlerWorkingThroughARunStaysInTheGroup) {
  ASSERT_TRUE(raw_->create_topic(topic_, 1));
  constexpr long total = 80;
  constexpr auto max_poll_interval = 6s;
  constexpr auto per_record = 150ms;
  ASSERT_EQ(raw_->produce_to(topic_, 0, envelopes(0, total)), RD_KAFKA_RESP_ERR_NO_ERROR);
  auto t = open("&rdkafka.max.poll.interval.ms=6000");
  ASSERT_TRUE(t);
  std::vector<long> got;
  std::optional<std::chrono::steady_clock::time_point> started;
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  while (got.size() < static_cast<std::size_t>(total) &&
         std::chrono::steady_clock::now() < deadline) {
    auto r = t->receive(topic_, 1s);
    ASSERT_TRUE(r) << r.error().message;
    if (!*r) continue;
    if (!started) started = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(per_record);  // the handler's work, not a synchronisation
    got.push_back(number_of(**r));
    ASSERT_TRUE(t->ack(**r)) << "n=" << got.back() << ": its partition is still assigned";
  }
  ASSERT_EQ(got.size(), static_cast<std::size_t>(total));
  const auto took = std::chrono::steady_clock::now() - *started;
  EXPECT_GT(took, max_poll_interval + max_poll_interval / 2)
      << "the handling outlasted max.poll.interval.ms";
  std::vector<long> in_order(got.size());
  for (long n = 0; n < total; ++n) in_order[static_cast<std::size_t>(n)] = n;
  EXPECT_EQ(got, in_order) << "each record once, in order: no redelivery";
  EXPECT_EQ(t->stats().rebalances, 1) << "assigned once, never revoked";
  EXPECT_EQ(t->stats().abandoned, 0);
  // Its acks commit while it is a member (receive() sends the commits that are due).
  const auto commit_deadline = std::chrono::steady_clock::now() + 30s;
  while (raw_->committed(group_, topic_, 0) != total &&
         std::chrono::steady_clock::now() < commit_deadline) {
    auto r = t->receive(topic_, 200ms);
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_FALSE(*r) << "nothing more to receive";
  }
  EXPECT_EQ(raw_->committed(group_, topic_, 0), total);
  EXPECT_EQ(t->stats().rebalances, 1);
  EXPECT_TRUE(t->close(std::chrono::steady_clock::now() + 10s));
  expect_nothing_left(1);
}

TEST_F(KafkaGroup, ARevokedInFlightRecordIsAbandonedAndDeliveredAgain) {
  auto a = open();
  ASSERT_TRUE(a->publish(topic_, bqtest::envelope_text(5)));
  auto held = next(*a, topic_);
  ASSERT_TRUE(held);
  // A second member joins; `a` keeps polling (its handler is "still running" on `held`).
  auto b = open();
  std::optional<babelqueue::received_message> again;
  babelqueue::transport* owner = nullptr;
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (!again && std::chrono::steady_clock::now() < deadline) {
    for (babelqueue::transport* t : {static_cast<babelqueue::transport*>(a.get()),
                                     static_cast<babelqueue::transport*>(b.get())}) {
      auto r = t->receive(topic_, 300ms);
      ASSERT_TRUE(r) << r.error().message;
      if (*r) {
        again = std::move(*r);
        owner = t;
        break;
      }
    }
  }
  ASSERT_TRUE(again) << "the abandoned record is delivered again after the rebalance";
  EXPECT_EQ(again->body, held->body);
  EXPECT_GE(a->stats().abandoned, 1);
  auto late = a->ack(*held);
  EXPECT_EQ(late.code(), babelqueue::transport_errc::unavailable)
      << "a record of a revoked assignment cannot be settled";
  ASSERT_TRUE(owner->ack(*again));
}

TEST_F(KafkaGroup, AWorkerKilledMidHandlerLeavesItsRecordToTheNextMember) {
  const std::string worker = bqtest::env_or_empty("BABELQUEUE_KAFKA_KILL_WORKER");
  ASSERT_FALSE(worker.empty()) << "CTest sets BABELQUEUE_KAFKA_KILL_WORKER";
  const std::string body = bqtest::envelope_text(77);
  {
    auto p = open();
    ASSERT_TRUE(p->publish(topic_, body));
  }
  // The worker prints "handling <n>" when its handler starts, then sleeps.
  int out[2];
  ASSERT_EQ(::pipe(out), 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_addclose(&fa, out[0]);
  const std::string url = bqtest::kafka_url(group_);
  std::vector<char*> argv{const_cast<char*>(worker.c_str()), const_cast<char*>(url.c_str()),
                          const_cast<char*>(topic_.c_str()), nullptr};
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, worker.c_str(), &fa, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&fa);
  ::close(out[1]);
  std::string seen;
  char buf[256];
  while (seen.find("handling 77") == std::string::npos) {
    const ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n <= 0) break;
    seen.append(buf, static_cast<std::size_t>(n));
  }
  ::close(out[0]);
  ASSERT_NE(seen.find("handling 77"), std::string::npos) << seen;
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));

  // The next member gets the record once the dead one's session (6 s here) expires.
  babelqueue::kafka::register_transport();
  babelqueue::app_options o;
  o.queue = topic_;
  o.poll_timeout = 40s;
  babelqueue::app app(url, o);
  std::vector<long> got;
  app.handle("urn:babel:test:item",
             [&](babelqueue::message& m) { got.push_back(m.data().at("n").get<long>()); });
  auto n = app.drain(topic_, 1);
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(got, std::vector<long>{77}) << "handled once more, not lost";
}
