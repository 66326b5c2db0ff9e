// The PostgreSQL outbox store across a server restart ($BABELQUEUE_POSTGRES_CTL of
// scripts/services.sh; RUN_SERIAL, every other PostgreSQL test would fail meanwhile): a
// pass whose connection went with the server ends with a typed `unavailable` error (its
// rows were not marked), and the next pass, on a connection the store made again by
// itself, publishes them — at-least-once, nothing lost.
#include "runtime/test_util.hpp"
#include "support/postgres.hpp"

#include <babelqueue/memory/memory_transport.hpp>
#include <babelqueue/outbox/error.hpp>
#include <babelqueue/outbox/postgres_store.hpp>
#include <babelqueue/outbox/relay.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace {

using namespace babelqueue;

TEST(OutboxPostgresRestart, APassCutByARestartIsRepublishedByTheNextOne) {
  const std::string url = bqtest::postgres_url();
  BQ_REQUIRE_POSTGRES(url);
  const std::string ctl = bqtest::env_or_empty("BABELQUEUE_POSTGRES_CTL");
  ASSERT_FALSE(ctl.empty()) << "services.sh exports BABELQUEUE_POSTGRES_CTL";
  const std::string table = bqtest::unique_table("bq_outbox_restart");
  auto s = std::shared_ptr<outbox::postgres_store>(
      outbox::postgres_store::open(url, {.table = table}).value());
  ASSERT_TRUE(s->migrate());
  s->save("one", "q").value();
  s->save("two", "q").value();

  auto rows = s->fetch_unpublished(10).value();  // the pass holds both rows
  ASSERT_EQ(rows.size(), 2u);
  ASSERT_EQ(std::system((ctl + " restart >/dev/null 2>&1").c_str()), 0) << "restart";
  auto marked = s->mark_published(std::vector<std::string>{rows[0].id, rows[1].id});
  ASSERT_FALSE(marked);  // the transaction of the pass is gone: not marked
  EXPECT_EQ(marked.error().code, outbox::errc::unavailable) << marked.error().message;

  const std::string broker = bqtest::unique_broker("outbox-pg-restart");
  memory::memory_transport out(broker);
  outbox::relay r(s, out);
  auto drained = r.drain();  // the store reconnects by itself
  ASSERT_TRUE(drained) << drained.error().message;
  EXPECT_EQ(drained->published, 2u);
  EXPECT_EQ(bqtest::take_all(broker, "q").size(), 2u);
  bqtest::pg_client raw(url);
  EXPECT_EQ(raw.scalar("SELECT count(*) FROM " + table + " WHERE status = 'published'"), "2");
  raw.exec("DROP TABLE " + table);
}

}  // namespace
