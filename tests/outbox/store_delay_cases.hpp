#pragma once
// What every outbox store must do with delivery times (store.hpp, issue #37), written once and
// run by each store's test (memory, SQLite, PostgreSQL): a row saved with a time in the future
// is not handed out by fetch_unpublished(), fetch_due() hands it out when asked for rows due by
// a later instant, and the time comes back to the millisecond.
#include <babelqueue/outbox/store.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace bqtest {

inline std::vector<std::string> bodies_of(const std::vector<babelqueue::outbox::record>& rows) {
  std::vector<std::string> out;
  out.reserve(rows.size());
  for (const auto& r : rows) out.push_back(r.body);
  return out;
}

inline void expect_store_keeps_delivery_times(babelqueue::outbox::store& s) {
  using namespace std::chrono_literals;
  namespace ob = babelqueue::outbox;
  const ob::due_time now = ob::due_now();
  const ob::due_time later = now + 1h + 7ms;
  ASSERT_TRUE(s.save("now", "q"));
  ASSERT_TRUE(s.save_at("later", "q", later));
  ASSERT_TRUE(s.save_at("past", "q", now - 1s));

  // Due now: the plain row and the one whose time has passed, oldest first; never "later".
  EXPECT_EQ(bodies_of(s.fetch_unpublished(10).value()), (std::vector<std::string>{"now", "past"}));
  EXPECT_EQ(bodies_of(s.fetch_due(10, now).value()), (std::vector<std::string>{"now", "past"}));
  EXPECT_EQ(bodies_of(s.fetch_due(10, later - 1ms).value()),
            (std::vector<std::string>{"now", "past"}));

  // Due by `later`: all three, with their times to the millisecond.
  auto all = s.fetch_due(10, later).value();
  ASSERT_EQ(bodies_of(all), (std::vector<std::string>{"now", "later", "past"}));
  EXPECT_FALSE(all[0].deliver_at.has_value());
  ASSERT_TRUE(all[1].deliver_at.has_value());
  EXPECT_EQ(*all[1].deliver_at, later);
  ASSERT_TRUE(all[2].deliver_at.has_value());
  EXPECT_EQ(*all[2].deliver_at, now - 1s);
  EXPECT_EQ(s.fetch_due(1, later).value().size(), 1u);

  // Published rows are gone from both; the pending "later" stays.
  const std::vector<std::string> done{all[0].id, all[2].id};
  ASSERT_TRUE(s.mark_published(done));
  EXPECT_TRUE(s.fetch_unpublished(10).value().empty());
  EXPECT_EQ(bodies_of(s.fetch_due(10, later).value()), (std::vector<std::string>{"later"}));
}

}  // namespace bqtest
