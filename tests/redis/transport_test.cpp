// redis:// transport against a real redis-server: publish/receive/ack, frames, 1 MiB,
// garbage values, options, pipelined acks, release.
#include "redis/redis_fixture.hpp"

#include <babelqueue/bindings/redis.hpp>
#include <babelqueue/runtime/url.hpp>

#include <functional>
#include <thread>

using namespace std::chrono_literals;
using babelqueue::condition;
using babelqueue::errc;
using babelqueue::transport_errc;
using bqtest::envelope_n;
using bqtest::padded_envelope_text;

namespace br = babelqueue::bindings::redis;

class RedisTransport : public bqtest::RedisTest {};

TEST_F(RedisTransport, PublishReceiveAckIsD6Layout) {
  auto t = open();
  ASSERT_TRUE(t);
  std::string body = padded_envelope_text(1);
  ASSERT_TRUE(t->publish("orders", body));
  // Payload identity: the list element is the envelope byte-for-byte.
  ASSERT_EQ(raw_->list("orders"), std::vector<std::string>{body});

  auto got = t->receive("orders", 1s);
  ASSERT_TRUE(got) << got.error().message;
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->body, body);
  EXPECT_EQ((*got)->queue, "orders");
  EXPECT_TRUE((*got)->hdrs.empty());
  EXPECT_FALSE((*got)->delivery_count.has_value());
  EXPECT_EQ(raw_->llen("orders"), 0);
  EXPECT_EQ(raw_->list("orders:processing"), std::vector<std::string>{body});
  // Tracked: one deadline member `<32 hex>:<value>`.
  EXPECT_EQ(raw_->integer({"ZCARD", "orders:processing:deadlines"}), 1);

  ASSERT_TRUE(t->ack(**got));
  ASSERT_TRUE(t->flush());
  EXPECT_EQ(raw_->llen("orders:processing"), 0);
  EXPECT_EQ(raw_->integer({"ZCARD", "orders:processing:deadlines"}), 0);
  EXPECT_EQ(t->stats().stale_acks, 0);
}

TEST_F(RedisTransport, FifoOrderAndTimeout) {
  auto t = open();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(t->publish("q", padded_envelope_text(i)));
  for (int i = 0; i < 5; ++i) {
    auto got = t->receive("q", 100ms);
    ASSERT_TRUE(got && got->has_value());
    EXPECT_EQ(envelope_n((*got)->body), i);
    ASSERT_TRUE(t->ack(**got));
  }
  auto start = std::chrono::steady_clock::now();
  auto none = t->receive("q", 300ms);
  auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_FALSE(none->has_value());
  EXPECT_GE(waited, 250ms);
  EXPECT_LT(waited, 1500ms);
  auto immediate = t->receive("q", 0ms);
  ASSERT_TRUE(immediate);
  EXPECT_FALSE(immediate->has_value());
  ASSERT_TRUE(t->close(std::chrono::steady_clock::now() + 1s));
  EXPECT_EQ(raw_->llen("q:processing"), 0);  // close flushed the deferred acks
}

TEST_F(RedisTransport, BlockingReceiveWakesOnPublish) {
  auto consumer = open();
  auto producer = open();
  std::thread later([&] {
    std::this_thread::sleep_for(200ms);
    ASSERT_TRUE(producer->publish("wake", padded_envelope_text(7)));
  });
  auto start = std::chrono::steady_clock::now();
  auto got = consumer->receive("wake", 5s);
  auto waited = std::chrono::steady_clock::now() - start;
  later.join();
  ASSERT_TRUE(got && got->has_value());
  EXPECT_EQ(envelope_n((*got)->body), 7);
  EXPECT_LT(waited, 2s);
}

