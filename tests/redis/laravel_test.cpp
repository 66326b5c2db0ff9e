// redis://…?laravel=1 against a real redis-server: Laravel's keys (`queues:<name>`,
// `:reserved`, `:delayed`, `:notify`) and nothing else, Laravel's reservation semantics
// (attempts + 1 in the reserved member, retry-after deadline, migration of due delayed jobs
// and of expired reservations, release with a delay, delete on ack), headers refused, and the
// App runtime on top (retry and dead-letter counted once per delivery). The live Laravel and
// Python peers are in tests/interop (laravel_php_test, redis_python_test).
#include "redis/redis_fixture.hpp"

#include <babelqueue/bindings/redis.hpp>
#include <babelqueue/runtime/app.hpp>

#include <algorithm>
#include <thread>

using namespace std::chrono_literals;
using bqtest::envelope_n;
using bqtest::padded_envelope_text;
namespace bqr = babelqueue::redis;

namespace {

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

class RedisLaravel : public bqtest::RedisTest {
 protected:
  bqr::options laravel_opts() const {
    auto o = opts();
    o.laravel = true;
    return o;
  }

  std::vector<std::string> keys() {
    redisReply* r = raw_->run({"KEYS", "*"});
    std::vector<std::string> out;
    if (r != nullptr && r->type == REDIS_REPLY_ARRAY) {
      for (std::size_t i = 0; i < r->elements; ++i)
        out.emplace_back(r->element[i]->str, r->element[i]->len);
    }
    if (r != nullptr) freeReplyObject(r);
    return sorted(out);
  }

  // Members of a sorted set with their scores.
  std::vector<std::pair<std::string, double>> zset(const std::string& key) {
    redisReply* r = raw_->run({"ZRANGE", key, "0", "-1", "WITHSCORES"});
    std::vector<std::pair<std::string, double>> out;
    if (r != nullptr && r->type == REDIS_REPLY_ARRAY) {
      for (std::size_t i = 0; i + 1 < r->elements; i += 2) {
        out.emplace_back(std::string(r->element[i]->str, r->element[i]->len),
                         std::stod(std::string(r->element[i + 1]->str, r->element[i + 1]->len)));
      }
    }
    if (r != nullptr) freeReplyObject(r);
    return out;
  }

