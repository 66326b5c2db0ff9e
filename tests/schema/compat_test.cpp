// The compat lint: bqschema's rules and the stricter ones (full outputs: registry/expected).
#include <babelqueue/schema/compat.hpp>

#include <gtest/gtest.h>

namespace schema = babelqueue::schema;

namespace {

std::vector<std::string> diff(const char* a, const char* b) {
  return schema::breaking_changes(schema::document::parse(a).value(),
                                  schema::document::parse(b).value());
}
using strings = std::vector<std::string>;

}  // namespace

TEST(Compat, AddingAnOptionalPropertyIsCompatible) {
  EXPECT_TRUE(
      diff(R"({"type":"object","properties":{"a":{"type":"string"}}})",
           R"({"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}}})")
          .empty());
}

TEST(Compat, RemovingOrRenamingIsBreakingEvenWhenOpen) {
  EXPECT_EQ(diff(R"({"type":"object","properties":{"a":{},"b":{}}})",
                 R"({"type":"object","properties":{"b":{},"c":{}}})"),
            strings{"a: property removed"});
  EXPECT_EQ(diff(R"({"type":"object","properties":{"a":{}}})",
                 R"({"type":"object","properties":{},"additionalProperties":false})"),
            (strings{"additionalProperties tightened to false",
                     "property \"a\" removed while additionalProperties is false"}));
}

TEST(Compat, RetypeConstRequiredAndNesting) {
  EXPECT_EQ(diff(R"({"properties":{"a":{"type":"integer","minimum":1}}})",
                 R"({"properties":{"a":{"type":"number","minimum":5}}})"),
            strings{"a: type changed \"integer\" → \"number\""});  // stops descending
  EXPECT_EQ(diff(R"({"const":1})", R"({"const":2})"), strings{"const changed 1 → 2"});
  EXPECT_TRUE(diff(R"({"const":1})", R"({"const":1.0})").empty());
  EXPECT_TRUE(diff(R"({"const":1})", R"({})").empty());
  EXPECT_EQ(diff(R"({"required":["a"]})", R"({"required":["a","b"]})"),
            strings{"property \"b\" is now required"});
  EXPECT_EQ(diff(R"({"items":{"properties":{"q":{"minLength":1}}}})",
                 R"({"items":{"properties":{"q":{"minLength":2}}}})"),
            strings{"[].q: minLength tightened"});
  EXPECT_EQ(diff(R"({"enum":[1,"a"]})", R"({"enum":[1.0]})"), strings{"enum value a removed"});
}

TEST(Compat, GdprMarksAreCompatNeutral) {
  EXPECT_TRUE(
      diff(
          R"({"properties":{"e":{"type":"string"}}})",
          R"({"x-gdpr-sensitive":true,"properties":{"e":{"type":"string","x-gdpr-sensitive":"email"}}})")
          .empty());
}
