// protect()/unprotect(): round trips for every path form, skips, typed errors, atomicity.
#include <babelqueue/gdpr/aes_gcm_cipher.hpp>
#include <babelqueue/gdpr/protect.hpp>

#include <gtest/gtest.h>

#include <atomic>

namespace gdpr = babelqueue::gdpr;
using babelqueue::json;

namespace {

const gdpr::aes_gcm_cipher& cipher32() {
  static const auto c = gdpr::aes_gcm_cipher::create(std::string(32, 'k')).value();
  return c;
}

json parse(const char* text) { return json::parse(text); }

// Protects `data`, checks that every expected leaf became a string and nothing else changed
// shape, then unprotects and expects the original value back.
void round_trip(const json& schema, const json& original, const std::vector<std::string>& leaves,
                const gdpr::cipher& c = cipher32()) {
  json data = original;
  gdpr::protect(data, schema, c).value();
  for (const auto& ptr : leaves) {
    const auto p = json::json_pointer(ptr);
    ASSERT_TRUE(data.contains(p)) << ptr;
    EXPECT_TRUE(data.at(p).is_string()) << ptr;
    EXPECT_NE(data.at(p), original.at(p)) << ptr;
  }
  EXPECT_NE(data, original);
  gdpr::unprotect(data, schema, c).value();
  EXPECT_EQ(data, original);
  EXPECT_EQ(data.dump(), original.dump());  // key order kept too
}

}  // namespace

TEST(Protect, SpecExampleRoundTrips) {
  const auto schema = parse(R"({"type": "object", "properties": {
      "order_id": {"type": "integer"},
      "email": {"type": "string", "x-gdpr-sensitive": "email"},
      "profile": {"type": "object", "properties": {"full_name": {"type": "string", "x-gdpr-sensitive": true}}},
      "addresses": {"type": "array", "items": {"type": "object", "properties": {
        "line": {"type": "string", "x-gdpr-sensitive": true}}}}}})");
  const auto data = parse(R"({"order_id": 1042, "email": "alice@example.com",
      "profile": {"full_name": "Alice Ünal", "age": 30},
      "addresses": [{"line": "1 Main St", "zip": "34000"}, {"line": "2 Side St"}, {"zip": "1"}]})");
  round_trip(schema, data,
             {"/email", "/profile/full_name", "/addresses/0/line", "/addresses/1/line"});
  json protected_data = data;
  gdpr::protect(protected_data, schema, cipher32()).value();
  EXPECT_EQ(protected_data["order_id"], 1042);
  EXPECT_EQ(protected_data["profile"]["age"], 30);
  EXPECT_EQ(protected_data["addresses"][0]["zip"], "34000");
  EXPECT_EQ(protected_data["addresses"][2], parse(R"({"zip": "1"})"));
}

TEST(Protect, EveryLeafTypeRoundTripsExactly) {
  const auto schema = parse(R"({"properties": {"v": {"x-gdpr-sensitive": true}}})");
  for (const char* v : {"\"s\"", "\"\"", "\"çé 🎉 \\u2028 <&>\"", "0", "-1", "18446744073709551615",
                        "-9223372036854775808", "1.5", "1e-7", "1e+21", "true", "false", "null",
                        "{}", "[]", R"({"b": 1, "a": [1, {"z": null}]})", "[1, \"two\", 3.25]"}) {
    const std::string text = std::string(R"({"v": )") + v + "}";
    round_trip(schema, json::parse(text), {"/v"});
  }
}

TEST(Protect, ListItemsAndNestedArrays) {
  round_trip(parse(R"({"properties": {"tags": {"items": {"x-gdpr-sensitive": true}}}})"),
             parse(R"({"tags": ["a", "b", 3]})"), {"/tags/0", "/tags/1", "/tags/2"});
  // a[][] — the peers leave these in clear (wire-helpers §6.2 pitfall 2).
  round_trip(parse(R"({"properties": {"grid": {"items": {"items": {"x-gdpr-sensitive": true}}}}})"),
             parse(R"({"grid": [["a", "b"], [], ["c"]]})"),
             {"/grid/0/0", "/grid/0/1", "/grid/2/0"});
  round_trip(parse(R"({"properties": {"m": {"items": {"items": {"properties": {
                 "x": {"x-gdpr-sensitive": true}}}}}}})"),
             parse(R"({"m": [[{"x": 1, "y": 2}], [{"y": 3}, {"x": {"deep": true}}]]})"),
             {"/m/0/0/x", "/m/1/1/x"});
  round_trip(parse(R"({"properties": {"a": {"properties": {"b": {"items": {"properties": {
                 "c": {"properties": {"d": {"x-gdpr-sensitive": true}}}}}}}}}})"),
             parse(R"({"a": {"b": [{"c": {"d": "x"}}, {"c": {"d": "y", "e": 1}}]}})"),
             {"/a/b/0/c/d", "/a/b/1/c/d"});
}