  // The first element of TIME (seconds); raw_client::str reads only the first line.
  long long now_s() {
    redisReply* r = raw_->run({"TIME"});
    long long v = std::stoll(std::string(r->element[0]->str, r->element[0]->len));
    freeReplyObject(r);
    return v;
  }
};

TEST(RedisLaravelOptions, UrlKeysAndValidation) {
  auto url = babelqueue::broker_url::parse(
      "redis://h/0?laravel=1&prefix=laravel_database_queues:&retry_after=60&migration_batch=50");
  ASSERT_TRUE(url);
  auto o = bqr::options_from_url(*url);
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_TRUE(o->laravel);
  EXPECT_EQ(o->prefix, "laravel_database_queues:");
  EXPECT_EQ(o->retry_after, std::chrono::seconds(60));  // bare = seconds, as in Python's URL
  EXPECT_EQ(o->migration_batch, 50);

  auto compat = bqr::options_from_url(
      *babelqueue::broker_url::parse("redis://h?laravel_compat=true&prefix="));
  ASSERT_TRUE(compat);
  EXPECT_TRUE(compat->laravel);
  EXPECT_EQ(compat->prefix, "queues:");  // `prefix=` keeps the default, as in Python

  auto plain = bqr::options_from_url(*babelqueue::broker_url::parse("redis://h"));
  ASSERT_TRUE(plain);
  EXPECT_FALSE(plain->laravel);

  for (const char* bad : {"redis://h?laravel=1&prefetch=4", "redis://h?migration_batch=0",
                          "redis://h?migration_batch=-2"}) {
    auto r = bqr::options_from_url(*babelqueue::broker_url::parse(bad));
    EXPECT_FALSE(r) << bad;
    if (!r) {
      EXPECT_EQ(r.code(), babelqueue::transport_errc::invalid_argument) << bad;
    }
  }
  EXPECT_FALSE(bqr::options_from_url(*babelqueue::broker_url::parse("redis://h?laravel=maybe")));
}

TEST(RedisLaravelKeys, FourKeysAndTheirSlot) {
  auto k = babelqueue::bindings::redis::laravel_keys_of("orders");
  EXPECT_EQ(k.ready, "queues:orders");
  EXPECT_EQ(k.reserved, "queues:orders:reserved");
  EXPECT_EQ(k.delayed, "queues:orders:delayed");
  EXPECT_EQ(k.notify, "queues:orders:notify");
  EXPECT_TRUE(babelqueue::bindings::redis::laravel_cluster_safe("{orders}"));
  EXPECT_FALSE(babelqueue::bindings::redis::laravel_cluster_safe("orders"));
  EXPECT_TRUE(babelqueue::bindings::redis::laravel_cluster_safe("orders", "queues:{app}:"));
}

TEST_F(RedisLaravel, PublishWritesTheJobAndOneNotifyTokenOnly) {
  auto t = open(laravel_opts());
  const std::string a = padded_envelope_text(1), b = padded_envelope_text(2),
                    c = padded_envelope_text(3);
  ASSERT_TRUE(t->publish("orders", a));
  std::vector<babelqueue::outgoing_message> batch{{b, {}}, {c, {}}};
  ASSERT_TRUE(t->publish_batch("orders", batch));
  EXPECT_EQ(raw_->list("queues:orders"), (std::vector<std::string>{a, b, c}));
  EXPECT_EQ(raw_->list("queues:orders:notify"), (std::vector<std::string>{"1", "1", "1"}));
  EXPECT_EQ(keys(), (std::vector<std::string>{"queues:orders", "queues:orders:notify"}));
}

TEST_F(RedisLaravel, HeadersAreRefusedAndNothingIsStored) {
  auto t = open(laravel_opts());
  auto r = t->publish("orders", padded_envelope_text(1), {{"traceparent", "00-abc-def-01"}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.code(), babelqueue::transport_errc::not_supported);
  EXPECT_NE(r.error().message.find("header"), std::string::npos) << r.error().message;
  std::vector<babelqueue::outgoing_message> batch{{padded_envelope_text(2), {{"a", "b"}}}};
  EXPECT_FALSE(t->publish_batch("orders", batch));
  EXPECT_TRUE(keys().empty());
  EXPECT_FALSE(t->capabilities().headers);
  EXPECT_TRUE(t->capabilities().native_delay);
}

TEST_F(RedisLaravel, ReserveDeliversTheJobAndReservesItWithAttemptsPlusOne) {
  auto t = open(laravel_opts());
  const std::string job = padded_envelope_text(7);
  ASSERT_TRUE(t->publish("orders", job));
  const long long before = now_s();
  auto got = t->receive("orders", 0ms);
  ASSERT_TRUE(got) << got.error().message;
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->body, job);  // the job exactly as popped
  EXPECT_TRUE((*got)->hdrs.empty());
  EXPECT_EQ(raw_->llen("queues:orders"), 0);
  EXPECT_EQ(raw_->llen("queues:orders:notify"), 0);  // the pop took its token
  auto reserved = zset("queues:orders:reserved");
  ASSERT_EQ(reserved.size(), 1u);
  // The member is cjson's re-encoding with attempts + 1 (Laravel's pop): same envelope.
  auto member = babelqueue::decode(reserved[0].first);
  ASSERT_TRUE(member) << reserved[0].first;
  EXPECT_EQ(member->attempts(), 1);
  EXPECT_EQ(envelope_n(reserved[0].first), 7);
  EXPECT_GE(reserved[0].second, static_cast<double>(before + 90));
  EXPECT_LE(reserved[0].second, static_cast<double>(now_s() + 90));

  ASSERT_TRUE(t->ack(**got));
  ASSERT_TRUE(t->flush());
  EXPECT_TRUE(keys().empty());  // ack = ZREM; the four keys are gone
}

TEST_F(RedisLaravel, DeferredAcksRideWithTheNextReserve) {
  auto t = open(laravel_opts());
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(t->publish("orders", padded_envelope_text(i)));
  const auto trips_before = t->stats().round_trips;
  for (int i = 0; i < 5; ++i) {
    auto got = t->receive("orders", 0ms);
    ASSERT_TRUE(got && got->has_value());
    EXPECT_EQ(envelope_n((*got)->body), i);  // FIFO
    ASSERT_TRUE(t->ack(**got));
  }
  EXPECT_EQ(t->stats().round_trips - trips_before, 5);   // one per message, acks included
  EXPECT_EQ(zset("queues:orders:reserved").size(), 1u);  // the last ack is still deferred
  ASSERT_TRUE(t->flush());
  EXPECT_TRUE(zset("queues:orders:reserved").empty());
  EXPECT_EQ(t->stats().stale_acks, 0);
}

TEST_F(RedisLaravel, SynchronousAckReportsAReservationThatIsGone) {
  auto o = laravel_opts();
  o.pipeline_acks = false;
  auto t = open(o);
  ASSERT_TRUE(t->publish("orders", padded_envelope_text(1)));
  auto got = t->receive("orders", 0ms);
  ASSERT_TRUE(got && got->has_value());
  raw_->integer({"DEL", "queues:orders:reserved"});  // a worker already removed it
  auto r = t->ack(**got);  // a waited-for ack reports it (the owned layout does the same)
  ASSERT_FALSE(r);
  EXPECT_EQ(r.code(), babelqueue::transport_errc::invalid_argument);
  EXPECT_EQ(t->stats().stale_acks, 1);
}

TEST_F(RedisLaravel, ReleaseWithoutDelayRequeuesTheSameBytesAtTheEnd) {
  auto t = open(laravel_opts());
  const std::string a = padded_envelope_text(1), b = padded_envelope_text(2);
  ASSERT_TRUE(t->publish("orders", a));
  ASSERT_TRUE(t->publish("orders", b));
  auto got = t->receive("orders", 0ms);
  ASSERT_TRUE(got && got->has_value());
  ASSERT_TRUE(t->release(**got));
  EXPECT_EQ(raw_->list("queues:orders"), (std::vector<std::string>{b, a}));
  EXPECT_EQ(raw_->llen("queues:orders:notify"), 2);
  EXPECT_TRUE(zset("queues:orders:reserved").empty());
  // Settled: a second release is refused.
  auto again = t->release(**got);
  EXPECT_FALSE(again);
}

TEST_F(RedisLaravel, ReleaseWithDelayGoesToTheDelayedSetAndMigratesWhenDue) {
  auto t = open(laravel_opts());
  const std::string job = padded_envelope_text(3);
  ASSERT_TRUE(t->publish("orders", job));
  auto got = t->receive("orders", 0ms);
  ASSERT_TRUE(got && got->has_value());
  const long long before = now_s();
  // Laravel's whole seconds, rounded up on the server's clock: due = ceil(now + 1.5 s), so
  // never before now + 1.5 s (Laravel's own floor(now) + delay can be a second early).
  ASSERT_TRUE(t->release(**got, 1500ms));
  auto delayed = zset("queues:orders:delayed");
  ASSERT_EQ(delayed.size(), 1u);
  EXPECT_EQ(delayed[0].first, job);
  EXPECT_GE(delayed[0].second, static_cast<double>(before + 2));
  EXPECT_LE(delayed[0].second, static_cast<double>(now_s() + 3));
  auto early = t->receive("orders", 0ms);
  ASSERT_TRUE(early);
  EXPECT_FALSE(early->has_value());
  // A waiting receive picks it up once due (the wait is sliced, so the migration runs).
  auto late = t->receive("orders", 5000ms);
  ASSERT_TRUE(late) << late.error().message;
  ASSERT_TRUE(late->has_value());
  EXPECT_EQ((*late)->body, job);
  EXPECT_TRUE(zset("queues:orders:delayed").empty());
}

TEST_F(RedisLaravel, AnExpiredReservationIsRecoveredAsAnAttempt) {
  auto o = laravel_opts();
  o.retry_after = std::chrono::seconds(1);
  auto crashed = open(o);
  const std::string job = padded_envelope_text(9);
  ASSERT_TRUE(crashed->publish("orders", job));
  auto lost = crashed->receive("orders", 0ms);
  ASSERT_TRUE(lost && lost->has_value());
  const std::string member = zset("queues:orders:reserved").at(0).first;
  // Another worker: once the deadline passed, its reserve migrates the reservation back and
  // takes it — the reserved bytes (attempts + 1): Laravel counts a lapsed reservation.
  auto other = open(o);
  auto got = other->receive("orders", 5000ms);
  ASSERT_TRUE(got) << got.error().message;
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->body, member);
  EXPECT_EQ(babelqueue::decode((*got)->body)->attempts(), 1);
  ASSERT_TRUE(other->ack(**got));
  ASSERT_TRUE(other->flush());
  // The late ack of the first reservation removes nothing of the second.
  ASSERT_TRUE(crashed->ack(**lost));
  ASSERT_TRUE(crashed->flush());
  EXPECT_EQ(crashed->stats().stale_acks, 1);
}

