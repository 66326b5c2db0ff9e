// Every keyword of the subset, with bqschema's messages and the Python/PHP reason codes.
#include <babelqueue/codec.hpp>
#include <babelqueue/schema/document.hpp>

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace bq = babelqueue;
namespace schema = babelqueue::schema;

namespace {

bq::json j(std::string_view text) { return bq::parse_json(text).value(); }

schema::report run(std::string_view schema_text, std::string_view data_text) {
  auto doc = schema::document::parse(schema_text);
  EXPECT_TRUE(doc.has_value()) << (doc ? "" : doc.error().message);
  return doc->validate(j(data_text));
}

std::vector<std::string> lines(const schema::report& r) {
  std::vector<std::string> out;
  for (const auto& v : r.violations()) out.push_back(v.text());
  return out;
}

std::string first_code(const schema::report& r) {
  return r.first() == nullptr ? std::string("ok") : r.first()->reason_text();
}

using strings = std::vector<std::string>;

}  // namespace

TEST(SchemaType, ObjectRequiredPropertiesAdditional) {
  const char* s = R"({"type":"object","required":["id"],"properties":{"id":{"type":"integer"}},
                      "additionalProperties":false})";
  EXPECT_TRUE(run(s, R"({"id":1})").ok());
  EXPECT_EQ(lines(run(s, "[]")), strings{"must be an object"});
  EXPECT_EQ(first_code(run(s, "[]")), "<root>: not_an_object");
  auto r = run(s, R"({"x":1})");
  EXPECT_EQ(lines(r), (strings{"additional property \"x\" is not allowed",
                               "missing required property \"id\""}));
  // Python/PHP meet `required` first and report it at the child path.
  EXPECT_EQ(first_code(r), "id: missing_required");
  EXPECT_EQ(r.first()->pointer, "/id");
  EXPECT_EQ(r.first()->path, "");
  // null counts as present (Go and Python: key presence).
  EXPECT_EQ(lines(run(s, R"({"id":null})")), strings{"id: must be an integer"});
}

TEST(SchemaType, AdditionalPropertiesOnlyFalseCloses) {
  EXPECT_TRUE(run(R"({"type":"object","additionalProperties":true})", R"({"a":1})").ok());
  EXPECT_TRUE(run(R"({"type":"object"})", R"({"a":1})").ok());
  // The schema form is not read (bqschema): the object stays open.
  EXPECT_TRUE(
      run(R"({"type":"object","additionalProperties":{"type":"string"}})", R"({"a":1})").ok());
  // A property whose sub-schema is not an object is not a declared property.
  EXPECT_EQ(lines(run(R"({"type":"object","properties":{"a":true},"additionalProperties":false})",
                      R"({"a":1})")),
            strings{"additional property \"a\" is not allowed"});
  EXPECT_EQ(
      first_code(run(R"({"type":"object","additionalProperties":false})", R"({"a":{"b":1}})")),
      "a: additional_not_allowed");
}

TEST(SchemaType, ArrayItemsWithIndexPaths) {
  const char* s = R"({"type":"object","properties":{"items":{"type":"array","items":
      {"type":"object","required":["sku"],"properties":{"sku":{"type":"string","minLength":3}}}}}})";
  auto r = run(s, R"({"items":[{"sku":"ABCD"},{"sku":"AB"},{},5]})");
  EXPECT_EQ(lines(r), (strings{"items[1].sku: must be at least 3 characters",
                               "items[2]: missing required property \"sku\"",
                               "items[3]: must be an object"}));
  EXPECT_EQ(r.violations()[0].pointer, "/items/1/sku");
  EXPECT_EQ(r.violations()[0].reason, "below_min_length");
  EXPECT_EQ(r.violations()[1].reason_path, "items[2].sku");
  EXPECT_EQ(first_code(r), "items[1].sku: below_min_length");
  EXPECT_EQ(lines(run(s, R"({"items":{}})")), strings{"items: must be an array"});
  // Tuple form is not read: any items pass.
  EXPECT_TRUE(run(R"({"type":"array","items":[{"type":"string"}]})", "[1,2]").ok());
  // Root array: no path prefix, index only.
  EXPECT_EQ(lines(run(R"({"type":"array","items":{"type":"integer"}})", R"([1,"x"])")),
            strings{"[1]: must be an integer"});
  EXPECT_EQ(first_code(run(R"({"type":"array","items":{"type":"integer"}})", R"([1,"x"])")),
            "[1]: not_an_integer");
}

