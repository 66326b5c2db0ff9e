// The registry-side helpers: PII-name audit and masking (bqschema `gdpr` semantics).
#include <babelqueue/gdpr/audit.hpp>

#include <gtest/gtest.h>

namespace gdpr = babelqueue::gdpr;
using babelqueue::json;

TEST(NamePattern, DefaultIsCaseInsensitiveSubstring) {
  const auto p = gdpr::name_pattern::compile("").value();
  for (const char* name : {"email", "Customer_EMAIL", "ip_address", "mailbox_size", "birthday",
                           "DOB", "iban", "msisdn", "tckn"})
    EXPECT_TRUE(p.matches(name)) << name;
  for (const char* name : {"order_id", "amount", "name", "currency"})
    EXPECT_FALSE(p.matches(name)) << name;
  const auto custom = gdpr::name_pattern::compile("^name$").value();
  EXPECT_TRUE(custom.matches("name"));
  EXPECT_FALSE(custom.matches("Name"));
  EXPECT_TRUE(gdpr::name_pattern::compile("(?i)^name$").value().matches("NAME"));
  EXPECT_EQ(gdpr::name_pattern::compile("(unclosed").code(), gdpr::errc::invalid_argument);
}

TEST(UnannotatedPii, FlagsUnmarkedScalarLeavesOnly) {
  const auto schema = json::parse(R"({"type": "object", "properties": {
    "email": {"type": "string"},
    "phone": {"type": "string", "x-gdpr-sensitive": "phone"},
    "address": {"type": "object", "properties": {"line": {"type": "string"}, "email_2": {}}},
    "contacts": {"type": "array", "items": {"properties": {"mail": {"type": "string"}}}},
    "passport_list": {"items": {"type": "string"}},
    "iban": {"x-gdpr-sensitive": false},
    "ssn": {"x-gdpr-sensitive": ""}}})");
  const auto found = gdpr::unannotated_pii(schema, gdpr::name_pattern::compile("").value());
  EXPECT_EQ(found, (std::vector<std::string>{"address.email_2", "contacts[].mail", "email", "iban",
                                             "ssn"}));
}

TEST(Mask, RedactsMarkedNodesAndCopiesTheRest) {
  const auto schema = json::parse(R"({"properties": {
    "email": {"x-gdpr-sensitive": true}, "age": {"x-gdpr-sensitive": true},
    "empty": {"x-gdpr-sensitive": true}, "nil": {"x-gdpr-sensitive": true},
    "profile": {"x-gdpr-sensitive": "pii"},
    "names": {"items": {"x-gdpr-sensitive": true}},
    "nested": {"properties": {"tckn": {"x-gdpr-sensitive": true}}}}})");
  const auto value = json::parse(R"({"email": "alice@x.com", "age": 30, "empty": "", "nil": null,
    "profile": {"a": 1}, "names": ["Ünal", "", 7], "nested": {"tckn": "🎉x", "other": [1]},
    "order_id": 7})");
  const auto expected = json::parse(R"({"email": "a***", "age": "***", "empty": "***", "nil": "***",
    "profile": "***", "names": ["Ü***", "***", "***"], "nested": {"tckn": "🎉***", "other": [1]},
    "order_id": 7})");
  EXPECT_EQ(gdpr::mask(value, schema), expected);
  EXPECT_EQ(gdpr::mask(json("x"), json::parse(R"({"x-gdpr-sensitive": true})")), json("x***"));
}
