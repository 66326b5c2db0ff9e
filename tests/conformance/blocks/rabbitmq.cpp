// Block `rabbitmq`: the native AMQP 0-9-1 property projection every producer emits
// (`property_projection`): typed headers, identity properties, body byte-identical. Driven
// through the pure binding the amqp:// transport publishes with
// (include/babelqueue/bindings/rabbitmq.hpp).
#include "../manifest.hpp"

#include <babelqueue/bindings/rabbitmq.hpp>
#include <babelqueue/codec.hpp>

#include <gtest/gtest.h>

#include <variant>

namespace {

namespace rabbitmq_binding = babelqueue::bindings::rabbitmq;

conformance::register_block rabbitmq_block{
    "rabbitmq", [](const nlohmann::json& block) {
      const auto& projection = block.at("property_projection");
      const std::string file = projection.at("envelope_file");
      auto env = babelqueue::decode(conformance::read_file(conformance::suite_dir() / file));
      ASSERT_TRUE(env) << env.error().message;
      const std::string body = babelqueue::encode(*env).value();

      const rabbitmq_binding::properties p = rabbitmq_binding::project(body);
      const auto& want = projection.at("properties");
      for (const auto& [name, value] : want.items()) {
        const std::string expected = value.get<std::string>();
        if (name == "type") {
          EXPECT_EQ(p.type.value_or("<unset>"), expected);
        } else if (name == "correlation_id") {
          EXPECT_EQ(p.correlation_id.value_or("<unset>"), expected);
        } else if (name == "message_id") {
          EXPECT_EQ(p.message_id.value_or("<unset>"), expected);
        } else if (name == "app_id") {
          EXPECT_EQ(p.app_id, expected);
        } else if (name == "content_type") {
          EXPECT_EQ(p.content_type, expected);
        } else {
          ADD_FAILURE() << "property not covered by the projection: " << name;
        }
      }
      for (const auto& [name, value] : projection.at("headers").items()) {
        const rabbitmq_binding::header_value* got = p.header(name);
        ASSERT_NE(got, nullptr) << "missing header " << name;
        if (value.is_number_integer()) {
          // Native-typed: an integer stays an integer, never a string.
          ASSERT_TRUE(std::holds_alternative<std::int64_t>(*got)) << name << " must be an integer";
          EXPECT_EQ(std::get<std::int64_t>(*got), value.get<std::int64_t>()) << name;
        } else {
          ASSERT_TRUE(std::holds_alternative<std::string>(*got)) << name << " must be a string";
          EXPECT_EQ(std::get<std::string>(*got), value.get<std::string>()) << name;
        }
      }
      EXPECT_EQ(p.headers.size(), projection.at("headers").size()) << "no extra headers";
      EXPECT_EQ(p.delivery_mode, 2) << "persistent";
      EXPECT_EQ(p.content_encoding, "utf-8");

      // Out-of-band headers share the table; a contract header always wins a collision.
      const rabbitmq_binding::properties q = rabbitmq_binding::project(
          body, {{"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
                 {"x-attempts", "9"}});
      ASSERT_NE(q.header("traceparent"), nullptr);
      EXPECT_EQ(std::get<std::string>(*q.header("traceparent")),
                "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
      EXPECT_EQ(std::get<std::int64_t>(*q.header("x-attempts")), 0);
    }};

}  // namespace
