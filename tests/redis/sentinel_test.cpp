// redis+sentinel://: discovery through real Sentinels, typed errors when the name is wrong or
// no Sentinel answers, a primary demoted under a live connection (READONLY), and a real
// failover (SIGKILL of the primary) in the middle of publishing and consuming, with the
// acknowledged-but-lost and duplicated messages counted — without and with wait_replicas.
// Each group test starts its own primary + replica(s) + 3 Sentinels (sentinel_group.hpp).
#include "redis/sentinel_group.hpp"
#include "redis/tls_certificates.hpp"

#include <babelqueue/runtime/url.hpp>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

using namespace std::chrono_literals;
using babelqueue::transport_errc;
using bqtest::envelope_n;
using bqtest::padded_envelope_text;
using bqtest::sentinel_group;
using steady = std::chrono::steady_clock;

namespace {

// Short timeouts and backoff so a failover is followed quickly; command_timeout covers it.
const std::string k_fast =
    "?connect_timeout=500ms&command_timeout=10s"
    "&reconnect_backoff_min=20ms&reconnect_backoff_max=200ms";

babelqueue::result<babelqueue::redis::options> parse(const std::string& url) {
  auto u = babelqueue::broker_url::parse(url);
  if (!u) return babelqueue::fail(u.error());
  return babelqueue::redis::options_from_url(*u);
}

std::unique_ptr<babelqueue::redis::redis_transport> open_url(const std::string& url) {
  auto o = parse(url);
  EXPECT_TRUE(o) << o.error().message;
  if (!o) return nullptr;
  auto t = babelqueue::redis::redis_transport::open(std::move(*o));
  EXPECT_TRUE(t) << t.error().message;
  return t ? std::move(*t) : nullptr;
}

std::string at(int port) { return "127.0.0.1:" + std::to_string(port); }

long long ms_between(steady::time_point a, steady::time_point b) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(b - a).count();
}

}  // namespace

// -- options (no server) ------------------------------------------------------------------

TEST(SentinelOptions, UrlsCarrySentinelsMasterDbAndCredentials) {
  auto o = parse(
      "redis+sentinel://app:datapw@10.0.0.1:26380,10.0.0.2,[::1]:26381/mymaster/3"
      "?sentinel_username=sen&sentinel_password=senpw&wait_replicas=1&wait_timeout=250ms");
  ASSERT_TRUE(o) << o.error().message;
  ASSERT_EQ(o->sentinels.size(), 3u);
  EXPECT_EQ(o->sentinels[0].host, "10.0.0.1");
  EXPECT_EQ(o->sentinels[0].port, 26380);
  EXPECT_EQ(o->sentinels[1].host, "10.0.0.2");
  EXPECT_EQ(o->sentinels[1].port, 26379);  // the Sentinel default
  EXPECT_EQ(o->sentinels[2].host, "::1");
  EXPECT_EQ(o->master_name, "mymaster");
  EXPECT_EQ(o->db, 3);
  EXPECT_EQ(o->username, "app");  // the userinfo is the data nodes' AUTH
  EXPECT_EQ(o->password, "datapw");
  EXPECT_EQ(o->sentinel_username, "sen");
  EXPECT_EQ(o->sentinel_password, "senpw");
  EXPECT_EQ(o->wait_replicas, 1);
  EXPECT_EQ(o->wait_timeout, 250ms);
  EXPECT_FALSE(o->tls);

  auto tls = parse("rediss+sentinel://s1/m?tls_verify=false");
  ASSERT_TRUE(tls) << tls.error().message;
  EXPECT_TRUE(tls->tls);
  EXPECT_EQ(tls->db, 0);

  // wait_* are plain-redis options too.
  auto plain = parse("redis://127.0.0.1/1?wait_replicas=2&wait_timeout=1s");
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_EQ(plain->wait_replicas, 2);
  EXPECT_TRUE(plain->sentinels.empty());
}

TEST(SentinelOptions, BadUrlsAreInvalidArguments) {
  for (const char* url : {
           "redis+sentinel://s1",                     // no master name
           "redis+sentinel://s1/",                    // empty master name
           "redis+sentinel://s1/m/x",                 // db not a number
           "redis+sentinel://s1/m?master=m",          // unknown key
           "redis://127.0.0.1?sentinel_password=x",   // Sentinel key without Sentinels
           "redis+sentinel://s1/m?wait_replicas=65",  // out of range
           "redis+sentinel://s1/m?wait_replicas=1&wait_timeout=5s",  // not below command_timeout
           "redis+sentinel://s1/m?tls_verify=false",                 // tls_* without TLS
       }) {
    auto o = parse(url);
    ASSERT_FALSE(o) << url;
    EXPECT_EQ(o.code(), babelqueue::condition::invalid_argument)
        << url << ": " << o.error().message;
  }
  // Options built in code are checked alike.
  babelqueue::redis::options o;
  o.master_name = "m";
  auto t = babelqueue::redis::redis_transport::open(o);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.code(), transport_errc::invalid_argument) << t.error().message;
}