TEST_F(RedisLaravel, RetryAfterNeverScoresInfAndNeverMigrates) {
  auto o = laravel_opts();
  o.retry_after.reset();
  auto t = open(o);
  ASSERT_TRUE(t->publish("orders", padded_envelope_text(1)));
  auto got = t->receive("orders", 0ms);
  ASSERT_TRUE(got && got->has_value());
  auto reserved = zset("queues:orders:reserved");
  ASSERT_EQ(reserved.size(), 1u);
  EXPECT_TRUE(std::isinf(reserved[0].second));
  auto none = t->receive("orders", 0ms);
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());
  auto refused = t->recover("orders", 10s);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.code(), babelqueue::transport_errc::invalid_argument);
  auto all = t->recover("orders", 0ms);
  ASSERT_TRUE(all) << all.error().message;
  EXPECT_EQ(all->moved, 1);
  EXPECT_EQ(all->remaining, 0);
  EXPECT_EQ(raw_->llen("queues:orders"), 1);
  EXPECT_EQ(raw_->llen("queues:orders:notify"), 1);
}

TEST_F(RedisLaravel, RecoverMovesOnlyOldEnoughReservations) {
  auto t = open(laravel_opts());  // retry_after 90 s
  ASSERT_TRUE(t->publish("orders", padded_envelope_text(1)));
  ASSERT_TRUE(t->publish("orders", padded_envelope_text(2)));
  auto first = t->receive("orders", 0ms);
  ASSERT_TRUE(first && first->has_value());
  const auto member = zset("queues:orders:reserved").at(0).first;
  auto second = t->receive("orders", 0ms);
  ASSERT_TRUE(second && second->has_value());
  // Reserved a minute ago (its deadline score = reserved at + 90: not expired yet).
  raw_->integer({"ZADD", "queues:orders:reserved", std::to_string(now_s() - 60 + 90), member});
  auto r = t->recover("orders", 30s);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->moved, 1);
  EXPECT_EQ(r->remaining, 1);
  EXPECT_EQ(raw_->list("queues:orders"), std::vector<std::string>{member});
}

