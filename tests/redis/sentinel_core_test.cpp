// The sans-I/O parts of Sentinel support and wait_replicas, without a server: the WAIT that
// rides in a publish's round trip and what its reply means, and which error replies count
// as "this node is no longer the primary".
#include "redis/operations.hpp"
#include "redis/sentinel.hpp"
#include "redis/wait_replicas.hpp"

#include <babelqueue/redis/redis_transport.hpp>

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <string>
#include <vector>

using namespace std::chrono_literals;
using babelqueue::transport_errc;
namespace d = babelqueue::redis::detail;

namespace {

redisReply integer_reply(long long v) {
  redisReply r{};
  r.type = REDIS_REPLY_INTEGER;
  r.integer = v;
  return r;
}

babelqueue::redis::options waiting_for(std::int64_t replicas) {
  babelqueue::redis::options o;
  o.wait_replicas = replicas;
  o.wait_timeout = 250ms;
  return o;
}

// A publish wrapped with its WAIT (members in construction order: the options first).
struct publish_with_wait {
  explicit publish_with_wait(std::int64_t replicas) : opts(waiting_for(replicas)) {}
  babelqueue::redis::options opts;
  d::transport_state st{opts};
  std::string_view value = "body";
  d::publish_op publish{st, "q", std::span<const std::string_view>(&value, 1)};
  d::replicated_publish_op op{publish, opts};
  d::request req;
};

}  // namespace

TEST(RedisWaitReplicasCore, WaitFollowsTheRpushInTheSameRoundTrip) {
  publish_with_wait p(2);
  p.op.compose(p.req, {});
  ASSERT_EQ(p.req.size(), 2u);
  EXPECT_EQ(p.req.payload(),
            "*3\r\n$5\r\nRPUSH\r\n$1\r\nq\r\n$4\r\nbody\r\n"
            "*3\r\n$4\r\nWAIT\r\n$1\r\n2\r\n$3\r\n250\r\n");
}

TEST(RedisWaitReplicasCore, FewerReplicasThanAskedFailTheRoundTyped) {
  publish_with_wait p(2);
  p.op.compose(p.req, {});
  auto pushed = integer_reply(1);
  auto acked = integer_reply(1);
  p.op.on_reply(p.req.meta(0), pushed);
  p.op.on_reply(p.req.meta(1), acked);
  std::optional<babelqueue::error_info> error;
  EXPECT_EQ(p.op.finish(error), d::next_step::done);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code, transport_errc::timeout);
  EXPECT_NE(error->message.find("1 of 2 replicas"), std::string::npos) << error->message;
}

TEST(RedisWaitReplicasCore, EnoughReplicasSucceed) {
  publish_with_wait p(1);
  p.op.compose(p.req, {});
  auto pushed = integer_reply(1);
  auto acked = integer_reply(2);
  p.op.on_reply(p.req.meta(0), pushed);
  p.op.on_reply(p.req.meta(1), acked);
  std::optional<babelqueue::error_info> error;
  EXPECT_EQ(p.op.finish(error), d::next_step::done);
  EXPECT_FALSE(error);
}

TEST(RedisWaitReplicasCore, AResentRoundForgetsTheLastWaitReply) {
  publish_with_wait p(1);
  p.op.compose(p.req, {});
  auto acked = integer_reply(1);
  p.op.on_reply(p.req.meta(1), acked);
  p.op.undo();  // the round did not complete (I/O error): composed again, no WAIT reply yet
  p.req.clear();
  p.op.compose(p.req, {});
  std::optional<babelqueue::error_info> error;
  p.op.finish(error);
  ASSERT_TRUE(error);  // no reply counted from the earlier attempt
  EXPECT_EQ(error->code, transport_errc::timeout);
}

TEST(RedisSentinelCore, FailoverRepliesAreTheOnesOfANodeThatStoppedBeingThePrimary) {
  for (const char* text :
       {"READONLY You can't write against a read only replica.",
        "LOADING Redis is loading the dataset in memory",
        "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
        "UNBLOCKED force unblock from blocking operation, instance state changed (master -> "
        "replica?)"}) {
    EXPECT_TRUE(d::is_failover_reply(text)) << text;
  }
  for (const char* text : {"WRONGTYPE Operation against a key holding the wrong kind of value",
                           "NOSCRIPT No matching script.", "ERR unknown command", "OOM", ""}) {
    EXPECT_FALSE(d::is_failover_reply(text)) << text;
  }
}
