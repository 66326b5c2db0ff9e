// publish_delayed() on a real redis-server (redis_transport.hpp, "Delayed publish"):
//  - owned layout: the key (`<queue>:scheduled`, nothing else), the member format
//    (`<16 hex µs><16 hex random>:<stored value>`), the score (due time in ms, server clock),
//    the exact bytes the list gets once due (a plain reader of the list sees what publish()
//    would have pushed, frame included), identical bodies that do not collapse, due order then
//    publish order, a blocking receive that wakes at the due time (tracked and untracked, and
//    for a message another producer schedules during the wait), NOSCRIPT in the untracked
//    path, and a restart of a persistent server during the delay;
//  - laravel=1: Laravel's own `ZADD <prefix><queue>:delayed <due seconds> <job>`, no notify
//    token, rounded up on the server's clock, and a receive that migrates it when due.
#include "redis/redis_fixture.hpp"

#include <babelqueue/bindings/redis.hpp>

#include <regex>
#include <thread>

using namespace std::chrono_literals;
using babelqueue::transport_errc;
using bqtest::envelope_n;
using bqtest::padded_envelope_text;
namespace bqr = babelqueue::redis;
using steady = std::chrono::steady_clock;

namespace {

long long elapsed_ms(steady::time_point since) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - since).count();
}

}  // namespace

class RedisDelay : public bqtest::RedisTest {
 protected:
  // Members of a sorted set with their scores as the server prints them.
  std::vector<std::pair<std::string, std::string>> scored(const std::string& key) {
    redisReply* r = raw_->run({"ZRANGE", key, "0", "-1", "WITHSCORES"});
    std::vector<std::pair<std::string, std::string>> out;
    if (r != nullptr && r->type == REDIS_REPLY_ARRAY) {
      for (std::size_t i = 0; i + 1 < r->elements; i += 2) {
        out.emplace_back(std::string(r->element[i]->str, r->element[i]->len),
                         std::string(r->element[i + 1]->str, r->element[i + 1]->len));
      }
    }
    if (r != nullptr) freeReplyObject(r);
    return out;
  }
  std::vector<std::string> all_keys() {
    redisReply* r = raw_->run({"KEYS", "*"});
    std::vector<std::string> out;
    if (r != nullptr && r->type == REDIS_REPLY_ARRAY) {
      for (std::size_t i = 0; i < r->elements; ++i)
        out.emplace_back(r->element[i]->str, r->element[i]->len);
    }
    if (r != nullptr) freeReplyObject(r);
    std::sort(out.begin(), out.end());
    return out;
  }
  // The server's clock (TIME) in ms.
  long long server_ms() {
    redisReply* r = raw_->run({"TIME"});
    long long s = std::stoll(std::string(r->element[0]->str, r->element[0]->len));
    long long us = std::stoll(std::string(r->element[1]->str, r->element[1]->len));
    freeReplyObject(r);
    return s * 1000 + us / 1000;
  }
};