TEST_F(RedisLaravel, PoisonJobsAreReservedRawAndDeliveredAsTheirBytes) {
  auto t = open(laravel_opts());
  const std::vector<std::string> poison = {
      "not json",
      "[1,2]",
      R"({"attempts":"x"})",
      std::string("\xff\xfe binary", 9),
      std::string(2000, '[') + std::string(2000, ']'),  // deeper than cjson decodes
  };
  for (const auto& p : poison) raw_->integer({"RPUSH", "queues:poison", p});
  for (const auto& p : poison) {
    auto got = t->receive("poison", 0ms);
    ASSERT_TRUE(got) << got.error().message;
    ASSERT_TRUE(got->has_value());
    EXPECT_EQ((*got)->body, p);
    auto reserved = zset("queues:poison:reserved");
    ASSERT_EQ(reserved.size(), 1u);
    EXPECT_EQ(reserved[0].first, p);  // member == job: cjson could not bump it
    ASSERT_TRUE(t->ack(**got));
    ASSERT_TRUE(t->flush());
  }
  EXPECT_TRUE(keys().empty());
}

TEST_F(RedisLaravel, ABlockedReceiveWakesOnAPublish) {
  auto consumer = open(laravel_opts());
  std::thread producer([&] {
    std::this_thread::sleep_for(300ms);
    auto p = open(laravel_opts());
    ASSERT_TRUE(p->publish("orders", padded_envelope_text(5)));
  });
  const auto start = std::chrono::steady_clock::now();
  auto got = consumer->receive("orders", 10s);
  const auto waited = std::chrono::steady_clock::now() - start;
  producer.join();
  ASSERT_TRUE(got) << got.error().message;
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ(envelope_n((*got)->body), 5);
  EXPECT_LT(waited, 5s);
}