TEST(Protect, MarkedContainerWithMarkedDescendantRoundTrips) {
  // wire-helpers §6.2 pitfall 1: the peers protect this but then fail to unprotect it.
  const auto schema =
      parse(R"({"properties": {"profile": {"type": "object", "x-gdpr-sensitive": true,
      "properties": {"full_name": {"type": "string", "x-gdpr-sensitive": true}}},
      "list": {"x-gdpr-sensitive": true, "items": {"properties": {"x": {"x-gdpr-sensitive": true}}}}}})");
  const auto data = parse(R"({"profile": {"full_name": "Alice", "age": 3}, "list": [{"x": 1}]})");
  round_trip(schema, data, {"/profile", "/list"});
}

TEST(Protect, AbsentOrOtherShapedFieldsAreSkipped) {
  const auto schema = parse(R"({"properties": {"email": {"x-gdpr-sensitive": true},
      "profile": {"properties": {"name": {"x-gdpr-sensitive": true}}},
      "list": {"items": {"properties": {"x": {"x-gdpr-sensitive": true}}}}}})");
  for (const char* text :
       {R"({})", R"({"other": 1})", R"({"profile": "not an object"})", R"({"profile": {}})",
        R"({"list": {"x": "not an array"}})", R"({"list": [1, "two", null, []]})"}) {
    json data = json::parse(text);
    gdpr::protect(data, schema, cipher32()).value();
    EXPECT_EQ(data, json::parse(text)) << text;
    gdpr::unprotect(data, schema, cipher32()).value();
    EXPECT_EQ(data, json::parse(text)) << text;
  }
  json null_data;
  EXPECT_TRUE(gdpr::protect(null_data, schema, cipher32()));
  json not_object = json::array();
  EXPECT_EQ(gdpr::protect(not_object, schema, cipher32()).code(), gdpr::errc::invalid_argument);
}

TEST(Unprotect, NonStringLeavesAreLeftAlone) {
  const auto schema = parse(
      R"({"properties": {"a": {"x-gdpr-sensitive": true}, "b": {"x-gdpr-sensitive": true}}})");
  json data = parse(R"({"a": 5, "b": {"k": "v"}})");
  gdpr::unprotect(data, schema, cipher32()).value();
  EXPECT_EQ(data, parse(R"({"a": 5, "b": {"k": "v"}})"));
}

TEST(Unprotect, WrongKeyIsATypedErrorAndDataIsUntouched) {
  const auto schema = parse(R"({"properties": {"a": {"x-gdpr-sensitive": true},
      "z": {"items": {"x-gdpr-sensitive": true}}}})");
  json data = parse(R"({"a": "alice", "z": ["x", "y"]})");
  gdpr::protect(data, schema, cipher32()).value();
  const json sealed = data;
  for (std::size_t n : {16u, 24u, 32u}) {
    const auto other = gdpr::aes_gcm_cipher::create(std::string(n, 'w')).value();
    auto r = gdpr::unprotect(data, schema, other);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.code(), gdpr::errc::decrypt_failed);
    EXPECT_EQ(r.error().path, "a");
    EXPECT_EQ(data, sealed);  // all-or-nothing
    EXPECT_TRUE(gdpr::is_decrypt_error(r.code()));
    EXPECT_THROW(r.value(), babelqueue::error);
  }
}