TEST(SchemaType, StringMinLengthCountsCodePoints) {
  const char* s = R"({"type":"string","minLength":3})";
  EXPECT_TRUE(run(s, R"("abc")").ok());
  EXPECT_TRUE(run(s, R"("😀😀😀")").ok());  // 12 bytes, 3 characters
  EXPECT_FALSE(run(s, R"("çé")").ok());  // 4 bytes, 2 characters (D8; bqschema<=0.4.0 passed it)
  EXPECT_EQ(lines(run(s, R"("çé")")), strings{"must be at least 3 characters"});
  EXPECT_EQ(first_code(run(s, R"("ab")")), "<root>: below_min_length");
  EXPECT_EQ(lines(run(s, "3")), strings{"must be a string"});
  EXPECT_EQ(first_code(run(s, "3")), "<root>: not_a_string");
  // A fractional minLength truncates (Go int(), Python int()); a boolean one is not a number.
  EXPECT_FALSE(run(R"({"type":"string","minLength":2.9})", R"("a")").ok());
  EXPECT_TRUE(run(R"({"type":"string","minLength":2.9})", R"("ab")").ok());
  EXPECT_TRUE(run(R"({"type":"string","minLength":true})", R"("")").ok());
  // Scoped under "string": minLength without a type checks nothing.
  EXPECT_TRUE(run(R"({"minLength":5})", R"("a")").ok());
}

TEST(SchemaType, IntegerAndNumber) {
  const char* i = R"({"type":"integer","minimum":1})";
  EXPECT_TRUE(run(i, "1").ok());
  EXPECT_TRUE(run(i, "1.0").ok());  // 1.0 is an integer (Go, Python)
  EXPECT_TRUE(run(i, "18446744073709551615").ok());
  EXPECT_EQ(lines(run(i, "1.5")), strings{"must be an integer"});
  EXPECT_EQ(lines(run(i, "true")), strings{"must be an integer"});
  EXPECT_EQ(lines(run(i, "0")), strings{"must be >= 1"});
  EXPECT_EQ(first_code(run(i, "0")), "<root>: below_minimum");
  EXPECT_EQ(first_code(run(i, "\"1\"")), "<root>: not_an_integer");
  const char* n = R"({"type":"number","minimum":-273.15})";
  EXPECT_TRUE(run(n, "-273.15").ok());  // inclusive
  EXPECT_TRUE(run(n, "5").ok());
  EXPECT_EQ(lines(run(n, "-273.16")), strings{"must be >= -273.15"});
  EXPECT_EQ(lines(run(n, "false")), strings{"must be a number"});
  EXPECT_EQ(first_code(run(n, "null")), "<root>: not_a_number");
  // Exact comparison of large integers against a fractional minimum.
  EXPECT_TRUE(run(R"({"type":"integer","minimum":9007199254740992.5})", "9007199254740993").ok());
  EXPECT_FALSE(run(R"({"type":"integer","minimum":9007199254740993})", "9007199254740992").ok());
  EXPECT_FALSE(run(R"({"type":"integer","minimum":0})", "-9223372036854775808").ok());
  // minimum is scoped under integer/number.
  EXPECT_TRUE(run(R"({"type":"string","minimum":10})", R"("1")").ok());
  EXPECT_TRUE(run(R"({"minimum":10})", "1").ok());
  // Go's %v layout of the minimum.
  EXPECT_EQ(lines(run(R"({"type":"number","minimum":1000000})", "1")), strings{"must be >= 1e+06"});
  EXPECT_EQ(lines(run(R"({"type":"number","minimum":0.00001})", "0")), strings{"must be >= 1e-05"});
}

