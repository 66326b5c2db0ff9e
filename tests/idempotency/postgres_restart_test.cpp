// The PostgreSQL idempotency store across a server outage ($BABELQUEUE_POSTGRES_CTL of
// scripts/services.sh stops and starts the server; RUN_SERIAL, every other PostgreSQL test
// would fail meanwhile): a call while the server is down is a typed `unavailable` error,
// never a crash or a silent answer, and the owned connection reconnects by itself once the
// server is back; a mark committed before the outage is still there.
#include "support/postgres.hpp"

#include <babelqueue/idempotency/error.hpp>
#include <babelqueue/idempotency/postgres_store.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace {

using namespace babelqueue;

TEST(PostgresIdempotencyRestart, DownIsUnavailableAndTheStoreReconnectsAfterwards) {
  const std::string url = bqtest::postgres_url();
  BQ_REQUIRE_POSTGRES(url);
  const std::string ctl = bqtest::env_or_empty("BABELQUEUE_POSTGRES_CTL");
  ASSERT_FALSE(ctl.empty()) << "services.sh exports BABELQUEUE_POSTGRES_CTL";
  const std::string table = bqtest::unique_table("bq_idem_restart");
  auto s = idempotency::postgres_store::open(url, {.table = table}).value();
  ASSERT_TRUE(s->migrate());
  ASSERT_TRUE(s->remember("before"));

  ASSERT_EQ(std::system((ctl + " stop >/dev/null 2>&1").c_str()), 0) << "stop the server";
  auto down = s->seen("before");
  EXPECT_FALSE(down);
  if (!down) {
    EXPECT_EQ(down.error().code, idempotency::errc::unavailable) << down.error().message;
    EXPECT_EQ(down.error().code, condition::unavailable);
  }
  auto claim = s->claim("x", std::chrono::seconds(5));
  ASSERT_FALSE(claim);
  EXPECT_EQ(claim.error().code, idempotency::errc::unavailable);
  ASSERT_EQ(std::system((ctl + " start >/dev/null 2>&1").c_str()), 0) << "start the server";

  auto back = s->seen("before");  // one reconnect, no new store
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_TRUE(*back);
  EXPECT_TRUE(s->claim("x", std::chrono::seconds(5)).value());

  // A restart while the store's connection sits idle: the next call finds the connection
  // broken, reconnects once and runs the statement again — the caller sees no error.
  ASSERT_EQ(std::system((ctl + " restart >/dev/null 2>&1").c_str()), 0) << "restart";
  auto after = s->seen("before");
  ASSERT_TRUE(after) << after.error().message;
  EXPECT_TRUE(*after);
  bqtest::pg_client raw(url);
  raw.exec("DROP TABLE " + table);
  raw.exec("DROP TABLE " + table + "_claims");
}

}  // namespace
