// Block `artemis`: the AMQP 1.0 projection a JMS peer reads (`property_projection`: the
// x-opt-jms-type annotation = URN, correlation-id = trace_id, creation-time =
// meta.created_at, the string-valued bq_ application properties, body byte-identical) and
// `attempts = max(body, delivery-count)` with the 0-based AMQP delivery-count
// (`attempts_reconciliation`). Driven through the pure binding
// (include/babelqueue/bindings/artemis.hpp).
#include "../manifest.hpp"

#include <babelqueue/bindings/artemis.hpp>
#include <babelqueue/codec.hpp>

#include <gtest/gtest.h>

#include <variant>

namespace {

namespace ba = babelqueue::bindings::artemis;

conformance::register_block artemis_block{
    "artemis", [](const nlohmann::json& block) {
      const auto& projection = block.at("property_projection");
      const std::string file = projection.at("envelope_file");
      auto env = babelqueue::decode(conformance::read_file(conformance::suite_dir() / file));
      ASSERT_TRUE(env) << env.error().message;
      const std::string body = babelqueue::encode(*env).value();

      const ba::message_projection p = ba::project(body);
      const std::string annotation = projection.at("jms_type_annotation");
      const ba::annotation_value* jms_type = p.annotation(annotation);
      ASSERT_NE(jms_type, nullptr) << "missing annotation " << annotation;
      ASSERT_TRUE(std::holds_alternative<std::string>(*jms_type))
          << annotation << " must be a string";
      EXPECT_EQ(std::get<std::string>(*jms_type), projection.at("jms_type").get<std::string>());
      EXPECT_EQ(p.annotations.size(), 1U) << "no other annotation on an undelayed publish";
      EXPECT_EQ(p.correlation_id.value_or("<unset>"),
                projection.at("correlation_id").get<std::string>());
      EXPECT_EQ(p.creation_time_ms, env->created_at()) << "creation-time mirrors meta.created_at";

      const auto& want = projection.at("properties");
      for (const auto& [name, value] : want.items()) {
        const std::string* got = p.property(name);
        ASSERT_NE(got, nullptr) << "missing application property " << name;
        // String-valued, always (JMS setStringProperty parity).
        EXPECT_EQ(*got, value.get<std::string>()) << name;
      }
      EXPECT_EQ(p.application_properties.size(), want.size()) << "no extra application properties";

      // Out-of-band headers share the application properties; a contract name always wins.
      const ba::message_projection q = ba::project(
          body, {{"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
                 {"bq_attempts", "9"}});
      ASSERT_NE(q.property("traceparent"), nullptr);
      EXPECT_EQ(*q.property("traceparent"),
                "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
      EXPECT_EQ(*q.property("bq_attempts"), "0");

      for (const auto& c : block.at("attempts_reconciliation").at("cases")) {
        EXPECT_EQ(ba::reconcile_attempts(c.at("body_attempts").get<std::int64_t>(),
                                         c.at("delivery_count").get<std::int64_t>()),
                  c.at("expected_attempts").get<std::int64_t>())
            << c.at("name").get<std::string>();
      }
    }};

}  // namespace
