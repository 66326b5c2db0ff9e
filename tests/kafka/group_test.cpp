// Consumer-group behaviour of kafka:// against the real broker: a rebalance while four
// workers have records in flight (nothing lost, everything committed at the end), and a
// worker process killed with SIGKILL mid-handler (the record goes to the next member of
// the group and is handled once more, never lost).
#include "kafka/kafka_fixture.hpp"

#include <babelqueue/runtime/app.hpp>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

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
  while (distinct() < total / 4 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(20ms);
  // Two more members join mid-flight: the group rebalances under the four busy workers.
  babelqueue::app second(url, app_opts(2));
  second.handle("urn:babel:test:item", handler);
  std::thread b([&] { EXPECT_TRUE(second.consume()); });
  while (distinct() < static_cast<std::size_t>(total) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(50ms);
  }
  first.stop();
  second.stop();
  a.join();
  b.join();
  EXPECT_EQ(distinct(), static_cast<std::size_t>(total)) << "every record handled";
  std::int64_t committed = 0;
  for (int p = 0; p < 4; ++p) committed += std::max<std::int64_t>(raw_->committed(group_, topic_, p), 0);
  EXPECT_EQ(committed, total) << "every offset committed once the workers stopped";
  std::cout << "[ rebalance ] handled " << handled.size() << " times for " << total
            << " records (duplicates are at-least-once redeliveries of abandoned in-flight records)\n";
  EXPECT_TRUE(raw_->read_all(topic_ + ".dlq", 0, 1s).empty());
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
  app.handle("urn:babel:test:item", [&](babelqueue::message& m) { got.push_back(m.data().at("n").get<long>()); });
  auto n = app.drain(topic_, 1);
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(got, std::vector<long>{77}) << "handled once more, not lost";
}
