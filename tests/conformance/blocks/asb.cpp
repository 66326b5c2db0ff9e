// Block `asb`: the native Service Bus projection (`property_projection`: Subject = URN,
// CorrelationId = trace_id, MessageId = meta.id, ContentType, and the bq- application
// properties NATIVE-typed — numbers stay numbers) and `attempts = max(body, DeliveryCount − 1)`
// with the 1-based DeliveryCount (`attempts_reconciliation`). Driven through the pure binding
// (include/babelqueue/bindings/asb.hpp).
#include "../manifest.hpp"

#include <babelqueue/bindings/asb.hpp>
#include <babelqueue/codec.hpp>

#include <gtest/gtest.h>

#include <variant>

namespace {

namespace asb_binding = babelqueue::bindings::asb;

conformance::register_block asb_block{
    "asb", [](const nlohmann::json& block) {
      const auto& projection = block.at("property_projection");
      const std::string file = projection.at("envelope_file");
      auto env = babelqueue::decode(conformance::read_file(conformance::suite_dir() / file));
      ASSERT_TRUE(env) << env.error().message;
      const std::string body = babelqueue::encode(*env).value();

      const asb_binding::message_projection p = asb_binding::project(body);
      for (const auto& [name, value] : projection.at("message").items()) {
        const std::string expected = value.get<std::string>();
        if (name == "subject") {
          EXPECT_EQ(p.subject.value_or("<unset>"), expected);
        } else if (name == "correlation_id") {
          EXPECT_EQ(p.correlation_id.value_or("<unset>"), expected);
        } else if (name == "message_id") {
          EXPECT_EQ(p.message_id.value_or("<unset>"), expected);
        } else if (name == "content_type") {
          EXPECT_EQ(p.content_type, expected);
        } else {
          ADD_FAILURE() << "message field not covered by the projection: " << name;
        }
      }
      const auto& want = projection.at("application_properties");
      for (const auto& [name, value] : want.items()) {
        const asb_binding::property_value* got = p.property(name);
        ASSERT_NE(got, nullptr) << "missing application property " << name;
        if (value.is_number_integer()) {
          // Native-typed: an AMQP integer (int or long), never a string.
          ASSERT_FALSE(std::holds_alternative<std::string>(*got)) << name << " must be an integer";
          EXPECT_EQ(asb_binding::integer_of(*got), value.get<std::int64_t>()) << name;
        } else {
          ASSERT_TRUE(std::holds_alternative<std::string>(*got)) << name << " must be a string";
          EXPECT_EQ(std::get<std::string>(*got), value.get<std::string>()) << name;
        }
      }
      EXPECT_EQ(p.application_properties.size(), want.size()) << "no extra application properties";
      EXPECT_FALSE(p.scheduled_enqueue_time_ms) << "no schedule on an undelayed publish";

      // Out-of-band headers share the application properties as strings; a contract name wins.
      const asb_binding::message_projection q = asb_binding::project(
          body, {{"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
                 {"bq-schema-version", "9"}});
      ASSERT_NE(q.property("traceparent"), nullptr);
      EXPECT_EQ(std::get<std::string>(*q.property("traceparent")),
                "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
      EXPECT_EQ(asb_binding::integer_of(*q.property("bq-schema-version")), 1);

      for (const auto& c : block.at("attempts_reconciliation").at("cases")) {
        EXPECT_EQ(asb_binding::reconcile_attempts(c.at("body_attempts").get<std::int64_t>(),
                                                  c.at("delivery_count").get<std::int64_t>()),
                  c.at("expected_attempts").get<std::int64_t>())
            << c.at("name").get<std::string>();
      }
    }};

}  // namespace
