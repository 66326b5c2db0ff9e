// The App runtime on sqlite://: retry by republish, dead-lettering, and several worker
// threads (one transport instance each) sharing one file.
#include "sqlite/test_support.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/runtime/app.hpp>
#include <babelqueue/sqlite/sqlite_transport.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

namespace {

using namespace bq_sqlite_test;

TEST(SqliteApp, RetriesThenDeadLettersThroughTheFile) {
  temp_dir dir;
  babelqueue::sqlite::register_transport();
  babelqueue::app_options o;
  o.queue = "jobs";
  o.dead_letter = true;
  o.poll_timeout = 200ms;
  auto app = babelqueue::app::open("sqlite://" + dir.file("q.db"), o);
  ASSERT_TRUE(app) << app.error().message;
  std::vector<std::int64_t> seen;
  (*app)->handle("urn:test:fail", [&](babelqueue::message& m) {
    seen.push_back(m.attempts());
    throw std::runtime_error("boom");
  });
  auto id = (*app)->publish("urn:test:fail", babelqueue::json{{"n", 12345678901234567890ull}});
  ASSERT_TRUE(id) << id.error().message;
  auto n = (*app)->drain("jobs");
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(seen, (std::vector<std::int64_t>{0, 1, 2}));

  auto t = open_at(dir.file("q.db"));
  ASSERT_TRUE(t);
  auto jobs = t->stats("jobs");
  ASSERT_TRUE(jobs);
  EXPECT_EQ(jobs->ready + jobs->delayed + jobs->in_flight, 0);
  auto dlq = t->receive("jobs.dlq", 1s);
  ASSERT_TRUE(dlq && *dlq);
  auto env = babelqueue::decode((*dlq)->body);
  ASSERT_TRUE(env) << env.error().message;
  EXPECT_EQ(env->attempts(), 3);
  ASSERT_TRUE(env->dead_letter());
  EXPECT_EQ(env->dead_letter()->attempts, 3);
  EXPECT_EQ(env->id(), *id);
  EXPECT_NE((*dlq)->body.find("12345678901234567890"), std::string::npos);
  ASSERT_TRUE(t->ack(**dlq));
}

TEST(SqliteApp, WorkerThreadsConsumeEachMessageOnce) {
  temp_dir dir;
  babelqueue::sqlite::register_transport();
  babelqueue::app_options o;
  o.queue = "jobs";
  o.workers = 3;
  o.poll_timeout = 100ms;
  auto app = babelqueue::app::open("sqlite://" + dir.file("q.db"), o);
  ASSERT_TRUE(app) << app.error().message;
  constexpr int n = 300;
  std::mutex mu;
  std::multiset<std::int64_t> got;
  std::atomic<int> count{0};
  (*app)->handle("urn:test:count", [&](babelqueue::message& m) {
    {
      std::lock_guard lock(mu);
      got.insert(m.data().at("i").get<std::int64_t>());
    }
    if (++count == n) (*app)->stop();
  });
  for (int i = 0; i < n; ++i) {
    ASSERT_TRUE((*app)->publish("urn:test:count", babelqueue::json{{"i", i}}));
  }
  std::thread stopper([&] {  // a safety net: never hang the test suite
    for (int i = 0; i < 300 && count < n; ++i) std::this_thread::sleep_for(100ms);
    (*app)->stop();
  });
  auto r = (*app)->consume();
  stopper.join();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(got.size(), static_cast<std::size_t>(n));
  EXPECT_EQ(std::set<std::int64_t>(got.begin(), got.end()).size(), static_cast<std::size_t>(n));
}

}  // namespace
