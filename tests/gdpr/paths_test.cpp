// Sensitive paths: the peers' inventory listing, and the plan that rejects unhonourable marks.
#include <babelqueue/gdpr/sensitive_paths.hpp>

#include <gtest/gtest.h>

namespace gdpr = babelqueue::gdpr;
using babelqueue::json;

namespace {

json spec_schema() {
  return json::parse(R"({
    "type": "object",
    "properties": {
      "order_id": {"type": "integer"},
      "email": {"type": "string", "x-gdpr-sensitive": "email"},
      "profile": {"type": "object", "properties": {
        "full_name": {"type": "string", "x-gdpr-sensitive": true}}},
      "addresses": {"type": "array", "items": {"type": "object", "properties": {
        "line": {"type": "string", "x-gdpr-sensitive": true}}}}
    }})");
}

std::vector<std::string> plan_paths(const json& schema) {
  std::vector<std::string> out;
  const auto plan = gdpr::field_plan::build(schema).value();  // keep the plan alive for the loop
  for (const auto& f : plan.fields()) out.push_back(f.path);
  return out;
}

std::error_code plan_error(const char* schema) {
  return gdpr::field_plan::build(json::parse(schema)).code();
}

}  // namespace

TEST(SensitivePaths, ListsTheSpecExampleSortedWithCategories) {
  const std::vector<gdpr::sensitive_path> expected = {
      {"addresses[].line", ""}, {"email", "email"}, {"profile.full_name", ""}};
  EXPECT_EQ(gdpr::sensitive_paths(spec_schema()), expected);
}

TEST(SensitivePaths, ListsRootNestedArraysAndNestedMarksLikeThePeers) {
  const auto schema = json::parse(R"({"x-gdpr-sensitive": true, "properties": {
    "tags": {"items": {"items": {"x-gdpr-sensitive": "tag"}}},
    "profile": {"x-gdpr-sensitive": true, "properties": {"name": {"x-gdpr-sensitive": " "}}},
    "off": {"x-gdpr-sensitive": false}, "zero": {"x-gdpr-sensitive": 0},
    "empty": {"x-gdpr-sensitive": ""}, "ignored": true}})");
  const std::vector<gdpr::sensitive_path> expected = {
      {"", ""}, {"profile", ""}, {"profile.name", " "}, {"tags[][]", "tag"}};
  EXPECT_EQ(gdpr::sensitive_paths(schema), expected);
  EXPECT_TRUE(gdpr::sensitive_paths(json::array()).empty());
  EXPECT_TRUE(gdpr::sensitive_paths(json(nullptr)).empty());
}

TEST(FieldPlan, CompilesEveryPathForm) {
  EXPECT_EQ(plan_paths(spec_schema()),
            (std::vector<std::string>{"addresses[].line", "email", "profile.full_name"}));
  EXPECT_EQ(plan_paths(json::parse(R"({"properties": {"m": {"items": {"items": {"items": {
              "properties": {"x": {"x-gdpr-sensitive": true}}}}}}}})")),
            (std::vector<std::string>{"m[][][].x"}));
  const auto plan =
      gdpr::field_plan::build(
          json::parse(R"({"properties": {"a": {"items": {"items": {"x-gdpr-sensitive": true}}}}})"))
          .value();
  ASSERT_EQ(plan.fields().size(), 1u);
  const std::vector<gdpr::path_step> steps = {{"a"}, {std::nullopt}, {std::nullopt}};
  EXPECT_EQ(plan.fields()[0].steps, steps);
  EXPECT_EQ(plan.fields()[0].path, "a[][]");
}

TEST(FieldPlan, AMarkedContainerSubsumesItsMarkedDescendants) {
  EXPECT_EQ(plan_paths(json::parse(R"({"properties": {
      "profile": {"x-gdpr-sensitive": true, "properties": {
        "full_name": {"x-gdpr-sensitive": true},
        "odd": {"anyOf": [{"x-gdpr-sensitive": true}]}}},
      "list": {"x-gdpr-sensitive": "pii", "items": {"x-gdpr-sensitive": true}}}})")),
            (std::vector<std::string>{"list", "profile"}));
}

