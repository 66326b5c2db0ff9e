// sqlite:// URL → options, 1:1, with typed errors for anything unexpected.
#include <babelqueue/runtime/url.hpp>
#include <babelqueue/sqlite/sqlite_transport.hpp>

#include <gtest/gtest.h>

namespace {

using namespace std::chrono_literals;
using babelqueue::condition;
using babelqueue::errc;
using babelqueue::transport_errc;
namespace bs = babelqueue::sqlite;

babelqueue::result<bs::options> from(std::string_view url) {
  auto u = babelqueue::broker_url::parse(url);
  if (!u) return babelqueue::fail(u.error());
  return bs::options_from_url(*u);
}

TEST(SqliteOptions, Defaults) {
  auto o = from("sqlite:///var/lib/app/queue.db");
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_EQ(o->path, "/var/lib/app/queue.db");
  EXPECT_EQ(o->visibility_timeout, 30s);
  EXPECT_EQ(o->poll_interval, 50ms);
  EXPECT_EQ(o->busy_timeout, 5s);
  EXPECT_EQ(o->synchronous, bs::synchronous_mode::normal);
  EXPECT_TRUE(o->create);
}

TEST(SqliteOptions, RelativePaths) {
  auto a = from("sqlite://queue.db");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->path, "queue.db");
  auto b = from("sqlite://data/dir/queue.db");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->path, "data/dir/queue.db");
}

TEST(SqliteOptions, QueryMapsOneToOne) {
  auto o = from(
      "sqlite:///q.db?visibility_timeout=2m&poll_interval=250ms&busy_timeout=1500"
      "&synchronous=full&create=false");
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_EQ(o->visibility_timeout, 2min);
  EXPECT_EQ(o->poll_interval, 250ms);
  EXPECT_EQ(o->busy_timeout, 1500ms);
  EXPECT_EQ(o->synchronous, bs::synchronous_mode::full);
  EXPECT_FALSE(o->create);
}

TEST(SqliteOptions, TypedErrors) {
  for (const char* url : {
           "sqlite:///q.db?visibility=5s",            // unknown key
           "sqlite:///q.db?visibility_timeout=soon",  // not a duration
           "sqlite:///q.db?visibility_timeout=0",     // must be > 0
           "sqlite:///q.db?poll_interval=2m",         // above the bound
           "sqlite:///q.db?synchronous=off",          // not offered: would lose commits
           "sqlite:///q.db?create=maybe",
           "sqlite://",                     // no path
           "sqlite://:memory:",             // not shareable
           "sqlite://user:pw@host:1/q.db",  // not a network URL
       }) {
    auto o = from(url);
    EXPECT_FALSE(o) << url;
    if (!o) {
      EXPECT_EQ(o.code(), condition::invalid_argument) << url << ": " << o.error().message;
      EXPECT_FALSE(o.error().message.empty());
    }
  }
}

TEST(SqliteOptions, OpenValidatesOptionsBuiltInCode) {
  bs::options o;
  o.path = "/tmp/never-created.db";
  o.visibility_timeout = 0ms;
  auto t = bs::sqlite_transport::open(o);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.code(), condition::invalid_argument);
  o.visibility_timeout = 1s;
  o.path = ":memory:";
  EXPECT_EQ(bs::sqlite_transport::open(o).code(), condition::invalid_argument);
}

}  // namespace