TEST(SentinelOptions, SchemesAreRegistered) {
  babelqueue::redis::register_transport();
  // Nothing listens on the ports: the factory parses, then fails to reach a Sentinel.
  int a = bqtest::free_port(), b = bqtest::free_port();
  auto t =
      babelqueue::open_transport("redis+sentinel://127.0.0.1:" + std::to_string(a) +
                                 ",127.0.0.1:" + std::to_string(b) + "/m?connect_timeout=200ms");
  ASSERT_FALSE(t);
  EXPECT_EQ(t.code(), transport_errc::unavailable) << t.error().message;
  // A host list stays refused on the plain scheme.
  auto plain = babelqueue::open_transport("redis://127.0.0.1:1,127.0.0.1:2");
  ASSERT_FALSE(plain);
  EXPECT_EQ(plain.code(), transport_errc::invalid_argument);
}

TEST(SentinelOptions, NoSentinelAnsweringIsUnavailableNamingThemWithinTheConnectTimeout) {
  int a = bqtest::free_port(), b = bqtest::free_port();
  auto o = parse("redis+sentinel://127.0.0.1:" + std::to_string(a) +
                 ",127.0.0.1:" + std::to_string(b) + "/orders-primary?connect_timeout=300ms");
  ASSERT_TRUE(o) << o.error().message;
  auto t0 = steady::now();
  auto t = babelqueue::redis::redis_transport::open(*o);
  auto took = ms_between(t0, steady::now());
  ASSERT_FALSE(t);
  EXPECT_EQ(t.code(), transport_errc::unavailable);
  const auto& msg = t.error().message;
  EXPECT_NE(msg.find("orders-primary"), std::string::npos) << msg;
  EXPECT_NE(msg.find(at(a)), std::string::npos) << msg;
  EXPECT_NE(msg.find(at(b)), std::string::npos) << msg;
  EXPECT_LT(took, 2000) << msg;
  std::printf("all Sentinels down: open() failed after %lld ms: %s\n", took, msg.c_str());
}

// -- a running group ----------------------------------------------------------------------

class SentinelGroupTest : public ::testing::Test {
 protected:
  void start_group(const sentinel_group::config& cfg = {}) {
    std::string why;
    auto t0 = steady::now();
    group_ = sentinel_group::start(cfg, why);
    if (!group_) {
      if (bqtest::under_ci()) FAIL() << "CI=true and no Sentinel group: " << why;
      GTEST_SKIP() << "no Sentinel group: " << why;
    }
    std::printf("Sentinel group (%d replica(s)) ready in %lld ms\n", cfg.replicas,
                ms_between(t0, steady::now()));
  }
  void SetUp() override { start_group(); }

  std::unique_ptr<sentinel_group> group_;
};

// One group shared by the tests that do not change its topology (each uses its own queue).
class SentinelShared : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { group_ = start_shared({}); }
  static void TearDownTestSuite() { group_.reset(); }
  static std::unique_ptr<sentinel_group> start_shared(const sentinel_group::config& cfg) {
    auto t0 = steady::now();
    auto g = sentinel_group::start(cfg, why_);
    if (g) std::printf("shared Sentinel group ready in %lld ms\n", ms_between(t0, steady::now()));
    return g;
  }
  void SetUp() override {
    if (!group_) {
      if (bqtest::under_ci()) FAIL() << "CI=true and no Sentinel group: " << why_;
      GTEST_SKIP() << "no Sentinel group: " << why_;
    }
  }
  static inline std::unique_ptr<sentinel_group> group_;
  static inline std::string why_;
};

TEST_F(SentinelShared, DiscoversThePrimaryThenPublishesAndConsumes) {
  auto t = open_url(group_->url(k_fast));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->scheme(), "redis+sentinel");
  EXPECT_EQ(t->endpoint(), at(group_->node(0).port()));
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(t->publish("orders", padded_envelope_text(i)));
  for (int i = 0; i < 10; ++i) {
    auto got = t->receive("orders", 1s);
    ASSERT_TRUE(got) << got.error().message;
    ASSERT_TRUE(got->has_value());
    EXPECT_EQ(envelope_n((*got)->body), i);
    ASSERT_TRUE(t->ack(**got));
  }
  ASSERT_TRUE(t->flush());
  // The writes went to the primary and replicated; the replica took none of its own.
  bqtest::raw_client primary(group_->node(0).port());
  EXPECT_EQ(primary.llen("orders"), 0);
  EXPECT_EQ(sentinel_group::role(group_->node(1).port()), "slave");

  // Through the URL factory too.
  babelqueue::redis::register_transport();
  auto f = babelqueue::open_transport(group_->url(k_fast));
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ((*f)->scheme(), "redis+sentinel");
}