TEST(SchemaType, BooleanNullAndUnknownTypes) {
  EXPECT_TRUE(run(R"({"type":"boolean"})", "false").ok());
  EXPECT_EQ(lines(run(R"({"type":"boolean"})", "0")), strings{"must be a boolean"});
  EXPECT_EQ(first_code(run(R"({"type":"boolean"})", "0")), "<root>: not_a_boolean");
  EXPECT_TRUE(run(R"({"type":"null"})", "null").ok());
  EXPECT_EQ(lines(run(R"({"type":"null"})", "{}")), strings{"must be null"});
  EXPECT_EQ(first_code(run(R"({"type":"null"})", "{}")), "<root>: not_null");
  // Only a string `type` is read; unknown names check nothing.
  EXPECT_TRUE(run(R"({"type":["string","null"]})", "5").ok());
  EXPECT_TRUE(run(R"({"type":"quantity"})", "5").ok());
  // Keyword scoping: object keywords without "type":"object" are ignored.
  EXPECT_TRUE(run(R"({"required":["a"],"additionalProperties":false})", R"({"b":1})").ok());
}

TEST(SchemaEnumConst, ValuesCompareByValue) {
  const char* e = R"({"enum":[1,"two",null,{"a":1,"b":[1,2]},[3]]})";
  EXPECT_TRUE(run(e, "1").ok());
  EXPECT_TRUE(run(e, "1.0").ok());  // Go: equal; Python/PHP differ (type-strict) - see interop test
  EXPECT_TRUE(run(e, "null").ok());
  EXPECT_TRUE(run(e, R"({"b":[1.0,2],"a":1})").ok());  // key order ignored
  EXPECT_TRUE(run(e, "[3]").ok());
  EXPECT_FALSE(run(e, "true").ok());  // a boolean is never a number
  EXPECT_FALSE(run(e, R"("1")").ok());
  EXPECT_FALSE(run(e, R"({"a":1})").ok());
  EXPECT_EQ(lines(run(e, "2")), strings{"value is not one of the allowed enum values"});
  EXPECT_EQ(first_code(run(e, "2")), "<root>: not_in_enum");
  EXPECT_FALSE(run(R"({"enum":[]})", "1").ok());  // empty enum allows nothing
  EXPECT_TRUE(run(R"({"enum":"x"})", "1").ok());  // not an array: ignored

  EXPECT_TRUE(run(R"({"const":3})", "3.0").ok());
  EXPECT_EQ(lines(run(R"({"const":3})", "4")), strings{"must equal const 3"});
  EXPECT_EQ(first_code(run(R"({"const":3})", "4")), "<root>: wrong_const");
  EXPECT_EQ(lines(run(R"({"const":null})", "0")), strings{"must equal const <nil>"});
  EXPECT_EQ(lines(run(R"({"const":{"z":[1,"a"],"b":true}})", "{}")),
            strings{"must equal const map[b:true z:[1 a]]"});
  EXPECT_TRUE(run(R"({"const":{"z":[1,"a"],"b":true}})", R"({"b":true,"z":[1.0,"a"]})").ok());
  EXPECT_FALSE(run(R"({"const":true})", "1").ok());
}

TEST(SchemaEvaluation, ConstEnumThenTypeAndAllCollected) {
  // Go records const and enum, then the type check; a type failure stops that node only.
  auto r = run(R"({"const":"a","enum":["b"],"type":"integer","minimum":5})", R"("c")");
  EXPECT_EQ(lines(r), (strings{"must be an integer", "must equal const a",
                               "value is not one of the allowed enum values"}));
  EXPECT_EQ(first_code(r), "<root>: wrong_const");
  // Sorted output (bqschema) vs evaluation order (Python's first violation).
  auto r2 = run(R"({"type":"object","required":["z","a"],"properties":{"m":{"type":"string"}}})",
                R"({"m":1})");
  EXPECT_EQ(lines(r2), (strings{"m: must be a string", "missing required property \"a\"",
                                "missing required property \"z\""}));
  EXPECT_EQ(first_code(r2), "z: missing_required");
  EXPECT_EQ(
      r2.summary(),
      "m: must be a string; missing required property \"a\"; missing required property \"z\"");
}