TEST_F(RedisDelay, OwnedLayoutKeyMemberAndScore) {
  auto t = open();
  const auto caps = t->capabilities();
  EXPECT_TRUE(caps.delayed_publish);
  EXPECT_EQ(caps.max_delay, 0ms);
  EXPECT_EQ(caps.delay_granularity, 0ms);  // milliseconds
  const std::string body = padded_envelope_text(1);
  const long long before = server_ms();
  ASSERT_TRUE(t->publish_delayed("{d}", body, {}, 60s));
  const long long after = server_ms();
  // One new key, next to the list (same hash tag), and nothing on the list yet.
  EXPECT_EQ(all_keys(), std::vector<std::string>{"{d}:scheduled"});
  auto members = scored("{d}:scheduled");
  ASSERT_EQ(members.size(), 1u);
  const auto& [member, score] = members[0];
  ASSERT_GT(member.size(), 33u);
  EXPECT_TRUE(std::regex_match(member.substr(0, 33), std::regex("[0-9a-f]{32}:"))) << member;
  EXPECT_EQ(member.substr(33), body) << "the member ends with exactly the value publish() pushes";
  // The prefix starts with the publish time in µs (server clock); the score is the due time
  // in ms, never early: ceil(publish time in ms) + delay.
  const long long stamp_us = std::stoll(member.substr(0, 16), nullptr, 16);
  EXPECT_GE(stamp_us / 1000, before);
  EXPECT_LE(stamp_us / 1000, after);
  EXPECT_EQ(std::stoll(score), (stamp_us + 999) / 1000 + 60000);

  // With headers the member carries the frame publish() would push.
  const babelqueue::headers hdrs{
      {"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}};
  ASSERT_TRUE(t->publish_delayed("{d}", body, hdrs, 60s));
  members = scored("{d}:scheduled");
  ASSERT_EQ(members.size(), 2u);
  EXPECT_EQ(members[1].first.substr(33),
            babelqueue::bindings::redis::stored_value(body, hdrs).value());
  EXPECT_EQ(raw_->llen("{d}"), 0);
}

// A plain reader of the list (a peer SDK's BLMOVE, a hand-written LPOP) gets exactly what
// publish() would have pushed once a C++ consumer of the queue has moved it.
TEST_F(RedisDelay, TheListGetsTheExactBytesOnceDue) {
  auto t = open();
  const std::string plain = padded_envelope_text(1);
  const std::string later = padded_envelope_text(2);
  const babelqueue::headers hdrs{{"x-k", "v"}};
  ASSERT_TRUE(t->publish("x", plain));
  ASSERT_TRUE(t->publish_delayed("x", later, hdrs, 300ms));
  ASSERT_TRUE(t->publish_delayed("x", later, {}, 300ms));
  std::this_thread::sleep_for(400ms);
  EXPECT_EQ(raw_->llen("x"), 1) << "nothing moves without a consumer";
  auto got = t->receive("x", 1s);  // moves both due ones to the END, then takes the head
  ASSERT_TRUE(got && got->has_value());
  EXPECT_EQ((*got)->body, plain);
  const auto list = raw_->list("x");
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0], babelqueue::bindings::redis::stored_value(later, hdrs).value());
  EXPECT_EQ(list[1], later);
  EXPECT_EQ(raw_->integer({"EXISTS", "x:scheduled"}), 0);
  // And this SDK unframes it like any framed value.
  auto framed = t->receive("x", 1s);
  ASSERT_TRUE(framed && framed->has_value());
  EXPECT_EQ((*framed)->body, later);
  EXPECT_EQ((*framed)->hdrs.at("x-k"), "v");
}

TEST_F(RedisDelay, IdenticalBodiesDoNotCollapse) {
  auto t = open();
  const std::string body = padded_envelope_text(7);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(t->publish_delayed("same", body, {}, 500ms));
  EXPECT_EQ(raw_->integer({"ZCARD", "same:scheduled"}), 3);
  for (int i = 0; i < 3; ++i) {
    auto m = t->receive("same", 3s);
    ASSERT_TRUE(m && m->has_value()) << "copy " << i;
    EXPECT_EQ((*m)->body, body);
    ASSERT_TRUE(t->ack(**m));
  }
  auto none = t->receive("same", 200ms);
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());
}

// Due order first; among messages due at once, publish order (the prefix's µs stamp).
TEST_F(RedisDelay, DueOrderThenPublishOrder) {
  auto t = open();
  ASSERT_TRUE(t->publish_delayed("o", padded_envelope_text(1), {}, 900ms));
  ASSERT_TRUE(t->publish_delayed("o", padded_envelope_text(2), {}, 900ms));
  ASSERT_TRUE(t->publish_delayed("o", padded_envelope_text(3), {}, 900ms));
  ASSERT_TRUE(t->publish_delayed("o", padded_envelope_text(0), {}, 300ms));
  // One score for 4 and 5: the order is the members', i.e. publish order.
  const std::string due = std::to_string(server_ms() + 1500);
  for (const auto& [n, stamp] :
       {std::pair{4, "0000000000000001"}, std::pair{5, "0000000000000002"}}) {
    raw_->integer({"ZADD", "o:scheduled", due,
                   std::string(stamp) + "ffffffffffffffff:" + padded_envelope_text(n)});
  }
  std::vector<long> order;
  for (int i = 0; i < 6; ++i) {
    auto m = t->receive("o", 5s);
    ASSERT_TRUE(m && m->has_value()) << i;
    order.push_back(envelope_n((*m)->body));
    ASSERT_TRUE(t->ack(**m));
  }
  EXPECT_EQ(order, (std::vector<long>{0, 1, 2, 3, 4, 5}));
}

