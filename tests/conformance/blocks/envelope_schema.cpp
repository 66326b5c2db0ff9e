// Producer output against the canonical envelope JSON Schema, with "cpp" added to both
// `lang` enums (decision D1). The unmodified schema refusing "cpp" is asserted too, so the
// day the shared schema adds it this test says so.
#include "../manifest.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/dead_letter.hpp>
#include <babelqueue/schema/document.hpp>

#include <gtest/gtest.h>

namespace {

using babelqueue::json;

json canonical_schema() {
  return json::parse(
      conformance::read_file(conformance::suite_dir() / "schema" / "message-envelope.schema.json"));
}

json schema_with_cpp() {
  json s = canonical_schema();
  s["properties"]["meta"]["properties"]["lang"]["enum"].push_back("cpp");
  s["properties"]["dead_letter"]["properties"]["lang"]["enum"].push_back("cpp");
  return s;
}

void expect_valid(const babelqueue::schema::document& schema, const std::string& body) {
  auto report = schema.validate(babelqueue::parse_json(body).value());
  std::string why;
  for (const auto& v : report.violations()) why += v.text() + "; ";
  EXPECT_TRUE(report.ok()) << body << "\n" << why;
}

TEST(EnvelopeSchema, ProducerOutputValidatesWithCppInTheLangEnums) {
  auto schema = babelqueue::schema::document::from_json(schema_with_cpp());
  ASSERT_TRUE(schema) << schema.error().message;
  auto env =
      babelqueue::make("urn:babel:orders:created",
                       {{"order_id", 1042}, {"amount", 99.9}, {"tags", {"a"}}}, {"orders", ""})
          .value();
  expect_valid(*schema, babelqueue::encode(env).value());
  env.set_attempts(3);
  auto dl = babelqueue::annotate(env, babelqueue::dead_letter_reason::failed, "orders", 3, "boom",
                                 "std::runtime_error");
  expect_valid(*schema, babelqueue::encode(dl).value());
  auto unknown =
      babelqueue::annotate(env, babelqueue::dead_letter_reason::unknown_urn, "orders", 0);
  expect_valid(*schema, babelqueue::encode(unknown).value());
  // Re-emitting a valid fixture never changes its schema verdict (the urn-alias fixture
  // fails `required: job` before and after: a relay keeps the alias, D4).
  for (const auto& c : conformance::manifest().at("cases")) {
    if (!c.at("valid").get<bool>()) continue;
    const std::string original =
        conformance::read_file(conformance::suite_dir() / c.at("file").get<std::string>());
    auto fixture = babelqueue::decode(original);
    ASSERT_TRUE(fixture);
    bool before = schema->validate(babelqueue::parse_json(original).value()).ok();
    bool after =
        schema->validate(babelqueue::parse_json(babelqueue::encode(*fixture).value()).value()).ok();
    EXPECT_EQ(before, after) << c.at("name");
  }
}

TEST(EnvelopeSchema, FrozenSchemaStillListsSixLanguages) {
  auto frozen = babelqueue::schema::document::from_json(canonical_schema());
  ASSERT_TRUE(frozen);
  auto env = babelqueue::make("urn:babel:orders:created", json::object()).value();
  auto report = frozen->validate(babelqueue::parse_json(babelqueue::encode(env).value()).value());
  EXPECT_FALSE(report.ok()) << "the shared schema now accepts meta.lang \"cpp\": drop the D1 patch";
}

}  // namespace