TEST_F(RedisTransport, HeadersTravelInAFrameOnlyWhenNonEmpty) {
  auto t = open();
  std::string body = padded_envelope_text(1);
  ASSERT_TRUE(
      t->publish("f", body,
                 {{"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
                  {"bq-replay-bypass", "1"}}));
  ASSERT_TRUE(t->publish("f", body, {{"blank", ""}}));
  auto stored = raw_->list("f");
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_EQ(stored[0].rfind("{\"__bq_frame\":1,\"headers\":{", 0), 0u);
  EXPECT_EQ(stored[1], body);

  auto framed = t->receive("f", 1s);
  ASSERT_TRUE(framed && framed->has_value());
  EXPECT_EQ((*framed)->body, body);
  EXPECT_EQ((*framed)->hdrs.at("bq-replay-bypass"), "1");
  auto bare = t->receive("f", 1s);
  ASSERT_TRUE(bare && bare->has_value());
  EXPECT_EQ((*bare)->body, body);
  EXPECT_TRUE((*bare)->hdrs.empty());
  // The ack handle is the stored (framed) value: both leave :processing.
  ASSERT_TRUE(t->ack(**framed));
  ASSERT_TRUE(t->ack(**bare));
  ASSERT_TRUE(t->flush());
  EXPECT_EQ(raw_->llen("f:processing"), 0);
}

TEST_F(RedisTransport, OneMebibyteMessages) {
  auto t = open();
  std::string big = padded_envelope_text(42, 1u << 20);
  ASSERT_GT(big.size(), 1u << 20);
  ASSERT_TRUE(t->publish("big", big));
  ASSERT_TRUE(t->publish("big", big, {{"h", "v"}}));
  for (int i = 0; i < 2; ++i) {
    auto got = t->receive("big", 2s);
    ASSERT_TRUE(got && got->has_value()) << (got ? "" : got.error().message);
    EXPECT_EQ((*got)->body, big);
    EXPECT_EQ((*got)->hdrs.empty(), i == 0);
    ASSERT_TRUE(t->ack(**got));
  }
  ASSERT_TRUE(t->flush());
  EXPECT_EQ(raw_->llen("big:processing"), 0);
}

TEST_F(RedisTransport, GarbageValuesAreDeliveredAsBytes) {
  auto t = open();
  const std::string values[] = {
      "not json",
      std::string("\xff\xfe\x00\x01 binary\x00", 12),  // NUL bytes inside and at the end
      R"({"__bq_frame":1,"headers":{"a":"b"},"body":42})",
      R"({"__bq_frame":1,"headers":{"a":"b"},"bo)",
      "",
      R"({"job":"x"})",
  };
  for (const auto& v : values) raw_->integer({"RPUSH", "g", v});
  for (const auto& v : values) {
    auto got = t->receive("g", 1s);
    ASSERT_TRUE(got && got->has_value());
    EXPECT_EQ((*got)->body, v);
    EXPECT_TRUE((*got)->hdrs.empty());
    ASSERT_TRUE(t->ack(**got));
  }
  ASSERT_TRUE(t->flush());
  EXPECT_EQ(raw_->llen("g:processing"), 0);
}

TEST_F(RedisTransport, HashTaggedQueues) {
  auto t = open();
  ASSERT_TRUE(br::cluster_safe("{orders}"));
  ASSERT_TRUE(t->publish("{orders}", padded_envelope_text(1)));
  auto got = t->receive("{orders}", 1s);
  ASSERT_TRUE(got && got->has_value());
  EXPECT_EQ(raw_->llen("{orders}:processing"), 1);
  EXPECT_EQ(raw_->integer({"ZCARD", "{orders}:processing:deadlines"}), 1);
  ASSERT_TRUE(t->ack(**got));
  ASSERT_TRUE(t->flush());
  EXPECT_EQ(raw_->llen("{orders}:processing"), 0);
}