TEST_F(RedisLaravel, PeekListsTheReadyListOfThePrefixedKey) {
  auto o = laravel_opts();
  o.prefix = "app_database_queues:";
  auto t = open(o);
  const std::string second = padded_envelope_text(2);
  ASSERT_TRUE(t->publish("orders", padded_envelope_text(1)));
  ASSERT_TRUE(t->publish("orders", second));
  auto peeked = t->peek("orders", 1, 10);
  ASSERT_TRUE(peeked) << peeked.error().message;
  ASSERT_EQ(peeked->size(), 1u);
  EXPECT_EQ((*peeked)[0].body, second);
  EXPECT_EQ(raw_->llen("app_database_queues:orders"), 2);
}

// The App on laravel=1: a failing handler runs max_attempts times (the reservation's +1 is
// in the member, never in the body the handler sees), the retry copies are pushed with a
// notify token, and the dead-letter copy lands on `queues:<queue>.dlq`.
TEST_F(RedisLaravel, AppRetriesOncePerDeliveryAndDeadLettersToThePrefixedQueue) {
  bqr::register_transport();
  babelqueue::app_options ao;
  ao.queue = "orders";
  ao.poll_timeout = 200ms;
  ao.dead_letter = true;
  ao.max_attempts = 3;
  babelqueue::app app(server_->url() + "?laravel=1", ao);
  std::vector<std::int64_t> seen;
  app.handle("urn:babel:test:item", [&](babelqueue::message& m) {
    seen.push_back(m.attempts());
    throw std::runtime_error("boom");
  });
  ASSERT_TRUE(app.publish("urn:babel:test:item", babelqueue::json{{"n", 1}}));
  EXPECT_EQ(raw_->llen("queues:orders"), 1);
  auto n = app.drain("orders");
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(seen, (std::vector<std::int64_t>{0, 1, 2}));
  auto dlq = raw_->list("queues:orders.dlq");
  ASSERT_EQ(dlq.size(), 1u);
  auto dead = babelqueue::decode(dlq[0]);
  ASSERT_TRUE(dead) << dlq[0];
  EXPECT_EQ(dead->attempts(), 3);
  EXPECT_EQ(raw_->llen("queues:orders.dlq:notify"), 1);
  EXPECT_EQ(raw_->llen("queues:orders"), 0);
  EXPECT_TRUE(zset("queues:orders:reserved").empty());
  EXPECT_EQ(raw_->llen("orders"), 0);  // no owned-layout key was touched
}

TEST_F(RedisLaravel, AOneMebibyteJobRoundTripsAndItsReservedMemberIsBumped) {
  auto t = open(laravel_opts());
  const std::string job = padded_envelope_text(11, 1u << 20);
  ASSERT_TRUE(t->publish("big", job));
  auto got = t->receive("big", 0ms);
  ASSERT_TRUE(got) << got.error().message;
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->body, job);
  auto reserved = zset("queues:big:reserved");
  ASSERT_EQ(reserved.size(), 1u);
  EXPECT_EQ(babelqueue::decode(reserved[0].first)->attempts(), 1);
  ASSERT_TRUE(t->ack(**got));
  ASSERT_TRUE(t->flush());
  EXPECT_TRUE(keys().empty());
}

// Its own suite: it kills the suite's server.
class RedisLaravelOutage : public RedisLaravel {};

TEST_F(RedisLaravelOutage, CallsDuringAnOutageFailTypedWithinTheirTimeout) {
  auto o = laravel_opts();
  o.command_timeout = 300ms;
  auto t = open(o);
  ASSERT_TRUE(t->publish("orders", padded_envelope_text(1)));
  ASSERT_TRUE(t->publish("orders", padded_envelope_text(2)));
  auto first = t->receive("orders", 0ms);
  ASSERT_TRUE(first && first->has_value());
  auto held = t->receive("orders", 0ms);
  ASSERT_TRUE(held && held->has_value());
  ASSERT_TRUE(t->ack(**first));  // deferred: nothing carries it before the outage
  server_->kill_now();

  auto start = std::chrono::steady_clock::now();
  auto r = t->receive("orders", 500ms);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.code(), babelqueue::transport_errc::unavailable);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  auto rel = t->release(**held, 1s);
  ASSERT_FALSE(rel);
  EXPECT_EQ(rel.code(), babelqueue::transport_errc::unavailable);
  auto p = t->publish("orders", padded_envelope_text(3));
  ASSERT_FALSE(p);
  EXPECT_EQ(p.code(), babelqueue::transport_errc::unavailable);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_FALSE(t->close(std::chrono::steady_clock::now() + 200ms));  // the ack stays deferred
}