// A receive with a 10 s timeout returns a 1 s-delayed message after about 1 s: its wait is
// capped at the earliest due time, tracked (BLMOVE rotation + script) and untracked (BLMOVE).
TEST_F(RedisDelay, ABlockingReceiveWakesAtTheDueTime) {
  for (bool tracked : {true, false}) {
    SCOPED_TRACE(tracked ? "tracked" : "untracked");
    auto o = opts();
    o.track_reservations = tracked;
    auto t = open(o);
    const auto start = steady::now();
    ASSERT_TRUE(t->publish_delayed("w", padded_envelope_text(1), {}, 1s));
    auto m = t->receive("w", 10s);
    const auto took = elapsed_ms(start);
    ASSERT_TRUE(m && m->has_value());
    EXPECT_GE(took, 1000);
    EXPECT_LT(took, 1300) << "woke at " << took << " ms, not at the due time";
    std::printf("[ delay ] %s: 1 s delay received after %lld ms\n",
                tracked ? "tracked" : "untracked", took);
    ASSERT_TRUE(t->ack(**m));
  }
}

// Scheduled by another producer while a consumer already waits: nothing is pushed that its
// BLMOVE would see, so the wait is cut in slices of at most 1 s; it arrives within a slice.
TEST_F(RedisDelay, AMessageScheduledDuringTheWaitArrivesWithinASlice) {
  auto consumer = open();
  auto producer = open();
  const auto start = steady::now();
  std::thread later([&] {
    std::this_thread::sleep_for(300ms);
    ASSERT_TRUE(producer->publish_delayed("s", padded_envelope_text(1), {}, 500ms));
  });
  auto m = consumer->receive("s", 10s);
  later.join();
  const auto took = elapsed_ms(start);
  ASSERT_TRUE(m && m->has_value());
  EXPECT_GE(took, 800);
  EXPECT_LT(took, 2200) << "a receive slice is at most 1 s";
  std::printf("[ delay ] due at ~800 ms, scheduled during the wait: received after %lld ms\n",
              took);
}

// Untracked, the move script rides in front of a plain LMOVE: after SCRIPT FLUSH its NOSCRIPT
// must not lose what the LMOVE reserved, and the due message moves on the next receive.
TEST_F(RedisDelay, UntrackedNoscriptKeepsTheReservation) {
  auto o = opts();
  o.track_reservations = false;
  auto t = open(o);
  ASSERT_TRUE(t->publish("n", padded_envelope_text(1)));
  ASSERT_TRUE(t->publish_delayed("n", padded_envelope_text(2), {}, 100ms));
  std::this_thread::sleep_for(200ms);
  raw_->str({"SCRIPT", "FLUSH"});
  auto a = t->receive("n", 1s);
  ASSERT_TRUE(a) << a.error().message;
  ASSERT_TRUE(a->has_value());
  EXPECT_EQ(envelope_n((*a)->body), 1);
  ASSERT_TRUE(t->ack(**a));
  auto b = t->receive("n", 1s);
  ASSERT_TRUE(b && b->has_value());
  EXPECT_EQ(envelope_n((*b)->body), 2);
  ASSERT_TRUE(t->ack(**b));
  ASSERT_TRUE(t->flush());
  EXPECT_EQ(raw_->llen("n:processing"), 0) << "a reservation was lost track of";
}

