// Block `pulsar`: the string→string bq- property projection every producer emits
// (`property_projection`: payload byte-identical, numbers stringified) and
// `attempts = max(body, RedeliveryCount)` with no −1 (`attempts_reconciliation`). Driven
// through the pure binding the pulsar:// transport uses (include/babelqueue/bindings/pulsar.hpp).
#include "../manifest.hpp"

#include <babelqueue/bindings/pulsar.hpp>
#include <babelqueue/codec.hpp>

#include <gtest/gtest.h>

namespace {

namespace bp = babelqueue::bindings::pulsar;

conformance::register_block pulsar_block{
    "pulsar", [](const nlohmann::json& block) {
      const auto& projection = block.at("property_projection");
      const std::string file = projection.at("envelope_file");
      auto env = babelqueue::decode(conformance::read_file(conformance::suite_dir() / file));
      ASSERT_TRUE(env) << env.error().message;
      const std::string body = babelqueue::encode(*env).value();

      const bp::message_projection p = bp::project(body);
      const auto& want = projection.at("properties");
      for (const auto& [name, value] : want.items()) {
        const std::string* got = p.property(name);
        ASSERT_NE(got, nullptr) << "missing property " << name;
        EXPECT_EQ(*got, value.get<std::string>()) << name;
      }
      EXPECT_EQ(p.properties.size(), want.size()) << "no extra properties";
      EXPECT_EQ(p.event_time_ms, env->created_at()) << "event time mirrors meta.created_at";

      for (const auto& c : block.at("attempts_reconciliation").at("cases")) {
        EXPECT_EQ(bp::reconcile_attempts(c.at("body_attempts").get<std::int64_t>(),
                                         c.at("redelivery_count").get<std::int64_t>()),
                  c.at("expected_attempts").get<std::int64_t>())
            << c.at("name").get<std::string>();
      }
    }};

}  // namespace
