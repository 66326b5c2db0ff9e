// Several processes sharing one queue file, and consumers that die mid-handler.
#include "sqlite/test_support.hpp"

#include <babelqueue/sqlite/sqlite_transport.hpp>

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace {

using namespace bq_sqlite_test;

std::string body(int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "msg-%05d", i);
  return buf;
}

void publish_n(const std::string& path, int n) {
  auto t = open_at(path);
  ASSERT_TRUE(t);
  std::vector<babelqueue::outgoing_message> batch;
  for (int i = 0; i < n; ++i) batch.push_back({body(i), {}});
  ASSERT_TRUE(t->publish_batch("work", batch));
}

std::map<std::string, int> tally(const std::vector<std::string>& files) {
  std::map<std::string, int> seen;
  for (const auto& f : files) {
    for (const auto& line : read_lines(f)) ++seen[line];
  }
  return seen;
}

bool exited_ok(int status) { return status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0; }

TEST(SqliteMultiProcess, TwoConsumersProcessEveryMessageExactlyOnce) {
  temp_dir dir;
  const std::string db = dir.file("q.db");
  constexpr int n = 600;
  publish_n(db, n);
  const std::string url = "sqlite://" + db + "?visibility_timeout=30s&poll_interval=20ms";
  // 1 ms of "work" per message, so that neither process can drain the queue alone.
  child a({url, "work", dir.file("a.txt"), "--work-ms", "1", "--idle-ms", "1000"});
  child b({url, "work", dir.file("b.txt"), "--work-ms", "1", "--idle-ms", "1000"});
  EXPECT_TRUE(exited_ok(a.wait(60s)));
  EXPECT_TRUE(exited_ok(b.wait(60s)));
  const auto la = read_lines(dir.file("a.txt")), lb = read_lines(dir.file("b.txt"));
  EXPECT_GT(la.size(), 0u) << "consumer a got nothing";
  EXPECT_GT(lb.size(), 0u) << "consumer b got nothing";
  const auto seen = tally({dir.file("a.txt"), dir.file("b.txt")});
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(n)) << "lost messages";
  for (const auto& [msg, count] : seen) EXPECT_EQ(count, 1) << msg << " duplicated";
  EXPECT_EQ(la.size() + lb.size(), static_cast<std::size_t>(n));
  auto t = open_at(db);
  ASSERT_TRUE(t);
  auto s = t->stats("work");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->ready + s->delayed + s->in_flight, 0);
}

TEST(SqliteMultiProcess, CrashedConsumersMessageIsTheOnlyDuplicate) {
  temp_dir dir;
  const std::string db = dir.file("q.db");
  constexpr int n = 300;
  publish_n(db, n);
  const std::string url = "sqlite://" + db + "?visibility_timeout=1s&poll_interval=20ms";
  // a records its 5th message, then SIGKILLs itself before acking it; b must pick that
  // message up once its 1 s reservation expires (b idles 3 s before giving up).
  child a({url, "work", dir.file("a.txt"), "--work-ms", "1", "--crash-after", "5"});
  child b({url, "work", dir.file("b.txt"), "--work-ms", "1", "--idle-ms", "3000"});
  const int sa = a.wait(60s);
  ASSERT_TRUE(sa >= 0 && WIFSIGNALED(sa) && WTERMSIG(sa) == SIGKILL) << "status " << sa;
  EXPECT_TRUE(exited_ok(b.wait(60s)));
  const auto la = read_lines(dir.file("a.txt"));
  ASSERT_EQ(la.size(), 5u);
  const std::string crashed = la.back();
  const auto seen = tally({dir.file("a.txt"), dir.file("b.txt")});
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(n)) << "lost messages";
  for (const auto& [msg, count] : seen) {
    if (msg == crashed) {
      EXPECT_EQ(count, 2) << "the crashed message must be processed again";
    } else {
      EXPECT_EQ(count, 1) << msg << " duplicated";
    }
  }
}

TEST(SqliteMultiProcess, KilledMidHandlerMessageComesBackAfterTheTimeout) {
  temp_dir dir;
  const std::string db = dir.file("q.db");
  constexpr auto visibility = 1500ms;
  auto t = open_at(db, visibility);
  ASSERT_TRUE(t);
  ASSERT_TRUE(t->publish("work", "in-handler", {{"traceparent", "tp-1"}}));
  const std::string url = "sqlite://" + db + "?visibility_timeout=1500ms";
  child stuck({url, "work", dir.file("stuck.txt"), "--hang"});
  ASSERT_TRUE(wait_for_lines(dir.file("stuck.txt"), 1, 10s)) << "worker never got the message";
  const auto reserved_by_then = std::chrono::steady_clock::now();
  stuck.kill9();
  const int st = stuck.wait(10s);
  ASSERT_TRUE(st >= 0 && WIFSIGNALED(st)) << "status " << st;
  // Still reserved by the dead process: not deliverable yet.
  auto s = t->stats("work");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->in_flight, 1);
  auto none = t->receive("work", 0ms);
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);
  // Back after the visibility timeout, same bytes and headers, counted twice.
  auto back = t->receive("work", 10s);
  ASSERT_TRUE(back && *back);
  EXPECT_LT(std::chrono::steady_clock::now() - reserved_by_then, visibility + 1s);
  EXPECT_EQ((*back)->body, "in-handler");
  EXPECT_EQ((*back)->hdrs, (babelqueue::headers{{"traceparent", "tp-1"}}));
  EXPECT_EQ((*back)->delivery_count, 2);
  ASSERT_TRUE(t->ack(**back));
}

}  // namespace