TEST_F(SentinelShared, AnUnknownMasterNameIsAnInvalidArgumentAtOnce) {
  std::string url = group_->url();
  url = url.substr(0, url.rfind('/')) + "/no-such-master" + k_fast;
  auto o = parse(url);
  ASSERT_TRUE(o) << o.error().message;
  auto t0 = steady::now();
  auto t = babelqueue::redis::redis_transport::open(*o);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.code(), transport_errc::invalid_argument) << t.error().message;
  EXPECT_NE(t.error().message.find("no-such-master"), std::string::npos) << t.error().message;
  EXPECT_LT(ms_between(t0, steady::now()), 1000);
}

TEST_F(SentinelGroupTest, OneSentinelDownIsSkipped) {
  group_->sentinel(0).kill_now();
  for (int i = 0; i < 3; ++i) {  // whichever Sentinel is asked first
    auto t = open_url(group_->url(k_fast));
    ASSERT_TRUE(t);
    EXPECT_EQ(t->endpoint(), at(group_->node(0).port()));
    ASSERT_TRUE(t->publish("q", padded_envelope_text(i)));
  }
}

// A hung Sentinel (accepts connections, never answers) costs its share of the time, not the
// whole call: the next Sentinel is asked within the same open().
TEST_F(SentinelGroupTest, AHungSentinelDoesNotUseUpTheCall) {
  group_->sentinel(0).pause();
  auto o = parse(group_->url("?connect_timeout=900ms"));
  ASSERT_TRUE(o);
  auto t0 = steady::now();
  auto t = babelqueue::redis::redis_transport::open(*o);
  auto took = ms_between(t0, steady::now());
  group_->sentinel(0).resume();
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ((*t)->endpoint(), at(group_->node(0).port()));
  EXPECT_GE(took, 250);  // the hung one had its ~300 ms
  EXPECT_LT(took, 900);
  std::printf("open() past a hung first Sentinel: %lld ms\n", took);
}

// The primary is demoted while the transports stay connected to it: the next publish gets
// READONLY and a consumer blocked in BLMOVE gets UNBLOCKED (and the server closes its
// connection); both make the transport ask the Sentinels again and go to the new primary,
// within the call. The roles are switched and the
// Sentinels re-pointed by hand (REPLICAOF, SENTINEL REMOVE + MONITOR) so that no Sentinel
// failover — which would cut the connections instead — gets in the way.
TEST_F(SentinelGroupTest, ADemotedPrimaryAnsweringReadonlyIsLeftForTheNewOne) {
  const int old_port = group_->node(0).port();
  const int new_port = group_->node(1).port();
  auto t = open_url(group_->url(k_fast));
  ASSERT_TRUE(t);
  ASSERT_TRUE(t->publish("q", padded_envelope_text(0)));
  ASSERT_EQ(t->endpoint(), at(old_port));

  auto consumer = open_url(group_->url(k_fast));
  ASSERT_TRUE(consumer);
  std::optional<long> consumed;
  std::string consumer_endpoint, consumer_error;
  std::thread blocked([&] {
    auto got = consumer->receive("wake", 15s);
    if (!got) {
      consumer_error = got.error().message;
    } else if (got->has_value()) {
      consumed = envelope_n((*got)->body);
      consumer_endpoint = consumer->endpoint();
      (void)consumer->ack(**got);
    }
  });
  ASSERT_TRUE(sentinel_group::poll([&] {
    return sentinel_group::info(old_port, "clients").find("blocked_clients:1") != std::string::npos;
  }));

  bqtest::raw_client promoted(new_port);
  // The replica has the first message before it is promoted (replication is asynchronous;
  // on a loaded machine it can lag by more than the steps above take).
  ASSERT_TRUE(sentinel_group::poll([&] { return promoted.llen("q") == 1; }));
  ASSERT_EQ(promoted.str({"REPLICAOF", "NO", "ONE"}), "OK");
  bqtest::raw_client demoted(old_port);
  ASSERT_EQ(demoted.str({"REPLICAOF", "127.0.0.1", std::to_string(new_port)}), "OK");
  const auto& master = group_->cfg().master;
  for (int i = 0; i < 3; ++i) {
    bqtest::raw_client s(group_->sentinel(i).port());
    ASSERT_EQ(s.str({"SENTINEL", "REMOVE", master}), "OK");
    ASSERT_EQ(s.str({"SENTINEL", "MONITOR", master, "127.0.0.1", std::to_string(new_port), "2"}),
              "OK");
  }

  ASSERT_TRUE(t->publish("q", padded_envelope_text(1)));
  EXPECT_EQ(t->endpoint(), at(new_port));
  EXPECT_GE(t->stats().reconnects, 1);
  // The old primary refused the write (READONLY); the new one has both messages.
  auto errors = sentinel_group::info(old_port, "errorstats");
  EXPECT_NE(errors.find("errorstat_READONLY:count="), std::string::npos) << errors;
  EXPECT_EQ(promoted.llen("q"), 2);

  // The consumer left the demoted node and waits on the new primary.
  ASSERT_TRUE(t->publish("wake", padded_envelope_text(7)));
  blocked.join();
  EXPECT_EQ(consumed, 7) << consumer_error;
  EXPECT_EQ(consumer_endpoint, at(new_port));
}