TEST(SchemaEvaluation, UnknownKeywordsAndMarksIgnored) {
  const char* s = R"({"type":"object","properties":{"email":{"type":"string","format":"email",
      "pattern":"^x$","maxLength":2,"x-gdpr-sensitive":"email"}},"x-anything":{"type":"string"}})";
  EXPECT_TRUE(run(s, R"({"email":"not-an-email-and-long"})").ok());
}

TEST(SchemaEvaluation, PointersEscapeTildeAndSlash) {
  auto r = run(
      R"({"type":"object","properties":{"a/b":{"type":"object","properties":{"c~d":{"type":"string"}}}}})",
      R"({"a/b":{"c~d":1}})");
  ASSERT_EQ(r.violations().size(), 1u);
  EXPECT_EQ(r.violations()[0].pointer, "/a~1b/c~0d");
  EXPECT_EQ(r.violations()[0].text(), "a/b.c~d: must be a string");
  // Go's %q of a member name.
  auto q = run(R"({"type":"object","additionalProperties":false})", "{\"tab\\tquote\\\"\":1}");
  EXPECT_EQ(lines(q), strings{"additional property \"tab\\tquote\\\"\" is not allowed"});
}

TEST(SchemaBadInput, TypedErrorsNeverCrashes) {
  auto not_json = schema::document::parse("{\"type\":");
  ASSERT_FALSE(not_json);
  EXPECT_EQ(not_json.code(), bq::errc::malformed_json);
  for (const char* text : {"[]", "\"object\"", "42", "null", "true"}) {
    auto r = schema::document::parse(text);
    ASSERT_FALSE(r) << text;
    EXPECT_EQ(r.code(), schema::errc::invalid_schema) << text;
    EXPECT_NE(r.error().message.find("JSON object"), std::string::npos);
  }
  auto huge = schema::document::parse(R"({"minimum":1e400})");
  ASSERT_FALSE(huge);
  // Deeply nested schema text: refused with a typed error (parser or depth limit).
  std::string deep;
  for (int i = 0; i < 5000; ++i) deep += R"({"type":"object","properties":{"a":)";
  deep += "{}";
  for (int i = 0; i < 5000; ++i) deep += "}}";
  auto d = schema::document::parse(deep);
  ASSERT_FALSE(d);
  EXPECT_NE(d.code(), bq::errc::ok);
  // A parsed value deeper than the limit is refused by from_json too.
  bq::json v = bq::json::object();
  bq::json* cur = &v;
  for (int i = 0; i < 300; ++i) {
    (*cur)["type"] = "object";
    cur = &(*cur)["properties"]["a"];
    *cur = bq::json::object();
  }
  auto fj = schema::document::from_json(v);
  ASSERT_FALSE(fj);
  EXPECT_EQ(fj.code(), schema::errc::invalid_schema);
  schema::parse_options wide;
  wide.max_depth = 1000;
  EXPECT_TRUE(schema::document::from_json(v, wide).has_value());
}

TEST(SchemaBadInput, DeepDataAgainstShallowSchema) {
  // Only the schema's depth drives recursion: arbitrarily deep data is safe.
  bq::json data = bq::json::array();
  for (int i = 0; i < 100000; ++i) data = bq::json::array({std::move(data)});
  auto doc = schema::document::parse(
                 R"({"type":"array","items":{"type":"array"},"enum":[[1]],"const":[[2]]})")
                 .value();
  auto r = doc.validate(data);
  EXPECT_EQ(r.violations().size(), 2u);
}

TEST(SchemaThreads, ConcurrentValidate) {
  auto doc =
      schema::document::parse(
          R"({"type":"object","required":["a"],"properties":{"a":{"type":"integer","minimum":1}}})")
          .value();
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        const bool valid = doc.validate(bq::json{{"a", (i + t) % 3}}).ok();
        if (valid != ((i + t) % 3 >= 1)) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}
