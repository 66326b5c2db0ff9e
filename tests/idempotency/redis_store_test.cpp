// The idempotency store on Redis (idempotency/redis_store.hpp) against a private real
// redis-server: the contract, the Go layout both ways (a hand-written `SET bq:idemp:<id> 1`
// reads as seen; ours is an EXISTS-able "1"), TTLs (PTTL), claim keys and their owner
// tokens, two stores racing for one claim, release by the wrong owner, a crashed claim
// expiring, NOSCRIPT, one round trip per operation and per wrap step, the server killed
// (typed error) and back (recovery), URL/db/prefix handling and both wraps on the runtime.
#include "idempotency/store_contract.hpp"
#include "redis/redis_fixture.hpp"
#include "redis/tls_certificates.hpp"
#include "runtime/test_util.hpp"

#include <babelqueue/idempotency/error.hpp>
#include <babelqueue/idempotency/redis_store.hpp>
#include <babelqueue/idempotency/wrap.hpp>
#include <babelqueue/memory/memory_transport.hpp>
#include <babelqueue/runtime/app.hpp>
#include <babelqueue/uuid.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace babelqueue;
using namespace std::chrono_literals;

std::string with_id(const std::string& id) {
  return R"({"job":"urn:a:b:c","trace_id":"t-1","data":{},"meta":{"schema_version":1,"id":")" + id +
         R"("},"attempts":0})";
}

class IdempotencyRedis : public bqtest::RedisTest {
 protected:
  std::shared_ptr<idempotency::redis_store> store(idempotency::redis_store_options o = {}) {
    auto s = idempotency::redis_store::open(opts(), o);
    EXPECT_TRUE(s) << s.error().message;
    return s ? std::shared_ptr<idempotency::redis_store>(std::move(*s)) : nullptr;
  }
};

TEST_F(IdempotencyRedis, HonoursTheClaimingStoreContract) {
  auto s = store();
  bqtest::check_claiming_store_contract(*s);
}

TEST_F(IdempotencyRedis, GoMarksReadAsSeenAndOursAreGoMarks) {
  auto s = store();
  raw_->str({"SET", "bq:idemp:go-1", "1"});  // what a Go worker's Remember writes
  EXPECT_TRUE(s->seen("go-1").value());
  raw_->str({"SET", "bq:idemp:other-value", "2"});  // existence is the mark, any value
  EXPECT_TRUE(s->seen("other-value").value());
  EXPECT_FALSE(s->claim("go-1", 1h).value());  // a Go mark is committed: not claimable

  ASSERT_TRUE(s->remember("cpp-1"));
  EXPECT_EQ(raw_->integer({"EXISTS", "bq:idemp:cpp-1"}), 1);  // what Go's Seen asks
  EXPECT_EQ(raw_->str({"GET", "bq:idemp:cpp-1"}), "1");
  EXPECT_EQ(raw_->integer({"PTTL", "bq:idemp:cpp-1"}), -1);  // ttl 0: never expires
  ASSERT_TRUE(s->forget("cpp-1"));
  EXPECT_EQ(raw_->integer({"EXISTS", "bq:idemp:cpp-1"}), 0);
  // Go's Claim is SET NX on the same key: ours, once remembered, makes it lose.
  ASSERT_TRUE(s->remember("cpp-2"));
  EXPECT_EQ(raw_->str({"SET", "bq:idemp:cpp-2", "1", "NX"}), "");  // nil: not set
}