// The Sentinels name a replica as the primary (re-pointed by hand: a stale answer, as after a
// failover a Sentinel has not caught up with): the transport asks that node's ROLE, drops it,
// and keeps asking until the Sentinels name the real primary again — it never sends a write
// to the replica.
TEST_F(SentinelGroupTest, AReplicaNamedAsThePrimaryIsNeverWrittenTo) {
  const int primary_port = group_->node(0).port();
  const int replica_port = group_->node(1).port();
  const auto& master = group_->cfg().master;
  auto point_sentinels_at = [&](int port) {
    for (int i = 0; i < 3; ++i) {
      bqtest::raw_client s(group_->sentinel(i).port());
      ASSERT_EQ(s.str({"SENTINEL", "REMOVE", master}), "OK");
      ASSERT_EQ(s.str({"SENTINEL", "MONITOR", master, "127.0.0.1", std::to_string(port), "2"}),
                "OK");
    }
  };
  auto t = open_url(group_->url(k_fast));
  ASSERT_TRUE(t);
  ASSERT_TRUE(t->publish("q", padded_envelope_text(0)));

  point_sentinels_at(replica_port);
  bqtest::raw_client(primary_port).integer({"CLIENT", "KILL", "TYPE", "normal"});  // cut us off
  babelqueue::result<void> published;
  std::thread producer([&] { published = t->publish("q", padded_envelope_text(1)); });
  // The transport reached the replica and asked its role (ROLE shows in its commandstats).
  bool asked = sentinel_group::poll([&] {
    return sentinel_group::info(replica_port, "commandstats").find("cmdstat_role:") !=
           std::string::npos;
  });
  point_sentinels_at(primary_port);
  producer.join();
  EXPECT_TRUE(asked);
  ASSERT_TRUE(published) << published.error().message;
  EXPECT_EQ(t->endpoint(), at(primary_port));
  // No write ever reached the replica: it refused nothing (a write would be READONLY).
  auto errors = sentinel_group::info(replica_port, "errorstats");
  EXPECT_EQ(errors.find("errorstat_READONLY"), std::string::npos) << errors;
  EXPECT_EQ(bqtest::raw_client(primary_port).llen("q"), 2);
}

// With only the replica named, open() fails typed within connect_timeout and says why.
TEST_F(SentinelGroupTest, OnlyAReplicaNamedFailsOpenTypedNamingTheRole) {
  const auto& master = group_->cfg().master;
  for (int i = 0; i < 3; ++i) {
    bqtest::raw_client s(group_->sentinel(i).port());
    ASSERT_EQ(s.str({"SENTINEL", "REMOVE", master}), "OK");
    ASSERT_EQ(s.str({"SENTINEL", "MONITOR", master, "127.0.0.1",
                     std::to_string(group_->node(1).port()), "2"}),
              "OK");
  }
  auto o = parse(group_->url("?connect_timeout=500ms"));
  ASSERT_TRUE(o);
  auto t0 = steady::now();
  auto t = babelqueue::redis::redis_transport::open(*o);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.code(), transport_errc::unavailable);
  EXPECT_NE(t.error().message.find("role 'slave'"), std::string::npos) << t.error().message;
  EXPECT_LT(ms_between(t0, steady::now()), 2000);
}

TEST_F(SentinelShared, WaitReplicasFailsTypedWhenTooFewReplicasAcknowledge) {
  // One replica: WAIT 1 succeeds, WAIT 2 cannot.
  auto one = open_url(group_->url(k_fast + "&wait_replicas=1&wait_timeout=2s"));
  ASSERT_TRUE(one);
  ASSERT_TRUE(one->publish("q", padded_envelope_text(1)));
  auto two = open_url(group_->url(k_fast + "&wait_replicas=2&wait_timeout=300ms"));
  ASSERT_TRUE(two);
  auto t0 = steady::now();
  auto r = two->publish("q", padded_envelope_text(2));
  auto took = ms_between(t0, steady::now());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.code(), transport_errc::timeout) << r.error().message;
  EXPECT_NE(r.error().message.find("1 of 2 replicas"), std::string::npos) << r.error().message;
  EXPECT_GE(took, 250);
  EXPECT_LT(took, 3000);
  // The message is on the primary all the same (WAIT does not roll back).
  bqtest::raw_client primary(group_->node(0).port());
  EXPECT_EQ(primary.llen("q"), 2);
}

