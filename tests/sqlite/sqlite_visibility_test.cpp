// Visibility timeout: a reserved but unsettled message comes back after the timeout, and
// the late consumer can no longer settle the new holder's reservation.
#include "sqlite/test_support.hpp"

#include <babelqueue/sqlite/sqlite_transport.hpp>

#include <gtest/gtest.h>

namespace {

using namespace bq_sqlite_test;
using babelqueue::condition;
using babelqueue::errc;
using babelqueue::transport_errc;
using Clock = std::chrono::steady_clock;

TEST(SqliteVisibility, UnackedMessageComesBackAfterTheTimeout) {
  temp_dir dir;
  auto first = open_at(dir.file("q.db"), 300ms);
  auto second = open_at(dir.file("q.db"), 300ms);
  ASSERT_TRUE(first && second);
  ASSERT_TRUE(first->publish("v", "job", {{"traceparent", "tp"}}));
  auto a = first->receive("v", 1s);
  ASSERT_TRUE(a && *a);
  const auto reserved = Clock::now();
  // Reserved: invisible to everyone else until the timeout.
  auto none = second->receive("v", 100ms);
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);
  auto b = second->receive("v", 3s);
  ASSERT_TRUE(b && *b);
  EXPECT_GE(Clock::now() - reserved, 290ms);
  EXPECT_EQ((*b)->body, "job");
  EXPECT_EQ((*b)->hdrs, (babelqueue::headers{{"traceparent", "tp"}}));
  EXPECT_EQ((*b)->delivery_count, 2);
  // The late first consumer lost its reservation: its ack must not delete the message
  // that the second consumer is now working on.
  auto late = first->ack(**a);
  EXPECT_EQ(late.code(), condition::invalid_argument);
  auto s = second->stats("v");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->in_flight, 1);
  ASSERT_TRUE(second->ack(**b));
  s = second->stats("v");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->in_flight + s->ready + s->delayed, 0);
}

TEST(SqliteVisibility, LateAckStillWorksWhenNobodyTookTheMessageOver) {
  temp_dir dir;
  auto t = open_at(dir.file("q.db"), 100ms);
  ASSERT_TRUE(t);
  ASSERT_TRUE(t->publish("v", "slow"));
  auto m = t->receive("v", 1s);
  ASSERT_TRUE(m && *m);
  std::this_thread::sleep_for(250ms);
  auto s = t->stats("v");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->ready, 1);    // expired: deliverable again
  ASSERT_TRUE(t->ack(**m));  // but still ours, so the ack deletes it (no needless duplicate)
  auto none = t->receive("v", 0ms);
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);
}

TEST(SqliteVisibility, LateReleaseDoesNotDisturbTheNewHolder) {
  temp_dir dir;
  auto first = open_at(dir.file("q.db"), 100ms);
  auto second = open_at(dir.file("q.db"), 30s);
  ASSERT_TRUE(first && second);
  ASSERT_TRUE(first->publish("v", "x"));
  auto a = first->receive("v", 1s);
  ASSERT_TRUE(a && *a);
  auto b = second->receive("v", 2s);  // after first's 100 ms reservation expired
  ASSERT_TRUE(b && *b);
  EXPECT_EQ(first->release(**a).code(), condition::invalid_argument);
  auto none = first->receive("v", 0ms);  // still reserved by second
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);
  ASSERT_TRUE(second->ack(**b));
}

}  // namespace
