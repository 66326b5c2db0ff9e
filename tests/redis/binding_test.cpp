// Pure Redis binding (include/babelqueue/bindings/redis.hpp): keys, frame, slots.
#include "support/files.hpp"

#include <babelqueue/bindings/redis.hpp>
#include <babelqueue/codec.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace br = babelqueue::bindings::redis;

namespace {

using babelqueue::test::read_file;

const std::string k_envelope =
    R"({"job":"urn:babel:orders:created","trace_id":"t-1","data":{"a":1},"meta":{"id":"x","schema_version":1},"attempts":0})";

}  // namespace

TEST(RedisBinding, KeyNames) {
  EXPECT_EQ(br::ready_key("orders"), "orders");
  EXPECT_EQ(br::processing_key("orders"), "orders:processing");
  EXPECT_EQ(br::processing_key("orders", ":inflight"), "orders:inflight");
  EXPECT_EQ(br::deadlines_key("orders"), "orders:processing:deadlines");
  EXPECT_EQ(br::reconcile_attempts(2), 2);
}

TEST(RedisBinding, PayloadIdentityWithoutHeaders) {
  // Conformance manifest redis.payload_identity: the element IS the envelope, byte-for-byte.
  std::string fixture =
      read_file(std::string(BABELQUEUE_CONFORMANCE_DIR) + "/fixtures/order-created.json");
  ASSERT_FALSE(fixture.empty());
  auto stored = br::stored_value(fixture);
  ASSERT_TRUE(stored);
  EXPECT_EQ(*stored, fixture);
  auto back = br::unframe(*stored);
  EXPECT_FALSE(back.framed);
  EXPECT_EQ(back.body, fixture);
  EXPECT_TRUE(back.hdrs.empty());
}

TEST(RedisBinding, BlankHeadersDoNotFrame) {
  auto stored =
      br::stored_value(k_envelope, {{"traceparent", ""}, {"", "x"}, {"  ", "y"}, {"k", " \t"}});
  ASSERT_TRUE(stored);
  EXPECT_EQ(*stored, k_envelope);
}

TEST(RedisBinding, FrameLayoutAndRoundTrip) {
  auto stored =
      br::stored_value(k_envelope, {{"traceparent", "00-abc-def-01"}, {"bq-replay-bypass", "1"}});
  ASSERT_TRUE(stored);
  // Key order __bq_frame, headers, body; header keys sorted; body a JSON string.
  EXPECT_EQ(
      stored->rfind(
          R"({"__bq_frame":1,"headers":{"bq-replay-bypass":"1","traceparent":"00-abc-def-01"},"body":")",
          0),
      0u)
      << *stored;
  auto back = br::unframe(*stored);
  EXPECT_TRUE(back.framed);
  EXPECT_EQ(back.body, k_envelope);
  ASSERT_EQ(back.hdrs.size(), 2u);
  EXPECT_EQ(back.hdrs.at("traceparent"), "00-abc-def-01");
}

TEST(RedisBinding, FrameEscapesPerD2AndKeepsUnicode) {
  std::string body = "{\"job\":\"u\",\"s\":\"caf\xC3\xA9 \xE2\x80\xA8 </x>\"}";
  auto stored = br::stored_value(body, {{"h", "v"}});
  ASSERT_TRUE(stored);
  EXPECT_NE(stored->find("\\u2028"), std::string::npos);
  EXPECT_NE(stored->find("caf\xC3\xA9"), std::string::npos);  // raw UTF-8
  EXPECT_EQ(br::unframe(*stored).body, body);
}

TEST(RedisBinding, ReadsPeerFrames) {
  // Go: sorted keys, HTML-escaped body; Python: insertion order, raw UTF-8.
  std::string go =
      R"({"__bq_frame":1,"headers":{"a":"1","b":"2"},"body":"{\"x\":\"\u003cy\u003e\"}"})";
  auto g = br::unframe(go);
  EXPECT_TRUE(g.framed);
  EXPECT_EQ(g.body, R"({"x":"<y>"})");
  std::string py = R"({"__bq_frame":1,"headers":{"b":"2","a":"1"},"body":"e"})";
  auto p = br::unframe(py);
  EXPECT_TRUE(p.framed);
  EXPECT_EQ(p.hdrs.size(), 2u);
  // No headers member at all is still a frame; non-string header values are skipped.
  EXPECT_TRUE(br::unframe(R"({"__bq_frame":1,"body":"e"})").framed);
  auto mixed = br::unframe(R"({"__bq_frame":1,"headers":{"a":1,"b":"x","c":""},"body":"e"})");
  EXPECT_TRUE(mixed.framed);
  ASSERT_EQ(mixed.hdrs.size(), 1u);
  EXPECT_EQ(mixed.hdrs.at("b"), "x");
}

TEST(RedisBinding, LookAlikesAreDeliveredVerbatim) {
  const std::string cases[] = {
      "",
      "not json",
      std::string("\xff\xfe\x00garbage", 10),
      R"({"__bq_frame":1,"headers":{},"body":123})",           // body not a string
      R"({"__bq_frame":1,"headers":{})",                       // truncated
      R"({"__bq_frame":2,"headers":{},"body":"e"})",           // unknown version
      R"({"__bq_frame":0,"headers":{},"body":"e"})",           // falsy sentinel
      R"({"__bq_frame":true,"headers":{},"body":"e"})",        // not an integer
      R"({"__bq_frame":"1","headers":{},"body":"e"})",         // string sentinel
      R"({"__bq_frame":1,"headers":[],"body":"e"})",           // headers not an object
      R"({"__bq_frame":1,"headers":{},"body":"e"} trailing)",  // trailing data
      R"([{"__bq_frame":1,"body":"e"}])",                      // not an object
      R"({"job":"u","data":{"__bq_frame":1,"body":"e"}})",     // sentinel nested in data
      " {\"__bq_frame\":1,\"body\":\"e\"}",                    // leading white space
  };
  for (const std::string& v : cases) {
    auto r = br::unframe(v);
    EXPECT_FALSE(r.framed) << v;
    EXPECT_EQ(r.body, v);
    EXPECT_TRUE(r.hdrs.empty());
  }
}

TEST(RedisBinding, InvalidUtf8BodyCannotBeFramed) {
  auto r = br::stored_value(std::string("\xff\xfe", 2), {{"h", "v"}});
  EXPECT_FALSE(r);
  EXPECT_EQ(r.code(), babelqueue::errc::invalid_utf8);
}

TEST(RedisBinding, ClusterSlots) {
  // Known Redis Cluster slots (CLUSTER KEYSLOT): "foo" = 12182, "{user1000}.following" = 3443.
  EXPECT_EQ(br::key_slot("foo"), 12182);
  EXPECT_EQ(br::key_slot("{user1000}.following"), br::key_slot("user1000"));
  EXPECT_EQ(br::key_slot("user1000"), 3443);
  EXPECT_EQ(br::hash_tag("{}x"), "{}x");
  EXPECT_EQ(br::hash_tag("a{b}c{d}"), "b");
  EXPECT_TRUE(br::cluster_safe("{orders}"));
  EXPECT_TRUE(br::cluster_safe("queues:{orders}"));
  EXPECT_FALSE(br::cluster_safe("orders"));
}