// The cost of wait_replicas=1 per publish on loopback: the same sequential publishes with and
// without it, interleaved in rounds so that machine noise hits both alike.
TEST_F(SentinelShared, WaitReplicasCostPerPublish) {
  auto plain = open_url(group_->url(k_fast));
  auto durable = open_url(group_->url(k_fast + "&wait_replicas=1&wait_timeout=2s"));
  ASSERT_TRUE(plain && durable);
  const int rounds = 7, per_round = 400;
  std::vector<double> us_plain, us_wait;
  auto timed = [&](babelqueue::redis::redis_transport& t, int base) {
    auto t0 = steady::now();
    for (int i = 0; i < per_round; ++i) {
      auto r = t.publish("cost", padded_envelope_text(base + i));
      EXPECT_TRUE(r) << r.error().message;
    }
    return std::chrono::duration<double, std::micro>(steady::now() - t0).count() / per_round;
  };
  for (int r = 0; r < rounds; ++r) {
    us_plain.push_back(timed(*plain, r * per_round));
    us_wait.push_back(timed(*durable, r * per_round));
  }
  std::sort(us_plain.begin(), us_plain.end());
  std::sort(us_wait.begin(), us_wait.end());
  std::printf(
      "publish cost (loopback, 1 replica, %d rounds x %d sequential publishes): "
      "plain median %.1f us (best %.1f), wait_replicas=1 median %.1f us (best %.1f): "
      "+%.1f us per publish\n",
      rounds, per_round, us_plain[rounds / 2], us_plain[0], us_wait[rounds / 2], us_wait[0],
      us_wait[rounds / 2] - us_plain[rounds / 2]);
}

// Sentinels with a password: sentinel_password authenticates to them; the URL userinfo
// stays the data nodes' (which here have none).
TEST_F(SentinelGroupTest, SentinelPasswordAuthenticatesToTheSentinels) {
  sentinel_group::config c;
  c.sentinel_password = "sentinel-secret";
  group_.reset();
  start_group(c);
  auto t = open_url(group_->url(k_fast + "&sentinel_password=sentinel-secret"));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->endpoint(), at(group_->node(0).port()));
  ASSERT_TRUE(t->publish("auth-q", padded_envelope_text(1)));

  for (const std::string& query : {std::string("&sentinel_password=wrong"), std::string()}) {
    auto o = parse(group_->url(k_fast + query));
    ASSERT_TRUE(o);
    auto bad = babelqueue::redis::redis_transport::open(*o);
    ASSERT_FALSE(bad) << query;
    // Refused by every Sentinel: permanent, at once, and naming no secret.
    EXPECT_EQ(bad.code(), transport_errc::permission) << query << ": " << bad.error().message;
    EXPECT_EQ(bad.error().message.find("wrong"), std::string::npos) << bad.error().message;
  }
}

// -- failover mid publish/consume -----------------------------------------------------------