TEST(Unprotect, TamperedValueIsATypedErrorNamingTheField) {
  const auto schema = parse(R"({"properties": {"z": {"items": {"x-gdpr-sensitive": true}}}})");
  json data = parse(R"({"z": ["x", "y"]})");
  gdpr::protect(data, schema, cipher32()).value();
  const json good = data;
  auto text = gdpr::base64_decode(data["z"][1].get<std::string>()).value();
  text[14] = static_cast<char>(text[14] ^ 0x20);
  data["z"][1] = gdpr::base64_encode(text);
  const json tampered = data;
  auto r = gdpr::unprotect(data, schema, cipher32());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.code(), gdpr::errc::decrypt_failed);
  EXPECT_EQ(r.error().path, "z[1]");
  EXPECT_EQ(data, tampered);
  for (const char* junk : {"cleartext", "", "AAAA"}) {
    data = good;
    data["z"][0] = junk;
    auto e = gdpr::unprotect(data, schema, cipher32());
    EXPECT_EQ(e.code(), gdpr::errc::malformed_ciphertext) << junk;
    EXPECT_EQ(e.error().path, "z[0]");
  }
}

TEST(Unprotect, NonJsonPlaintextIsATypedError) {
  const auto schema = parse(R"({"properties": {"a": {"x-gdpr-sensitive": true}}})");
  json data = {{"a", cipher32().encrypt("not json").value()}};
  EXPECT_EQ(gdpr::unprotect(data, schema, cipher32()).code(), gdpr::errc::not_json);
  data = {{"a", cipher32().encrypt("{\"a\":1} trailing").value()}};
  EXPECT_EQ(gdpr::unprotect(data, schema, cipher32()).code(), gdpr::errc::not_json);
}

TEST(Unprotect, SecondRunOnARestoredStringFails) {
  // Same as every peer: restored string leaves are cleartext, not ciphertext.
  const auto schema = parse(R"({"properties": {"a": {"x-gdpr-sensitive": true}}})");
  json data = parse(R"({"a": "alice"})");
  gdpr::protect(data, schema, cipher32()).value();
  gdpr::unprotect(data, schema, cipher32()).value();
  EXPECT_TRUE(gdpr::is_decrypt_error(gdpr::unprotect(data, schema, cipher32()).code()));
}

TEST(Protect, CipherFailureLeavesDataUntouched) {
  std::atomic<int> calls{0};
  gdpr::function_cipher flaky(
      [&](std::string_view p) -> babelqueue::result<std::string> {
        if (++calls == 2) return gdpr::fail(gdpr::errc::encrypt_failed, "kms unavailable");
        return std::string(p);
      },
      [](std::string_view c) -> babelqueue::result<std::string> { return std::string(c); });
  const auto schema = parse(
      R"({"properties": {"a": {"x-gdpr-sensitive": true}, "b": {"x-gdpr-sensitive": true}}})");
  json data = parse(R"({"a": "x", "b": "y"})");
  auto r = gdpr::protect(data, schema, flaky);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.code(), gdpr::errc::encrypt_failed);
  EXPECT_EQ(r.error().path, "b");
  EXPECT_EQ(data, parse(R"({"a": "x", "b": "y"})"));
}

TEST(Protect, CanonicalJsonIsWhatTheCipherSees) {
  std::vector<std::string> seen;
  gdpr::function_cipher spy(
      [&](std::string_view p) -> babelqueue::result<std::string> {
        seen.emplace_back(p);
        return std::string("sealed");
      },
      [](std::string_view) -> babelqueue::result<std::string> { return std::string("0"); });
  const auto schema = parse(R"({"properties": {"a": {"x-gdpr-sensitive": true}}})");
  json data = parse(R"({"a": {"b": 1.0, "a": "é\u2028", "c": [1e21, 0.1]}})");
  gdpr::protect(data, schema, spy).value();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0], "{\"b\":1,\"a\":\"é\\u2028\",\"c\":[1e+21,0.1]}");
}

TEST(Protect, InvalidSchemaIsRefusedBeforeAnythingChanges) {
  json data = parse(R"({"a": "x"})");
  auto r =
      gdpr::protect(data, parse(R"({"properties": {"a": {"x-gdpr-sensitive": 1}}})"), cipher32());
  EXPECT_EQ(r.code(), gdpr::errc::invalid_schema);
  EXPECT_EQ(data, parse(R"({"a": "x"})"));
}
