// Block `payload_schema`: the per-URN data validator agrees with every SDK on `valid`.
#include "../manifest.hpp"

#include <babelqueue/schema/conformance.hpp>

#include <gtest/gtest.h>

namespace {

conformance::register_block payload_schema_block{
    "payload_schema", [](const nlohmann::json& block) {
      auto results = babelqueue::schema::run_payload_schema(babelqueue::json::parse(block.dump()));
      ASSERT_TRUE(results) << results.error().message;
      ASSERT_FALSE(results->empty());
      for (const auto& r : *results) {
        EXPECT_TRUE(r.passed()) << r.name << ": expected valid=" << r.expected_valid << ", got "
                                << r.valid;
      }
    }};

}  // namespace