namespace {

struct failover_report {
  long acked = 0;             // publishes that returned success
  long acked_after_kill = 0;  // ... of them, started after the primary was killed
  long publish_errors = 0;
  long errors_timeout = 0, errors_unavailable = 0, errors_other = 0;  // by code
  std::string last_error;
  long consumed_unique = 0;
  long duplicates = 0;                 // deliveries beyond the first of a message
  long lost = 0;                       // acknowledged publishes never consumed
  long lost_after_kill = 0;            // ... of them, published after the kill
  long long switch_ms = -1;            // kill → Sentinels report the new primary
  long long producer_resumed_ms = -1;  // kill → first publish acknowledged by the new primary
  long long consumer_resumed_ms = -1;  // kill → first message received from the new primary
  std::set<std::string> endpoints_after_kill;  // nodes that served a call started after the kill
  bool second_failover = false;  // the Sentinels later moved on from the first new primary
};

struct failover_plan {
  long before_kill = 1500;  // acknowledged publishes before the primary is killed
  long after_kill = 1000;   // acknowledged and consumed after the kill before stopping
  /// > 0: cut the replication link this long before the kill (the replica is disconnected
  /// and cannot reconnect: the primary gets a password it does not know). What the primary
  /// acknowledges in that window is what asynchronous replication loses.
  std::chrono::milliseconds cut_replication{0};
  /// The consumer's handler time per message. A consumer slower than the producer keeps a
  /// backlog: only messages still queued when the primary dies can be lost (a message
  /// consumed from the old primary was processed, whatever happens to its key afterwards).
  std::chrono::microseconds handler{0};
};

// Producer and consumer threads on `url`; SIGKILL of the primary once `before_kill` messages
// were acknowledged; the old primary restarted as a replica of the new one once every
// Sentinel switched (sentinel_group::restart_as_replica); both run on until
// `after_kill` more were acknowledged and consumed; then everything is drained
// (recover() included) and counted.
failover_report run_failover(sentinel_group& g, const std::string& url, failover_plan plan) {
  const long before_kill = plan.before_kill, after_kill = plan.after_kill;
  failover_report rep;
  const std::string queue = "failover";
  const int old_port = g.node(0).port();
  std::atomic<bool> killed{false}, stop_producer{false}, stop_consumer{false};
  std::atomic<long> acked{0}, acked_after{0}, consumed_after{0};
  steady::time_point kill_at{};
  std::atomic<long long> producer_resumed{-1}, consumer_resumed{-1};
  std::mutex mu;
  std::set<long> acked_set, acked_after_set;
  std::vector<long> seen;

  std::thread producer([&] {
    auto p = open_url(url);
    if (!p) return;
    for (long i = 0; !stop_producer; ++i) {
      const bool after = killed.load();
      auto r = p->publish(queue, padded_envelope_text(i));
      std::lock_guard<std::mutex> lock(mu);
      if (!r) {
        ++rep.publish_errors;
        if (r.code() == transport_errc::timeout) {
          ++rep.errors_timeout;
        } else if (r.code() == transport_errc::unavailable) {
          ++rep.errors_unavailable;
        } else {
          ++rep.errors_other;
        }
        rep.last_error = r.error().message;
        continue;
      }
      acked_set.insert(i);
      ++acked;
      if (after) {
        acked_after_set.insert(i);
        rep.endpoints_after_kill.insert(p->endpoint());
        if (acked_after++ == 0) producer_resumed = ms_between(kill_at, steady::now());
      }
      std::this_thread::sleep_for(200us);  // a paced producer, a few thousand per second
    }
  });
  std::thread consumer([&] {
    auto c = open_url(url);
    if (!c) return;
    while (!stop_consumer) {
      const bool after = killed.load();
      auto got = c->receive(queue, 100ms);
      if (!got || !got->has_value()) continue;
      {
        std::lock_guard<std::mutex> lock(mu);
        seen.push_back(envelope_n((*got)->body));
        if (after) {
          rep.endpoints_after_kill.insert(c->endpoint());
          if (consumed_after++ == 0) consumer_resumed = ms_between(kill_at, steady::now());
        }
      }
      if (plan.handler.count() > 0) std::this_thread::sleep_for(plan.handler);  // the work
      (void)c->ack(**got);  // an ack lost in the failover only makes a duplicate
    }
    (void)c->flush();
  });

  auto stop_all = [&] {
    stop_producer = true;
    stop_consumer = true;
    producer.join();
    consumer.join();
  };
  if (!sentinel_group::poll([&] { return acked.load() >= before_kill; }, 20s)) {
    stop_all();
    ADD_FAILURE() << "the producer did not get going";
    return rep;
  }
  if (plan.cut_replication.count() > 0) {
    bqtest::raw_client primary(old_port);
    EXPECT_EQ(primary.str({"CONFIG", "SET", "requirepass", "replicas-do-not-know-it"}), "OK");
    EXPECT_GE(primary.integer({"CLIENT", "KILL", "TYPE", "replica"}), 1);
    std::this_thread::sleep_for(plan.cut_replication);  // the fault window itself
  }
  kill_at = steady::now();
  g.node(0).kill_now();
  killed = true;
  int new_port = 0;
  sentinel_group::poll(
      [&] {
        int p = g.reported_primary_port();
        if (p != 0 && p != old_port) new_port = p;
        return new_port != 0;
      },
      30s);
  rep.switch_ms = new_port != 0 ? ms_between(kill_at, steady::now()) : -1;
  if (new_port != 0) {
    // The old primary comes back only once every Sentinel has the new configuration. The
    // first Sentinel to answer may be the only one that has it, and Redis Sentinel treats a
    // primary that claims to be a replica as down: a Sentinel still on the old configuration
    // could start a second failover. (A candidate for the second failover seen in CI, not
    // its cause: it happened again with this wait in place; see below.)
    EXPECT_TRUE(sentinel_group::poll([&] { return g.all_report_primary(new_port); }, 30s))
        << "the Sentinels did not all switch to the new primary";
    EXPECT_TRUE(g.restart_as_replica(0, new_port));  // from the thread that forked it
  }
  bool resumed = sentinel_group::poll(
      [&] { return acked_after.load() >= after_kill && consumed_after.load() >= after_kill; }, 30s);
  stop_producer = true;
  producer.join();
  // Let the consumer empty the ready list before it stops.
  if (new_port != 0) {
    bqtest::raw_client q(new_port);
    sentinel_group::poll([&] { return q.llen(queue) == 0; }, 20s);
  }
  stop_consumer = true;
  consumer.join();
  EXPECT_NE(new_port, 0) << "the Sentinels did not promote the replica";
  EXPECT_TRUE(resumed) << "producer/consumer did not resume on the new primary";

  // The primary the Sentinels name now. It should be new_port. On a loaded CI machine the
  // Sentinels sometimes failed over a second time, to the restarted old primary, after every
  // Sentinel had reported new_port. Their events (printed when it happens) showed why once:
  // the new primary answered no PING for ~1.1 s about a second after its promotion (on a
  // 2-core machine that was also building; down-after-milliseconds is 1000 here), so one
  // Sentinel saw it down, the others agreed, and it failed over again. The client's contract
  // is to follow the Sentinels, not that they fail over once, so the checks below hold
  // against whichever primary they name.
  const int current_port = new_port != 0 ? g.reported_primary_port() : 0;
  rep.second_failover = current_port != 0 && current_port != new_port;
  if (rep.second_failover) {
    std::printf(
        "the Sentinels failed over a second time, to :%d (old primary :%d, first new "
        "primary :%d); their events:\n%s",
        current_port, old_port, new_port, g.sentinel_events().c_str());
  }

  // Drain: reservations whose reply was lost sit in :processing.
  if (current_port != 0) {
    auto d = open_url(url);
    if (d) {
      EXPECT_EQ(d->endpoint(), at(current_port));
      auto r = d->recover(queue, 0ms);
      EXPECT_TRUE(r) << r.error().message;
      for (;;) {
        auto got = d->receive(queue, 0ms);
        if (!got || !got->has_value()) break;
        seen.push_back(envelope_n((*got)->body));
        (void)d->ack(**got);
      }
      EXPECT_TRUE(d->flush());
    }
    const int other_port = current_port == new_port ? old_port : new_port;
    EXPECT_EQ(sentinel_group::role(current_port), "master");
    // After a second failover the primary they demoted still says "master" for a while: a
    // Sentinel turns it into a replica (+convert-to-slave) only after it has reported the
    // wrong role for some seconds (about 10 s in Sentinel logs), so this waits for it.
    EXPECT_TRUE(
        sentinel_group::poll([&] { return sentinel_group::role(other_port) == "slave"; }, 30s))
        << ":" << other_port << " is still " << sentinel_group::role(other_port);
    if (!rep.second_failover) {
      // The old primary, back as a replica, was never sent a write: it refused none (READONLY).
      auto errors = sentinel_group::info(old_port, "errorstats");
      EXPECT_EQ(errors.find("errorstat_READONLY"), std::string::npos) << errors;
    }
    // Every call started after the kill was served by a primary the Sentinels named: none by
    // the restarted old primary while it was a stale, empty primary or a replica.
    std::set<std::string> named{at(new_port), at(current_port)};
    for (const auto& e : rep.endpoints_after_kill) {
      EXPECT_EQ(named.count(e), 1u) << e << " served a call after the kill";
    }
    EXPECT_EQ(rep.endpoints_after_kill.count(at(new_port)), 1u);
  }

  std::map<long, int> count;
  for (long n : seen) ++count[n];
  rep.acked = acked;
  rep.acked_after_kill = acked_after;
  rep.consumed_unique = static_cast<long>(count.size());
  for (const auto& [n, k] : count) rep.duplicates += k - 1;
  for (long n : acked_set) {
    if (count.count(n) == 0) {
      ++rep.lost;
      if (acked_after_set.count(n) != 0) ++rep.lost_after_kill;
    }
  }
  rep.producer_resumed_ms = producer_resumed;
  rep.consumer_resumed_ms = consumer_resumed;
  if (::testing::Test::HasFailure() && !rep.second_failover) {  // else printed above
    std::printf("old primary :%d, new primary :%d; the Sentinels' events:\n%s", old_port, new_port,
                g.sentinel_events().c_str());
  }
  return rep;
}

void print(const char* what, const failover_report& r) {
  std::printf("%s: acknowledged publishes %ld (%ld after the kill), publish errors %ld", what,
              r.acked, r.acked_after_kill, r.publish_errors);
  std::printf(" (timeout %ld, unavailable %ld, other %ld; last: %s)", r.errors_timeout,
              r.errors_unavailable, r.errors_other, r.last_error.c_str());
  std::printf(
      "; consumed %ld distinct, %ld duplicates; LOST (acknowledged, never consumed) %ld (%ld "
      "published after the kill); kill -> Sentinels switched %lld ms, -> producer resumed %lld "
      "ms, -> consumer resumed %lld ms\n",
      r.consumed_unique, r.duplicates, r.lost, r.lost_after_kill, r.switch_ms,
      r.producer_resumed_ms, r.consumer_resumed_ms);
}

}  // namespace

