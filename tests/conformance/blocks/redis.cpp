// Block `redis`: payload identity — a publish stores the envelope bytes unchanged (no
// wrapping, no added fields) and a reserve hands back exactly those bytes. Driven through
// the pure binding the redis:// transport uses (include/babelqueue/bindings/redis.hpp).
#include "../manifest.hpp"

#include <babelqueue/bindings/redis.hpp>
#include <babelqueue/codec.hpp>

#include <gtest/gtest.h>

namespace {

namespace redis_binding = babelqueue::bindings::redis;

conformance::register_block redis_block{
    "redis", [](const nlohmann::json& block) {
      const auto& identity = block.at("payload_identity");
      const std::string file = identity.at("envelope_file");
      // The bytes a producer publishes: the fixture's canonical encoding.
      auto env = babelqueue::decode(conformance::read_file(conformance::suite_dir() / file));
      ASSERT_TRUE(env) << env.error().message;
      const std::string body = babelqueue::encode(*env).value();

      auto stored = redis_binding::stored_value(body);
      ASSERT_TRUE(stored);
      EXPECT_EQ(*stored, body) << "produce must store the envelope byte-for-byte";
      auto reserved = redis_binding::unframe(*stored);
      EXPECT_EQ(reserved.body, body) << "reserve must return the element unchanged";
      EXPECT_TRUE(reserved.hdrs.empty());
      EXPECT_FALSE(reserved.framed);
      EXPECT_EQ(redis_binding::ready_key("orders"), "orders");
      EXPECT_EQ(redis_binding::processing_key("orders"), "orders:processing");

      // Out-of-band headers travel in the ADR-0028 frame and never alter the body.
      auto framed = redis_binding::stored_value(
          body, {{"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}});
      ASSERT_TRUE(framed);
      EXPECT_NE(*framed, body);
      auto unframed = redis_binding::unframe(*framed);
      EXPECT_EQ(unframed.body, body);
      EXPECT_EQ(unframed.hdrs.at("traceparent"),
                "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
    }};

}  // namespace
