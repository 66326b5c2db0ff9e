// detail::key_slot (src/redis/cluster_slot.hpp) against `redis-cli CLUSTER KEYSLOT`, the
// redirect parser, and the slot check's message. No server needed: the expected slots were
// read from redis-server 7.0.15 (`redis-cli -p <cluster node> CLUSTER KEYSLOT <key>`).
#include "redis/cluster_slot.hpp"

#include "redis/cluster_topology.hpp"
#include "redis/router.hpp"

#include <babelqueue/bindings/redis.hpp>

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace {

using babelqueue::transport_errc;
namespace d = babelqueue::redis::detail;

TEST(RedisClusterSlot, MatchesClusterKeyslot) {
  const std::vector<std::pair<std::string, int>> keyslot = {
      {"123456789", 12739},
      {"orders", 105},
      {"{orders}", 105},
      {"{orders}:processing", 105},
      {"orders:processing", 6598},
      {"orders:processing:deadlines", 828},
      {"foo{}{bar}", 8363},     // `{}` is no tag: the whole key
      {"foo{{bar}}zap", 4015},  // tag = "{bar"
      {"foo{bar}{zap}", 5061},  // the first tag only
      {"{}", 15257},
      {"a{", 14311},
      {"{a", 10276},
      {"}{x}", 16287},
      {"x{y}z", 12222},
  };
  for (const auto& [key, slot] : keyslot) {
    EXPECT_EQ(d::key_slot(key), slot) << key;
    // The public binding (bindings/redis.hpp) is the implementation the transport routes by.
    EXPECT_EQ(babelqueue::bindings::redis::key_slot(key), slot) << key;
  }
  EXPECT_EQ(d::crc16_xmodem("123456789"), 0x31C3);
  EXPECT_EQ(d::key_slot(""), 0);
  EXPECT_EQ(d::hash_tag_of("queues:{orders}:reserved"), "orders");
}

TEST(RedisClusterSlot, ParsesRedirects) {
  using kind = d::cluster_redirect::kind;
  auto moved = d::parse_redirect("MOVED 3999 127.0.0.1:6381");
  ASSERT_TRUE(moved);
  EXPECT_EQ(moved->what, kind::moved);
  EXPECT_EQ(moved->slot, 3999);
  EXPECT_EQ(moved->target.host, "127.0.0.1");
  EXPECT_EQ(moved->target.port, 6381);
  auto ask = d::parse_redirect("ASK 16383 [::1]:7000");
  ASSERT_TRUE(ask);
  EXPECT_EQ(ask->what, kind::ask);
  EXPECT_EQ(ask->target.host, "::1");
  auto same_host = d::parse_redirect("MOVED 1 :7001");
  ASSERT_TRUE(same_host);
  EXPECT_EQ(same_host->target.host, "");
  EXPECT_EQ(d::parse_redirect("TRYAGAIN Multiple keys request during rehashing of slot")->what,
            kind::try_again);
  EXPECT_EQ(d::parse_redirect("CLUSTERDOWN The cluster is down")->what, kind::cluster_down);
  for (const char* bad : {"MOVED", "MOVED x 1.2.3.4:5", "MOVED 16384 h:1", "ASK 1 host",
                          "ASK 1 h:0", "ASK 1 h:99999", "WRONGTYPE x", ""}) {
    EXPECT_FALSE(d::parse_redirect(bad)) << bad;
  }
}

TEST(RedisClusterSlot, QueueSlotNamesTheSlotsAndTheHashTag) {
  auto ok = d::queue_slot("{orders}", ":processing");
  ASSERT_TRUE(ok);
  EXPECT_EQ(*ok, 105);
  auto bad = d::queue_slot("orders", ":processing");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.code(), transport_errc::invalid_argument);
  const std::string& m = bad.error().message;
  for (const char* part :
       {"'orders' 105", "'orders:processing' 6598", "'orders:processing:deadlines' 828",
        "'orders:scheduled' 9282", "hash tag", "'{orders}'"}) {
    EXPECT_NE(m.find(part), std::string::npos) << part << " in: " << m;
  }
}

}  // namespace