// A group whose Sentinels are ready to fail over (quorum reached, replicas known).
class SentinelFailover : public SentinelGroupTest {
 protected:
  void SetUp() override {
    sentinel_group::config c;
    c.ready_for_failover = true;
    start_group(c);
  }
};

TEST_F(SentinelFailover, FailoverMidPublishAndConsume) {
  auto r = run_failover(*group_, group_->url(k_fast), {});
  print("failover, no WAIT", r);
  // Bounds, not exact counts: Redis replication is asynchronous, so messages acknowledged by
  // the old primary just before the kill may be lost. What the new primary acknowledged is
  // never lost, and the loss is at most what was published before the kill.
  EXPECT_EQ(r.lost_after_kill, 0);
  EXPECT_LE(r.lost, r.acked - r.acked_after_kill);
  EXPECT_GE(r.acked_after_kill, 1000);
  EXPECT_GE(r.switch_ms, 0);
  EXPECT_EQ(r.errors_other, 0) << r.last_error;
  EXPECT_LT(r.producer_resumed_ms, 30000);
  EXPECT_LT(r.consumer_resumed_ms, 30000);
}

// The replication link is cut 300 ms before the primary dies: everything the primary
// acknowledged in that window exists nowhere else, and the failover loses it.
TEST_F(SentinelFailover, FailoverAfterAReplicationCutLosesWhatOnlyThePrimaryHad) {
  failover_plan plan;
  plan.cut_replication = 300ms;
  plan.handler = 1ms;
  auto r = run_failover(*group_, group_->url(k_fast), plan);
  print("failover after a 300 ms replication cut, no WAIT", r);
  EXPECT_EQ(r.lost_after_kill, 0);
  EXPECT_LE(r.lost, r.acked - r.acked_after_kill);
  EXPECT_GE(r.acked_after_kill, 1000);
  EXPECT_EQ(r.errors_other, 0) << r.last_error;
}