TEST_F(RedisTransport, PipelinedAckTravelsWithTheNextReservation) {
  auto t = open();
  const int n = 200;
  std::vector<babelqueue::outgoing_message> batch;
  batch.reserve(n);
  for (int i = 0; i < n; ++i) batch.push_back({padded_envelope_text(i), {}});
  auto rt0 = t->stats().round_trips;
  ASSERT_TRUE(t->publish_batch("p", batch));
  EXPECT_EQ(t->stats().round_trips - rt0, 1);  // one pipelined round trip
  EXPECT_EQ(raw_->llen("p"), n);

  auto rt1 = t->stats().round_trips;
  for (int i = 0; i < n; ++i) {
    auto got = t->receive("p", 100ms);
    ASSERT_TRUE(got && got->has_value());
    EXPECT_EQ(envelope_n((*got)->body), i);
    ASSERT_TRUE(t->ack(**got));
    // At most this message (deferred ack) is in :processing.
    if (i % 50 == 0) {
      EXPECT_EQ(raw_->llen("p:processing"), 1);
    }
  }
  // One round trip per message (settle of N + reservation of N+1 in one EVALSHA).
  EXPECT_EQ(t->stats().round_trips - rt1, n);
  ASSERT_TRUE(t->flush());
  EXPECT_EQ(raw_->llen("p:processing"), 0);
  EXPECT_EQ(t->stats().stale_acks, 0);
}

TEST_F(RedisTransport, UntrackedModeUsesPlainD6Commands) {
  auto o = opts();
  o.track_reservations = false;
  o.pipeline_acks = false;
  auto t = open(o);
  ASSERT_TRUE(t->publish("u", padded_envelope_text(1)));
  auto got = t->receive("u", 1s);
  ASSERT_TRUE(got && got->has_value());
  EXPECT_EQ(raw_->llen("u:processing"), 1);
  EXPECT_EQ(raw_->integer({"EXISTS", "u:processing:deadlines"}), 0);
  ASSERT_TRUE(t->ack(**got));
  EXPECT_EQ(raw_->llen("u:processing"), 0);
  auto none = t->receive("u", 50ms);
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());
}

TEST_F(RedisTransport, SettleErrors) {
  auto a = open();
  auto b = open();
  ASSERT_TRUE(a->publish("s", padded_envelope_text(1)));
  auto got = a->receive("s", 1s);
  ASSERT_TRUE(got && got->has_value());
  EXPECT_EQ(b->ack(**got).code(), condition::invalid_argument);  // not received by b
  EXPECT_EQ(a->release(**got, 1s).code(), transport_errc::not_supported);
  ASSERT_TRUE(a->ack(**got));
  EXPECT_EQ(a->ack(**got).code(), condition::invalid_argument);  // already settled
  ASSERT_TRUE(a->close(std::chrono::steady_clock::now() + 1s));
  EXPECT_EQ(a->publish("s", "x").code(), transport_errc::closed);
  EXPECT_EQ(a->receive("s", 0ms).code(), transport_errc::closed);
  EXPECT_TRUE(a->close(std::chrono::steady_clock::now()));
}

// SCRIPT FLUSH on the server: the next script call gets NOSCRIPT; the engine reloads the
// scripts and resends — except a publish, whose RPUSH ran: it is not resent (no duplicate),
// and the deferred ack that rode in front of it waits for the next round trip.
TEST_F(RedisTransport, ScriptsFlushedOnTheServerAreReloaded) {
  auto t = open();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(t->publish("sf", padded_envelope_text(i)));
  raw_->str({"SCRIPT", "FLUSH"});
  auto a = t->receive("sf", 1s);
  ASSERT_TRUE(a) << a.error().message;
  ASSERT_TRUE(a->has_value());
  EXPECT_EQ(envelope_n((*a)->body), 0);
  ASSERT_TRUE(t->ack(**a));  // deferred
  raw_->str({"SCRIPT", "FLUSH"});
  ASSERT_TRUE(t->publish("sf", padded_envelope_text(3)));
  EXPECT_EQ(raw_->llen("sf"), 3);             // published once
  EXPECT_EQ(raw_->llen("sf:processing"), 1);  // the settle did not run yet
  ASSERT_TRUE(t->flush());
  EXPECT_EQ(raw_->llen("sf:processing"), 0);
  EXPECT_EQ(t->stats().stale_acks, 0);

  auto b = t->receive("sf", 1s);
  ASSERT_TRUE(b && b->has_value());
  raw_->str({"SCRIPT", "FLUSH"});
  ASSERT_TRUE(t->release(**b));
  EXPECT_EQ(raw_->llen("sf:processing"), 0);
  EXPECT_EQ(raw_->llen("sf"), 3);
  raw_->str({"SCRIPT", "FLUSH"});
  auto r = t->recover("sf", 0ms);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->remaining, 0);
}