TEST(FieldPlan, NullSchemaIsAnEmptyPlan) {
  EXPECT_TRUE(gdpr::field_plan::build(json(nullptr)).value().empty());
  EXPECT_TRUE(gdpr::field_plan::build(json::object()).value().empty());
}

TEST(FieldPlan, RejectsMarksThatWouldLeaveAFieldInClear) {
  using gdpr::errc;
  // Not a schema.
  EXPECT_EQ(plan_error("[]"), errc::invalid_schema);
  EXPECT_EQ(plan_error("\"x\""), errc::invalid_schema);
  // Root mark / root items: data is always an object.
  EXPECT_EQ(plan_error(R"({"x-gdpr-sensitive": true})"), errc::invalid_schema);
  EXPECT_EQ(plan_error(R"({"items": {"properties": {"a": {"x-gdpr-sensitive": true}}}})"),
            errc::invalid_schema);
  // Mark values the peers silently read as "unmarked".
  for (const char* v : {"1", "0", "null", "\"\"", "{}", "[true]"}) {
    const std::string s = std::string(R"({"properties": {"a": {"x-gdpr-sensitive": )") + v + "}}}";
    EXPECT_EQ(plan_error(s.c_str()), errc::invalid_schema) << v;
  }
  // Marks under keywords no SDK's walk follows.
  for (const char* s : {R"({"properties": {"a": {"anyOf": [{"x-gdpr-sensitive": true}]}}})",
                        R"({"oneOf": [{"properties": {"a": {"x-gdpr-sensitive": true}}}]})",
                        R"({"allOf": [{"properties": {"a": {"x-gdpr-sensitive": true}}}]})",
                        R"({"not": {"x-gdpr-sensitive": true}})",
                        R"({"additionalProperties": {"x-gdpr-sensitive": true}})",
                        R"({"patternProperties": {"^e": {"x-gdpr-sensitive": true}}})",
                        R"({"properties": {"t": {"items": [{"x-gdpr-sensitive": true}]}}})",
                        R"({"definitions": {"pii": {"x-gdpr-sensitive": true}}})",
                        R"({"$defs": {"pii": {"properties": {"a": {"x-gdpr-sensitive": "x"}}}}})",
                        R"({"if": {"x-gdpr-sensitive": true}})"}) {
    auto r = gdpr::field_plan::build(json::parse(s));
    ASSERT_FALSE(r) << s;
    EXPECT_EQ(r.code(), errc::invalid_schema) << s;
    EXPECT_FALSE(r.error().path.empty()) << s;
  }
  // Property names the peers' dotted paths cannot address.
  EXPECT_EQ(plan_error(R"({"properties": {"a.b": {"x-gdpr-sensitive": true}}})"),
            errc::invalid_schema);
  EXPECT_EQ(plan_error(R"({"properties": {"a[]": {"x-gdpr-sensitive": true}}})"),
            errc::invalid_schema);
  EXPECT_EQ(plan_error(R"({"properties": {"": {"x-gdpr-sensitive": true}}})"),
            errc::invalid_schema);
  EXPECT_EQ(
      plan_error(R"({"properties": {"x.y": {"properties": {"z": {"x-gdpr-sensitive": true}}}}})"),
      errc::invalid_schema);
  // ...but such names are fine off the sensitive paths, and `false` marks are fine anywhere.
  EXPECT_TRUE(gdpr::field_plan::build(json::parse(R"({"properties": {
      "a.b": {"type": "string"}, "c": {"x-gdpr-sensitive": false},
      "d": {"anyOf": [{"x-gdpr-sensitive": false}]}, "e": {"x-gdpr-sensitive": true}}})")));
}

TEST(FieldPlan, ErrorNamesTheSchemaLocation) {
  auto r = gdpr::field_plan::build(
      json::parse(R"({"properties": {"a": {"properties": {"b": {"x-gdpr-sensitive": 1}}}}})"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().path, "#/properties/a/properties/b");
  EXPECT_THROW((void)r.value(), babelqueue::error);
}