// The same cut with wait_replicas=1: a publish the replica did not confirm fails (typed
// timeout) instead of being acknowledged, so nothing acknowledged is lost. With one replica,
// publishing after the failover waits until the restarted old primary has synced as the new
// primary's replica (WAIT 1 needs one).
TEST_F(SentinelFailover, FailoverAfterAReplicationCutWithWaitReplicasLosesNothingAcknowledged) {
  failover_plan plan;
  plan.cut_replication = 300ms;
  plan.handler = 1ms;
  plan.after_kill = 300;
  auto r = run_failover(*group_, group_->url(k_fast + "&wait_replicas=1&wait_timeout=250ms"), plan);
  print("failover after a 300 ms replication cut, wait_replicas=1", r);
  EXPECT_EQ(r.lost, 0);
  EXPECT_GE(r.acked_after_kill, 300);
  EXPECT_GE(r.errors_timeout, 1);  // the cut made WAIT fail, typed
  EXPECT_EQ(r.errors_other, 0) << r.last_error;
}

// -- TLS ------------------------------------------------------------------------------------

// rediss+sentinel://: TLS to the Sentinels and to the primary they name (whose certificate is
// checked against the address the Sentinel reported).
// Shares SentinelShared's static group slot: suites run one after the other, each starting
// and stopping its own group.
class SentinelTls : public SentinelShared {
 protected:
  static void SetUpTestSuite() {
    if (bqtest::cert_dir().empty() || !bqtest::make_certificates(bqtest::cert_dir(), why_)) return;
    sentinel_group::config c;
    c.tls_dir = bqtest::cert_dir();
    group_ = start_shared(c);
  }
};

TEST_F(SentinelTls, DiscoversAndPublishesOverTls) {
  const std::string ca = "&tls_ca_file=" + bqtest::cert_dir() + "/ca.crt";
  auto t = open_url(group_->url(k_fast + ca));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->scheme(), "rediss+sentinel");
  EXPECT_EQ(t->endpoint(), at(group_->node(0).tls_port()));
  ASSERT_TRUE(t->publish("tls-q", padded_envelope_text(5)));
  auto got = t->receive("tls-q", 1s);
  ASSERT_TRUE(got) << got.error().message;
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ(envelope_n((*got)->body), 5);
  ASSERT_TRUE(t->ack(**got));
  ASSERT_TRUE(t->flush());
}

TEST_F(SentinelTls, AnUntrustedSentinelCertificateIsATypedErrorNamingTheReason) {
  auto o = parse(
      group_->url("?connect_timeout=300ms&tls_ca_file=" + bqtest::cert_dir() + "/other-ca.crt"));
  ASSERT_TRUE(o) << o.error().message;
  auto t = babelqueue::redis::redis_transport::open(*o);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.code(), transport_errc::unavailable);
  EXPECT_NE(t.error().message.find("certificate verify failed"), std::string::npos)
      << t.error().message;
}