TEST_F(RedisTransport, ReleaseMovesTheSameBytesToTheEnd) {
  auto t = open();
  std::string first = padded_envelope_text(1), second = padded_envelope_text(2);
  ASSERT_TRUE(t->publish("r", first, {{"h", "v"}}));
  ASSERT_TRUE(t->publish("r", second));
  std::string stored_first = raw_->list("r")[0];
  auto got = t->receive("r", 1s);
  ASSERT_TRUE(got && got->has_value());
  ASSERT_TRUE(t->release(**got));
  EXPECT_EQ(raw_->llen("r:processing"), 0);
  EXPECT_EQ(raw_->integer({"ZCARD", "r:processing:deadlines"}), 0);
  auto list = raw_->list("r");
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[1], stored_first);  // same framed bytes, at the tail
  EXPECT_EQ(t->release(**got).code(), condition::invalid_argument);
}

TEST_F(RedisTransport, OptionsFromUrl) {
  auto url = babelqueue::broker_url::parse(
      "redis://:s3cret@localhost:6380/"
      "3?connect_timeout=1500ms&command_timeout=3s&processing_suffix=:inflight"
      "&track_reservations=false&retry_after=never&pipeline_acks=0&max_pending_acks=8"
      "&reconnect_backoff_min=50ms&reconnect_backoff_max=2s");
  ASSERT_TRUE(url);
  auto o = babelqueue::redis::options_from_url(*url);
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_EQ(o->host, "localhost");
  EXPECT_EQ(o->port, 6380);
  EXPECT_EQ(o->password, "s3cret");
  EXPECT_EQ(o->db, 3);
  EXPECT_EQ(o->connect_timeout, 1500ms);
  EXPECT_EQ(o->command_timeout, 3s);
  EXPECT_EQ(o->processing_suffix, ":inflight");
  EXPECT_FALSE(o->track_reservations);
  EXPECT_FALSE(o->retry_after.has_value());
  EXPECT_FALSE(o->pipeline_acks);
  EXPECT_EQ(o->max_pending_acks, 8);
  EXPECT_EQ(o->reconnect_backoff_max, 2s);

  auto defaults = babelqueue::redis::options_from_url(*babelqueue::broker_url::parse("redis://h"));
  ASSERT_TRUE(defaults);
  EXPECT_EQ(defaults->port, 6379);
  EXPECT_EQ(defaults->retry_after, std::chrono::seconds(90));
  for (const char* bad : {"redis://h/x", "redis://h?nope=1", "redis://h?command_timeout=0",
                          "redis://h?retry_after=soon", "redis://h?processing_suffix="}) {
    auto b = babelqueue::redis::options_from_url(*babelqueue::broker_url::parse(bad));
    EXPECT_FALSE(b) << bad;
    if (!b) {
      EXPECT_EQ(b.code(), condition::invalid_argument) << bad;
    }
  }
}

