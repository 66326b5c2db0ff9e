// The sans-I/O half of the round-trip engine, without a server: requests are RESP bytes,
// operations compose commands and read meaning into replies that are parsed here from RESP
// text by hiredis' reader — no socket anywhere.
#include "redis/errors.hpp"
#include "redis/operations.hpp"

#include <babelqueue/redis/redis_transport.hpp>

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <memory>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using babelqueue::errc;
using babelqueue::transport_errc;
namespace d = babelqueue::redis::detail;

namespace {

struct reply_free {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using reply = std::unique_ptr<redisReply, reply_free>;

// One reply parsed from its RESP text.
reply parse(const std::string& resp) {
  redisReader* rd = redisReaderCreate();
  void* out = nullptr;
  redisReaderFeed(rd, resp.data(), resp.size());
  if (redisReaderGetReply(rd, &out) != REDIS_OK) out = nullptr;
  redisReaderFree(rd);
  return reply(static_cast<redisReply*>(out));
}

std::string bulk(const std::string& s) {
  return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n";
}

// Script SHAs as a connection would hold them.
const std::vector<std::string> shas = {"sha-settle",  "sha-release",   "sha-release-u",
                                       "sha-recover", "sha-unreserve", "sha-migrate",
                                       "sha-schedule"};

d::reservation_ptr reserved(const std::string& queue, const std::string& raw,
                            const std::string& token) {
  auto r = std::make_shared<d::reservation>();
  r->queue = queue;
  r->raw = raw;
  r->token = token;
  return r;
}

}  // namespace

TEST(RedisRequest, EncodesCommandsAsResp) {
  d::request req;
  req.push({"SET", "k", "v"});
  req.begin(3, {7, false, 2});
  req.add("RPUSH");
  req.add("q");
  req.add(std::string_view("a\0b", 3));  // binary-safe
  EXPECT_EQ(req.size(), 2u);
  std::string expected =
      "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"
      "*3\r\n$5\r\nRPUSH\r\n$1\r\nq\r\n$3\r\n";
  expected += std::string("a\0b", 3) + "\r\n";
  EXPECT_EQ(req.payload(), expected);
  EXPECT_EQ(req.meta(1).kind, 7);
  EXPECT_FALSE(req.meta(1).report_errors);
  EXPECT_EQ(req.meta(1).count, 2u);
  req.clear();
  EXPECT_TRUE(req.empty());
  EXPECT_TRUE(req.payload().empty());
}

TEST(RedisRequest, AHugeBufferIsNotKept) {
  d::request req;
  std::string big(d::request::k_keep_bytes + 1, 'x');
  req.push({"RPUSH", "q", big});
  req.clear();
  req.push({"PING"});
  EXPECT_EQ(req.payload(), "*1\r\n$4\r\nPING\r\n");
}

TEST(RedisEngineCore, ErrorRepliesAreSortedWithoutIo) {
  babelqueue::redis::options o;
  d::transport_state st(o);
  d::length_op op("q");
  d::round_outcome out;
  d::interpret(op, {d::k_single}, *parse("-NOSCRIPT No matching script\r\n"), out);
  EXPECT_TRUE(out.noscript);
  EXPECT_FALSE(out.error);
  d::interpret(op, {d::k_single, false}, *parse("-ERR ignored\r\n"), out);
  EXPECT_FALSE(out.error);  // its command does not report errors
  d::interpret(op, {d::k_single}, *parse("-WRONGTYPE Operation against a key\r\n"), out);
  d::interpret(op, {d::k_single}, *parse("-ERR second\r\n"), out);
  ASSERT_TRUE(out.error);
  EXPECT_EQ(out.error->code, transport_errc::unavailable);
  EXPECT_EQ(out.error->message, "redis LLEN failed: WRONGTYPE Operation against a key");
  d::interpret(op, {d::k_single}, *parse(":42\r\n"), out);
  EXPECT_EQ(op.length, 42);
}

TEST(RedisEngineCore, ReceiveMergesItsQueuesAcksIntoTheReservingScript) {
  babelqueue::redis::options o;
  d::transport_state st(o);
  const std::string token_a(32, 'a'), token_b(32, 'b');
  st.pending.push_back(reserved("orders", "m1", token_a));  // merged into the reservation
  st.pending.push_back(reserved("other", "m2", token_b));   // settled in front of it
  d::reserve_op op(st, "orders", d::clock::now() + 1s);
  EXPECT_EQ(op.begin_attempt(1000ms), o.command_timeout);  // first try does not block
  d::request req;
  op.compose(req, shas);
  ASSERT_EQ(req.size(), 2u);
  EXPECT_EQ(req.meta(0).kind, d::k_settle_tracked);
  EXPECT_EQ(req.meta(0).count, 1u);
  EXPECT_EQ(req.meta(1).kind, d::k_reserve_tracked);
  EXPECT_EQ(req.meta(1).count, 1u);
  EXPECT_TRUE(st.pending.empty());  // taken along by this round
  const std::string payload(req.payload());
  EXPECT_NE(payload.find(bulk("other:processing:deadlines")), std::string::npos);
  EXPECT_NE(payload.find(bulk("orders:processing:deadlines")), std::string::npos);
  EXPECT_LT(payload.find(bulk(token_b)), payload.find(bulk(token_a)));

  // The settle of `other` found its reservation gone; the script settled m1 and reserved m3.
  d::round_outcome out;
  d::interpret(op, req.meta(0), *parse("*1\r\n:0\r\n"), out);
  // {settled, next due (-1: something was reserved), value, token}
  d::interpret(op, req.meta(1), *parse("*4\r\n:1\r\n:-1\r\n" + bulk("m3") + bulk(token_a)), out);
  EXPECT_FALSE(out.error);
  EXPECT_EQ(st.stale_acks, 1);
  EXPECT_EQ(op.finish(out.error), d::next_step::done);
  ASSERT_EQ(op.reserved().size(), 1u);
  EXPECT_EQ(op.reserved()[0]->raw, "m3");
  EXPECT_EQ(op.reserved()[0]->token, token_a);
  EXPECT_TRUE(st.taken.empty());
}

TEST(RedisEngineCore, AnIncompleteRoundGivesTheAcksBack) {
  babelqueue::redis::options o;
  d::transport_state st(o);
  st.pending.push_back(reserved("q", "m1", std::string(32, 'a')));
  st.pending.push_back(reserved("q", "m2", std::string(32, 'b')));
  d::settle_op op(st);
  d::request req;
  op.compose(req, shas);
  ASSERT_EQ(req.size(), 1u);  // one script call settles both
  EXPECT_EQ(req.meta(0).count, 2u);
  EXPECT_TRUE(st.pending.empty());
  op.undo();  // e.g. the connection dropped before the reply
  ASSERT_EQ(st.pending.size(), 2u);
  EXPECT_EQ(st.pending[0]->raw, "m1");
  EXPECT_EQ(st.pending[1]->raw, "m2");
}

TEST(RedisEngineCore, PublishSplitsIntoBoundedRpushesBehindTheDeferredAcks) {
  babelqueue::redis::options o;
  o.track_reservations = false;
  d::transport_state st(o);
  st.pending.push_back(reserved("q", "done", ""));  // untracked: one LREM
  std::vector<std::string_view> values(2500, "v");
  d::publish_op op(st, "q", values);
  EXPECT_EQ(op.begin_attempt(3ms), o.command_timeout);  // fixed: no setsockopt per publish
  d::request req;
  op.compose(req, shas);
  ASSERT_EQ(req.size(), 4u);
  EXPECT_EQ(req.meta(0).kind, d::k_settle_untracked);
  EXPECT_FALSE(req.meta(0).report_errors);  // a publish is not failed by a settle
  for (std::size_t i = 1; i < 4; ++i) EXPECT_EQ(req.meta(i).kind, d::k_push);
  EXPECT_EQ(std::string(req.payload()).rfind("*4\r\n$4\r\nLREM\r\n", 0), 0u);
  EXPECT_NE(std::string(req.payload()).find("*1002\r\n$5\r\nRPUSH\r\n"), std::string::npos);
  EXPECT_NE(std::string(req.payload()).find("*502\r\n$5\r\nRPUSH\r\n"), std::string::npos);
  EXPECT_FALSE(op.resend_after_noscript);
}

// docs/errors.md, table "redis / rediss": the reply's code word decides, the reply is kept.
TEST(RedisFailureMapping, ErrorRepliesMapOntoTransportCodes) {
  using d::fault;
  const struct {
    const char* reply;
    transport_errc want;
  } cases[] = {
      {"WRONGPASS invalid username-password pair", transport_errc::permission},
      {"NOAUTH Authentication required.", transport_errc::permission},
      {"NOPERM this user has no permissions to run the 'evalsha' command",
       transport_errc::permission},
      {"MOVED 3999 127.0.0.1:6381", transport_errc::refused},
      {"ASK 3999 127.0.0.1:6381", transport_errc::refused},
      {"CROSSSLOT Keys in request don't hash to the same slot", transport_errc::refused},
      {"LOADING Redis is loading the dataset in memory", transport_errc::unavailable},
      {"BUSY Redis is busy running a script.", transport_errc::unavailable},
      {"OOM command not allowed when used memory > 'maxmemory'.", transport_errc::unavailable},
      {"MASTERDOWN Link with MASTER is down", transport_errc::unavailable},
      {"CLUSTERDOWN The cluster is down", transport_errc::unavailable},
  };
  for (const auto& c : cases) {
    const auto e = d::redis_error(fault::server_error, "redis EVALSHA failed", c.reply);
    EXPECT_EQ(e.code, c.want) << c.reply;
    ASSERT_TRUE(e.native) << c.reply;
    EXPECT_EQ(e.native->source, "redis");
    EXPECT_EQ(e.native->text, c.reply);
    EXPECT_EQ(d::is_permanent(e), c.want == transport_errc::permission) << c.reply;
  }
  EXPECT_EQ(d::redis_error(fault::auth_refused, "AUTH", "ERR invalid password").code,
            transport_errc::permission);
  EXPECT_EQ(d::redis_error(fault::timed_out, "read").code, transport_errc::timeout);
  EXPECT_EQ(d::redis_error(fault::io, "read").code, transport_errc::unavailable);
  EXPECT_EQ(d::redis_error(fault::closed, "closed").code, transport_errc::closed);
  EXPECT_EQ(d::redis_error(fault::select_refused, "SELECT 99", "ERR DB index is out of range").code,
            transport_errc::invalid_argument);
  EXPECT_EQ(d::redis_error(fault::tls, "TLS handshake", "certificate verify failed").native->source,
            "openssl");
}

// Delayed publish (redis_transport.hpp, "Delayed publish"): a receive that found nothing waits
// at most until the earliest scheduled message is due (the script's hint), and never more than
// a 1 s slice; untracked, the move script rides in front of the plain LMOVE.
TEST(RedisEngineCore, AReceiveWaitIsCappedAtTheNextDueTimeAndASlice) {
  babelqueue::redis::options o;
  d::transport_state st(o);
  d::reserve_op op(st, "q", d::clock::now() + 10s);
  EXPECT_EQ(op.begin_attempt(10000ms), o.command_timeout);  // first try does not block
  d::request req;
  op.compose(req, shas);
  ASSERT_EQ(req.size(), 1u);
  EXPECT_NE(std::string(req.payload()).find(bulk("q:scheduled")), std::string::npos);
  d::round_outcome out;
  d::interpret(op, req.meta(0), *parse("*2\r\n:0\r\n:300\r\n"), out);  // due in 300 ms
  ASSERT_EQ(op.finish(out.error), d::next_step::again);
  const auto capped = op.begin_attempt(9990ms) - o.command_timeout;
  EXPECT_LE(capped, 300ms);
  EXPECT_GE(capped, 250ms);
  req.clear();
  op.compose(req, shas);
  ASSERT_EQ(req.size(), 2u);
  EXPECT_EQ(req.meta(0).kind, d::k_wait);  // BLMOVE q q LEFT LEFT <0.3>
  out = {};
  d::interpret(op, req.meta(0), *parse("*-1\r\n"), out);
  d::interpret(op, req.meta(1), *parse("*2\r\n:0\r\n:-1\r\n"), out);  // none scheduled
  ASSERT_EQ(op.finish(out.error), d::next_step::again);
  EXPECT_EQ(op.begin_attempt(9000ms), o.command_timeout + 1000ms);  // the slice

  babelqueue::redis::options u;
  u.track_reservations = false;
  d::transport_state su(u);
  d::reserve_op untracked(su, "q", d::clock::now() + 10s);
  EXPECT_EQ(untracked.begin_attempt(10000ms), u.command_timeout);
  req.clear();
  untracked.compose(req, shas);
  ASSERT_EQ(req.size(), 2u);
  EXPECT_EQ(req.meta(0).kind, d::k_move_due);
  EXPECT_EQ(req.meta(1).kind, d::k_reserve_untracked);
  const std::string payload(req.payload());
  EXPECT_LT(payload.find(bulk("sha-migrate")), payload.find(bulk("LMOVE")));
  EXPECT_FALSE(untracked.resend_after_noscript);  // the LMOVE ran: keep what it took
}