TEST_F(RedisDelay, BadInputAndCloseSendNothing) {
  auto t = open();
  EXPECT_EQ(t->publish_delayed("", "x", {}, 1s).code(), transport_errc::invalid_argument);
  EXPECT_EQ(t->publish_delayed("b", "x", {}, -1ms).code(), transport_errc::invalid_argument);
  // A delay far beyond any calendar still schedules (no cap of its own), never wraps to "due".
  ASSERT_TRUE(t->publish_delayed("b", "far", {}, std::chrono::milliseconds::max()));
  auto none = t->receive("b", 100ms);
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());
  EXPECT_EQ(raw_->integer({"ZCARD", "b:scheduled"}), 1);
  ASSERT_TRUE(t->close(steady::now() + 1s));
  EXPECT_EQ(t->publish_delayed("b", "x", {}, 1s).code(), transport_errc::closed);
  EXPECT_EQ(raw_->integer({"ZCARD", "b:scheduled"}), 1);
}

TEST_F(RedisDelay, LaravelLayoutIsLaravelsLater) {
  auto o = opts();
  o.laravel = true;
  auto t = open(o);
  EXPECT_EQ(t->capabilities().delay_granularity, 1000ms);
  EXPECT_TRUE(t->capabilities().delayed_publish);
  const std::string body = padded_envelope_text(1);
  const long long before = server_ms();
  ASSERT_TRUE(t->publish_delayed("lq", body, {}, 1500ms));
  const long long after = server_ms();
  // Only :delayed: Laravel's later() pushes no notify token (the migration does).
  EXPECT_EQ(all_keys(), std::vector<std::string>{"queues:lq:delayed"});
  auto members = scored("queues:lq:delayed");
  ASSERT_EQ(members.size(), 1u);
  EXPECT_EQ(members[0].first, body) << "the member is the job, byte for byte";
  // Whole seconds, rounded up: never before now + delay.
  const long long due_s = std::stoll(members[0].second);
  EXPECT_GE(due_s * 1000, before + 1500);
  EXPECT_LE(due_s * 1000, after + 1500 + 1000);
  // The same job again: the set holds it once and it keeps its due time.
  ASSERT_TRUE(t->publish_delayed("lq", body, {}, 30s));
  EXPECT_EQ(scored("queues:lq:delayed"), members);
  EXPECT_EQ(t->publish_delayed("lq", body, {{"k", "v"}}, 1s).code(), transport_errc::not_supported);

  const auto start = steady::now();
  auto m = t->receive("lq", 10s);
  ASSERT_TRUE(m && m->has_value());
  EXPECT_EQ((*m)->body, body);
  const long long at = server_ms();
  EXPECT_GE(at, due_s * 1000) << "migrated before its score";
  EXPECT_LT(at, due_s * 1000 + 300) << "the wait is capped at the due time";
  std::printf(
      "[ delay ] laravel: received %lld ms after publishing, %lld ms after the due second\n",
      elapsed_ms(start), at - due_s * 1000);
  ASSERT_TRUE(t->ack(**m));
}

class RedisDelayRestart : public RedisDelay {
 protected:
  static void SetUpTestSuite() {
    bqtest::redis_server::config c;
    c.persistent = true;
    start(c);
  }
};

// The set is an ordinary key: with AOF it survives a restart, and a delay that ran out while
// the server was down is due on the first receive after it.
TEST_F(RedisDelayRestart, ADelayedMessageSurvivesARestart) {
  auto t = open();
  ASSERT_TRUE(t->publish_delayed("r", padded_envelope_text(1), {}, 1s));
  ASSERT_TRUE(server_->restart());
  std::this_thread::sleep_for(1s);
  auto m = t->receive("r", 5s);  // reconnects
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_TRUE(m->has_value());
  EXPECT_EQ(envelope_n((*m)->body), 1);
  ASSERT_TRUE(t->ack(**m));
  ASSERT_TRUE(t->flush());
}