// One validation (src/redis/options.hpp) for options from a URL and options built in code:
// the same rule refuses both, with the same error, before any connection is tried.
TEST(RedisOptions, InvalidOptionsAreRefusedAlikeDirectlyAndThroughTheUrl) {
  using babelqueue::redis::options;
  struct invalid {
    std::string query;
    std::function<void(options&)> set;
  };
  const invalid cases[] = {
      {"connect_timeout=0", [](options& o) { o.connect_timeout = 0ms; }},
      {"command_timeout=0", [](options& o) { o.command_timeout = 0ms; }},
      {"reconnect_backoff_min=0", [](options& o) { o.reconnect_backoff_min = 0ms; }},
      {"reconnect_backoff_min=500ms&reconnect_backoff_max=100ms",
       [](options& o) {
         o.reconnect_backoff_min = 500ms;
         o.reconnect_backoff_max = 100ms;
       }},
      {"max_pending_acks=0", [](options& o) { o.max_pending_acks = 0; }},
      {"max_pending_acks=100001", [](options& o) { o.max_pending_acks = 100001; }},
      {"prefetch=0", [](options& o) { o.prefetch = 0; }},
      {"prefetch=256", [](options& o) { o.prefetch = 256; }},
      {"prefetch=4&track_reservations=false",
       [](options& o) {
         o.prefetch = 4;
         o.track_reservations = false;
       }},
      {"processing_suffix=", [](options& o) { o.processing_suffix.clear(); }},
      {"tls_ca_file=/etc/ca.pem", [](options& o) { o.tls_ca_file = "/etc/ca.pem"; }},
  };
  babelqueue::redis::register_transport();
  for (const auto& c : cases) {
    // Port 1: nothing listens there, so only validation can answer quickly and typed.
    const std::string url = "redis://127.0.0.1:1?" + c.query;
    auto via_url = babelqueue::redis::options_from_url(babelqueue::broker_url::parse(url).value());
    ASSERT_FALSE(via_url) << url;
    EXPECT_EQ(via_url.code(), condition::invalid_argument) << url;

    options o;
    o.port = 1;
    c.set(o);
    auto direct = babelqueue::redis::redis_transport::open(o);
    ASSERT_FALSE(direct) << url;
    EXPECT_EQ(direct.code(), condition::invalid_argument) << url;
    EXPECT_EQ(direct.error().message, via_url.error().message) << url;

    auto factory = babelqueue::open_transport(url);
    ASSERT_FALSE(factory) << url;
    EXPECT_EQ(factory.error().message, via_url.error().message) << url;
  }
  // A database number out of range, as a URL path and as a field.
  auto path = babelqueue::redis::options_from_url(
      babelqueue::broker_url::parse("redis://127.0.0.1:1/2000000").value());
  ASSERT_FALSE(path);
  options o;
  o.port = 1;
  o.db = 2'000'000;
  auto direct = babelqueue::redis::redis_transport::open(o);
  ASSERT_FALSE(direct);
  EXPECT_EQ(direct.error().message, path.error().message);
  o.db = -1;
  EXPECT_EQ(babelqueue::redis::redis_transport::open(o).code(), condition::invalid_argument);
  // Fields a URL cannot leave unusable (its parser refuses port 0, and the host defaults).
  o = options();
  o.port = 0;
  EXPECT_EQ(babelqueue::redis::redis_transport::open(o).code(), condition::invalid_argument);
  o = options();
  o.host.clear();
  EXPECT_EQ(babelqueue::redis::redis_transport::open(o).code(), condition::invalid_argument);
}

TEST_F(RedisTransport, RegisteredSchemeOpensThroughTheFactory) {
  babelqueue::redis::register_transport();
  auto t = babelqueue::open_transport(server_->url() + "/2?command_timeout=1s");
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ((*t)->scheme(), "redis");
  EXPECT_TRUE((*t)->capabilities().headers);
  ASSERT_TRUE((*t)->publish("db2", padded_envelope_text(1)));
  EXPECT_EQ(raw_->llen("db2"), 0);  // db 0
  raw_->str({"SELECT", "2"});
  EXPECT_EQ(raw_->llen("db2"), 1);
  // rediss:// is registered too (TLS, tls_test.cpp); nothing listens on port 1.
  auto tls = babelqueue::open_transport("rediss://127.0.0.1:1?connect_timeout=200ms");
  EXPECT_EQ(tls.code(), transport_errc::unavailable);
}

