// Block `kafka`: the bq- record-header projection every producer emits
// (`property_projection`: UTF-8 string headers, value byte-identical, timestamp =
// meta.created_at) and the authoritative bq-attempts reconciliation
// (`attempts_reconciliation`). Driven through the pure binding the kafka:// transport uses
// (include/babelqueue/bindings/kafka.hpp).
#include "../manifest.hpp"

#include <babelqueue/bindings/kafka.hpp>
#include <babelqueue/codec.hpp>

#include <gtest/gtest.h>

namespace {

namespace bk = babelqueue::bindings::kafka;

conformance::register_block kafka_block{
    "kafka", [](const nlohmann::json& block) {
      const auto& projection = block.at("property_projection");
      const std::string file = projection.at("envelope_file");
      const std::string original = conformance::read_file(conformance::suite_dir() / file);
      auto env = babelqueue::decode(original);
      ASSERT_TRUE(env) << env.error().message;
      const std::string body = babelqueue::encode(*env).value();

      const bk::record_projection p = bk::project(body);
      const auto& want = projection.at("headers");
      for (const auto& [name, value] : want.items()) {
        const std::string* got = p.header(name);
        ASSERT_NE(got, nullptr) << "missing header " << name;
        EXPECT_EQ(*got, value.get<std::string>()) << name;
      }
      EXPECT_EQ(p.headers.size(), want.size()) << "no extra headers";
      EXPECT_EQ(p.timestamp_ms, env->created_at()) << "timestamp mirrors meta.created_at";

      for (const auto& c : block.at("attempts_reconciliation").at("cases")) {
        const std::optional<std::int64_t> header =
            c.at("header_attempts").is_null()
                ? std::nullopt
                : bk::parse_attempts(std::to_string(c.at("header_attempts").get<std::int64_t>()));
        EXPECT_EQ(bk::reconcile_attempts(c.at("body_attempts").get<std::int64_t>(), header),
                  c.at("expected_attempts").get<std::int64_t>())
            << c.at("name").get<std::string>();
      }
    }};

}  // namespace
