// The conformance manifest's `payload_schema` block, read in place.
#include <babelqueue/codec.hpp>
#include <babelqueue/schema/conformance.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace bq = babelqueue;
namespace schema = babelqueue::schema;

TEST(PayloadSchemaConformance, EveryCaseAgrees) {
  std::ifstream in(std::string(BABELQUEUE_CONFORMANCE_DIR) + "/manifest.json", std::ios::binary);
  ASSERT_TRUE(in) << "conformance manifest not found under " << BABELQUEUE_CONFORMANCE_DIR;
  std::stringstream text;
  text << in.rdbuf();
  auto manifest = bq::parse_json(text.str()).value();
  ASSERT_TRUE(manifest.contains("payload_schema"));
  auto results = schema::run_payload_schema(manifest["payload_schema"]).value();
  ASSERT_EQ(results.size(), 7u);
  for (const auto& r : results) {
    EXPECT_TRUE(r.passed()) << r.name << ": expected valid=" << r.expected_valid << ", got "
                            << r.details.summary();
    if (!r.valid) {
      ASSERT_NE(r.details.first(), nullptr);
    }
  }
}

TEST(PayloadSchemaConformance, MalformedBlockIsATypedError) {
  EXPECT_EQ(schema::run_payload_schema(bq::json::array()).code(), schema::errc::invalid_registry);
  EXPECT_EQ(schema::run_payload_schema(bq::json{{"schema", bq::json::object()}}).code(),
            schema::errc::invalid_registry);
  EXPECT_EQ(
      schema::run_payload_schema(bq::json{{"schema", bq::json::object()},
                                          {"cases", bq::json::array({bq::json{{"name", "x"}}})}})
          .code(),
      schema::errc::invalid_registry);
}