TEST_F(RedisTransport, WrongPasswordIsATypedError) {
  raw_->str({"CONFIG", "SET", "requirepass", "pw"});
  auto o = opts();
  o.password = "wrong";
  auto t = babelqueue::redis::redis_transport::open(o);
  EXPECT_FALSE(t);
  EXPECT_EQ(t.code(), transport_errc::permission);  // WRONGPASS: credentials, not arguments
  o.password = "pw";
  auto good = babelqueue::redis::redis_transport::open(o);
  EXPECT_TRUE(good) << good.error().message;
  // Restore for other tests in this process.
  bqtest::raw_client c(server_->port());
  c.str({"AUTH", "pw"});
  c.str({"CONFIG", "SET", "requirepass", ""});
}

TEST_F(RedisTransport, UnreachableServerFailsFastWithTransportError) {
  auto o = opts();
  o.port = static_cast<std::uint16_t>(bqtest::free_port());
  o.connect_timeout = 200ms;
  auto start = std::chrono::steady_clock::now();
  auto t = babelqueue::redis::redis_transport::open(o);
  EXPECT_FALSE(t);
  EXPECT_EQ(t.code(), transport_errc::unavailable);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST_F(RedisTransport, PrefetchReservesSeveralPerRoundTripAndHandsBackOnClose) {
  auto o = opts();
  o.prefetch = 4;
  auto t = open(o);
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(t->publish("pf", padded_envelope_text(i)));
  auto rt = t->stats().round_trips;
  auto first = t->receive("pf", 1s);
  ASSERT_TRUE(first && first->has_value());
  EXPECT_EQ(envelope_n((*first)->body), 0);
  EXPECT_EQ(raw_->llen("pf:processing"), 4);
  EXPECT_EQ(raw_->integer({"ZCARD", "pf:processing:deadlines"}), 4);
  ASSERT_TRUE(t->ack(**first));
  auto second = t->receive("pf", 1s);  // from the prefetch buffer: no round trip
  ASSERT_TRUE(second && second->has_value());
  EXPECT_EQ(envelope_n((*second)->body), 1);
  EXPECT_EQ(t->stats().round_trips - rt, 1);
  // close(): deferred ack flushed, the 2 undelivered go back to the HEAD in order; the
  // delivered-but-unsettled one stays reserved (recover() territory).
  ASSERT_TRUE(t->close(std::chrono::steady_clock::now() + 1s));
  EXPECT_EQ(raw_->llen("pf:processing"), 1);
  EXPECT_EQ(raw_->integer({"ZCARD", "pf:processing:deadlines"}), 1);
  auto other = open();
  std::vector<long> order;
  for (;;) {
    auto got = other->receive("pf", 0ms);
    ASSERT_TRUE(got);
    if (!got->has_value()) break;
    order.push_back(envelope_n((*got)->body));
    ASSERT_TRUE(other->ack(**got));
  }
  EXPECT_EQ(order, (std::vector<long>{2, 3, 4, 5, 6, 7, 8, 9}));
  auto bad = opts();
  bad.prefetch = 2;
  bad.track_reservations = false;
  EXPECT_EQ(babelqueue::redis::redis_transport::open(bad).code(), condition::invalid_argument);
}

TEST_F(RedisTransport, BinaryBodyWithHeadersIsStoredBare) {
  auto t = open();
  std::string binary("\xff\xfe\x00 poison", 9);
  ASSERT_TRUE(t->publish("bin", binary, {{"bq-dead-letter-reason", "poison"}}));
  EXPECT_EQ(raw_->list("bin"), std::vector<std::string>{binary});
  auto got = t->receive("bin", 1s);
  ASSERT_TRUE(got && got->has_value());
  EXPECT_EQ((*got)->body, binary);
  EXPECT_TRUE((*got)->hdrs.empty());
}