TEST_F(IdempotencyRedis, RememberWritesTheTtlAndRefreshesAnExistingKey) {
  auto with_ttl = store({.ttl = 60s});
  ASSERT_TRUE(with_ttl->remember("t-1"));
  const auto pttl = raw_->integer({"PTTL", "bq:idemp:t-1"});
  EXPECT_GT(pttl, 55'000);
  EXPECT_LE(pttl, 60'000);
  raw_->str({"PEXPIRE", "bq:idemp:t-1", "5000"});
  ASSERT_TRUE(with_ttl->remember("t-1"));  // the key exists: SET, not NX, refreshes it
  EXPECT_GT(raw_->integer({"PTTL", "bq:idemp:t-1"}), 55'000);
  auto forever = store();
  ASSERT_TRUE(forever->remember("t-1"));  // and a store without TTL makes it permanent
  EXPECT_EQ(raw_->integer({"PTTL", "bq:idemp:t-1"}), -1);

  auto short_lived = store({.ttl = 100ms});
  ASSERT_TRUE(short_lived->remember("t-2"));
  EXPECT_TRUE(short_lived->seen("t-2").value());
  std::this_thread::sleep_for(200ms);
  EXPECT_FALSE(short_lived->seen("t-2").value());
  EXPECT_TRUE(short_lived->claim("t-2", 1h).value());  // expired: may run again
}

TEST_F(IdempotencyRedis, AClaimIsATokenKeyWithTheClaimTtlThatRememberDeletes) {
  auto s = store();
  ASSERT_TRUE(s->claim("k-1", 30s).value());
  EXPECT_TRUE(babelqueue::is_uuid(raw_->str({"GET", "bq:idemp-claim:k-1"})));
  const auto pttl = raw_->integer({"PTTL", "bq:idemp-claim:k-1"});
  EXPECT_GT(pttl, 25'000);
  EXPECT_LE(pttl, 30'000);
  EXPECT_EQ(raw_->integer({"EXISTS", "bq:idemp:k-1"}), 0);  // in flight is not committed
  ASSERT_TRUE(s->remember("k-1"));
  EXPECT_EQ(raw_->integer({"EXISTS", "bq:idemp-claim:k-1"}), 0);
  EXPECT_EQ(raw_->integer({"EXISTS", "bq:idemp:k-1"}), 1);
}

TEST_F(IdempotencyRedis, TwoStoresClaimingAtOnceHaveExactlyOneWinnerPerId) {
  auto a = store();
  auto b = store();
  constexpr int ids = 100;
  std::vector<std::atomic<int>> wins(ids);
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      auto& s = t % 2 == 0 ? *a : *b;
      for (int i = 0; i < ids; ++i) {
        auto won = s.claim("race-" + std::to_string(i), 1h);
        if (!won) {
          ++errors;
        } else if (*won) {
          ++wins[i];
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  for (int i = 0; i < ids; ++i) EXPECT_EQ(wins[i].load(), 1) << i;
}

TEST_F(IdempotencyRedis, AReleaseByTheWrongOwnerLeavesTheClaim) {
  auto holder = store();
  auto other = store();
  ASSERT_TRUE(holder->claim("w-1", 1h).value());
  ASSERT_TRUE(other->release("w-1"));  // never claimed by `other`: nothing is sent
  EXPECT_EQ(raw_->integer({"EXISTS", "bq:idemp-claim:w-1"}), 1);
  // A crashed holder's claim expired and was taken over: its late release is a no-op.
  ASSERT_TRUE(holder->claim("w-2", 40ms).value());
  std::this_thread::sleep_for(100ms);
  ASSERT_TRUE(other->claim("w-2", 1h).value());
  const auto new_token = raw_->str({"GET", "bq:idemp-claim:w-2"});
  ASSERT_TRUE(holder->release("w-2"));  // compare-and-delete: the token is not its own
  EXPECT_EQ(raw_->str({"GET", "bq:idemp-claim:w-2"}), new_token);
  EXPECT_FALSE(holder->claim("w-2", 1h).value());
  ASSERT_TRUE(other->release("w-2"));
  EXPECT_EQ(raw_->integer({"EXISTS", "bq:idemp-claim:w-2"}), 0);
}

TEST_F(IdempotencyRedis, ACrashedWorkersClaimExpires) {
  {
    auto crashed = store();
    ASSERT_TRUE(crashed->claim("c-1", 150ms).value());
  }  // the worker is gone without release
  auto survivor = store();
  EXPECT_FALSE(survivor->claim("c-1", 1h).value());
  std::this_thread::sleep_for(250ms);
  EXPECT_TRUE(survivor->claim("c-1", 1h).value());
}

TEST_F(IdempotencyRedis, EveryOperationIsOneRoundTrip) {
  auto s = store({.connections = 1});
  auto trips = [&] { return s->stats().round_trips; };
  auto one = [&](auto&& call, const char* what) {
    const auto before = trips();
    call();
    EXPECT_EQ(trips() - before, 1) << what;
  };
  one([&] { EXPECT_FALSE(s->seen("r-1").value()); }, "seen");
  one([&] { EXPECT_TRUE(s->claim("r-1", 1h).value()); }, "claim won");
  one([&] { EXPECT_FALSE(s->claim("r-1", 1h).value()); }, "claim lost");
  one([&] { ASSERT_TRUE(s->release("r-1")); }, "release");
  one([&] { ASSERT_TRUE(s->remember("r-1")); }, "remember (SET + DEL pipelined)");
  one([&] { EXPECT_TRUE(s->seen("r-1").value()); }, "seen");
  one([&] { ASSERT_TRUE(s->forget("r-1")); }, "forget");

  // The server lost its scripts (SCRIPT FLUSH, a restart): NOSCRIPT → reload → resend.
  raw_->str({"SCRIPT", "FLUSH"});
  EXPECT_TRUE(s->claim("r-2", 1h).value());
  EXPECT_EQ(raw_->integer({"EXISTS", "bq:idemp-claim:r-2"}), 1);
  one([&] { EXPECT_FALSE(s->claim("r-2", 1h).value()); }, "claim after the reload");
}

TEST_F(IdempotencyRedis, TheWrapCostsTwoRoundTripsPerMessageAndTheClaimingWrapThree) {
  memory::register_transport();
  auto s = store({.connections = 1});
  const std::string broker = bqtest::unique_broker("idem-redis-rt");
  auto o = bqtest::fast_options();
  app a("memory://" + broker, o);
  int runs = 0;
  a.handle("urn:a:b:c", idempotency::wrap(s, [&](message&) { ++runs; }));
  constexpr int n = 50;
  for (int i = 0; i < n; ++i) bqtest::put_raw(broker, "default", with_id("p-" + std::to_string(i)));
  auto before = s->stats().round_trips;
  EXPECT_EQ(a.drain().value(), static_cast<std::size_t>(n));
  EXPECT_EQ(s->stats().round_trips - before, 2 * n);  // seen + remember: 1 more than SET NX
  for (int i = 0; i < n; ++i) bqtest::put_raw(broker, "default", with_id("p-" + std::to_string(i)));
  before = s->stats().round_trips;
  EXPECT_EQ(a.drain().value(), static_cast<std::size_t>(n));
  EXPECT_EQ(s->stats().round_trips - before, n);  // duplicates: seen only
  EXPECT_EQ(runs, n);

  app c("memory://" + broker, o);
  c.handle("urn:a:b:c", idempotency::wrap_claiming(s, [&](message&) { ++runs; }));
  for (int i = 0; i < n; ++i) bqtest::put_raw(broker, "default", with_id("q-" + std::to_string(i)));
  before = s->stats().round_trips;
  EXPECT_EQ(c.drain().value(), static_cast<std::size_t>(n));
  EXPECT_EQ(s->stats().round_trips - before, 3 * n);  // seen + claim + remember
  EXPECT_EQ(runs, 2 * n);
}

TEST_F(IdempotencyRedis, TheClaimingWrapOnTwoWorkersWithTwoStoresRunsEachEffectOnce) {
  memory::register_transport();
  auto one = store();
  auto two = store();
  const std::string broker = bqtest::unique_broker("idem-redis-claim");
  auto o = bqtest::fast_options();
  o.max_attempts = 1000;  // parked copies come round until the holder commits
  o.workers = 2;
  std::mutex mutex;
  std::map<std::string, int> effects;
  auto handler = [&](message& m) {
    std::this_thread::sleep_for(1ms);
    std::lock_guard lock(mutex);
    ++effects[std::string(m.id())];
  };
  app a("memory://" + broker, o);
  app b("memory://" + broker, o);
  a.handle("urn:a:b:c", idempotency::wrap_claiming(one, handler));
  b.handle("urn:a:b:c", idempotency::wrap_claiming(two, handler));
  constexpr int ids = 30;
  for (int copy = 0; copy < 3; ++copy) {
    for (int i = 0; i < ids; ++i)
      bqtest::put_raw(broker, "default", with_id("r-" + std::to_string(i)));
  }
  std::thread stopper([&] {
    const auto give_up = std::chrono::steady_clock::now() + 60s;
    auto committed = [&] {
      int n = 0;
      for (int i = 0; i < ids; ++i) n += one->seen("r-" + std::to_string(i)).value_or(false);
      return n;
    };
    while (committed() < ids && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(5ms);
    }
    std::this_thread::sleep_for(300ms);
    a.stop();
    b.stop();
  });
  std::thread second([&] { EXPECT_TRUE(b.consume()); });
  ASSERT_TRUE(a.consume());
  second.join();
  stopper.join();
  ASSERT_EQ(effects.size(), static_cast<std::size_t>(ids));
  for (const auto& [id, n] : effects) EXPECT_EQ(n, 1) << id;
  EXPECT_TRUE(bqtest::take_all(broker, "default.dlq").empty());
}

TEST_F(IdempotencyRedis, AKilledServerIsATypedErrorThenTheStoreRecovers) {
  auto o = opts();
  o.command_timeout = 300ms;
  auto s = idempotency::redis_store::open(o).value();
  ASSERT_TRUE(s->remember("before"));
  server_->kill_now();
  for (auto r : {s->seen("x"), s->claim("x", 1h)}) {
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, idempotency::errc::unavailable) << r.error().message;
    EXPECT_EQ(r.error().code, condition::unavailable);
  }
  auto marked = s->remember("during");
  ASSERT_FALSE(marked);
  EXPECT_EQ(marked.error().code, idempotency::errc::unavailable);
  ASSERT_TRUE(server_->restart());  // a fresh, empty server on the same port
  raw_ = std::make_unique<bqtest::raw_client>(server_->port());
  bool back = false;
  for (int i = 0; i < 50 && !back; ++i) {
    back = s->remember("after").has_value();
    if (!back) std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(back);
  EXPECT_TRUE(s->seen("after").value());
  EXPECT_TRUE(s->claim("y", 1h).value());  // scripts reloaded on the new connection
  EXPECT_GE(s->stats().reconnects, 1);
}

TEST_F(IdempotencyRedis, OpensFromAUrlWithItsDatabase) {
  const std::string url = "redis://127.0.0.1:" + std::to_string(server_->port()) + "/3";
  auto s = idempotency::redis_store::open(url).value();
  ASSERT_TRUE(s->remember("in-db-3"));
  EXPECT_EQ(raw_->integer({"EXISTS", "bq:idemp:in-db-3"}), 0);  // db 0
  raw_->str({"SELECT", "3"});
  EXPECT_EQ(raw_->integer({"EXISTS", "bq:idemp:in-db-3"}), 1);
}

TEST_F(IdempotencyRedis, BadUrlsPrefixesAndServersAreTypedErrors) {
  for (const std::string url : {"http://127.0.0.1:6379", "redis://127.0.0.1:1/x", "not a url"}) {
    auto r = idempotency::redis_store::open(url);
    ASSERT_FALSE(r) << url;
    EXPECT_EQ(r.error().code, idempotency::errc::invalid_argument) << url << r.error().message;
  }
  auto refused = idempotency::redis_store::open(
      "redis://:wrong@127.0.0.1:" + std::to_string(server_->port()));  // no password set
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, idempotency::errc::invalid_argument) << refused.error().message;
  auto nobody = idempotency::redis_store::open(
      "redis://127.0.0.1:" + std::to_string(bqtest::free_port()) + "?connect_timeout=200ms");
  ASSERT_FALSE(nobody);
  EXPECT_EQ(nobody.error().code, idempotency::errc::unavailable) << nobody.error().message;

  using opts_t = idempotency::redis_store_options;
  for (const opts_t& bad : std::vector<opts_t>{{.prefix = ""},
                                               {.prefix = "has space:"},
                                               {.prefix = "nl\n"},
                                               {.prefix = std::string(257, 'p')},
                                               {.prefix = "bq:", .claim_prefix = "bq:claim:"},
                                               {.prefix = "same:", .claim_prefix = "same:"},
                                               {.connections = 0}}) {
    auto r = idempotency::redis_store::open(opts(), bad);
    ASSERT_FALSE(r) << bad.prefix;
    EXPECT_EQ(r.error().code, idempotency::errc::invalid_argument);
  }
  auto php = store({.prefix = "bq:idem:", .claim_prefix = "bq:idem-claim:"});  // PHP's prefix
  ASSERT_TRUE(php->remember("p-1"));
  EXPECT_EQ(raw_->integer({"EXISTS", "bq:idem:p-1"}), 1);
}

TEST_F(IdempotencyRedis, AWrongTypeKeyIsABackendError) {
  auto s = store();
  ASSERT_TRUE(s->claim("wt", 1h).value());
  raw_->integer({"DEL", "bq:idemp-claim:wt"});
  raw_->integer({"RPUSH", "bq:idemp-claim:wt", "x"});  // someone else's list under our key
  auto r = s->release("wt");                           // GET on a list: WRONGTYPE
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, idempotency::errc::backend) << r.error().message;
  ASSERT_TRUE(r.error().native);
  EXPECT_EQ(r.error().native->source, "redis");
  EXPECT_NE(r.error().message.find("WRONGTYPE"), std::string::npos) << r.error().message;
}

// rediss://: the store runs on the transport's TLS code (a server serving TLS, its CA).
class IdempotencyRedisTls : public bqtest::RedisTest {
 protected:
  static void SetUpTestSuite() {
    if (bqtest::cert_dir().empty() || !bqtest::make_certificates(bqtest::cert_dir(), why_)) return;
    bqtest::redis_server::config c;
    c.tls_dir = bqtest::cert_dir();
    start(c);
  }
  static void TearDownTestSuite() {
    server_.reset();
    std::error_code ec;
    std::filesystem::remove_all(bqtest::cert_dir(), ec);
  }
};

TEST_F(IdempotencyRedisTls, WorksOverRedissAndRefusesAnUntrustedServer) {
  const std::string base = "rediss://127.0.0.1:" + std::to_string(server_->tls_port()) +
                           "?connect_timeout=500ms&tls_ca_file=" + bqtest::cert_dir();
  auto s = idempotency::redis_store::open(base + "/ca.crt");
  ASSERT_TRUE(s) << s.error().message;
  ASSERT_TRUE((*s)->remember("tls-1"));
  EXPECT_TRUE((*s)->claim("tls-2", 1h).value());
  EXPECT_EQ(raw_->integer({"EXISTS", "bq:idemp:tls-1"}), 1);  // the same server, plain port
  EXPECT_EQ(raw_->integer({"EXISTS", "bq:idemp-claim:tls-2"}), 1);
  auto untrusted = idempotency::redis_store::open(base + "/other-ca.crt");
  ASSERT_FALSE(untrusted);
  EXPECT_EQ(untrusted.error().code, idempotency::errc::unavailable) << untrusted.error().message;
}

}  // namespace
