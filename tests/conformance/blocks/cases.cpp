// Block `cases`: every fixture decodes (or is rejected) as the manifest says, and the three
// valid canonical fixtures re-encode to the golden bytes of wire-core §1.2.
#include "../manifest.hpp"

#include <babelqueue/codec.hpp>

#include <gtest/gtest.h>

namespace {

using babelqueue::errc;

// The manifest states invalid cases' reasons in prose; this maps each to its D3 code.
const std::map<std::string, errc> kInvalidReason = {
    {"invalid-unknown-schema-version", errc::unsupported_schema_version},
    {"invalid-missing-urn", errc::missing_urn},
};

// wire-core §1.2: what Go, Python, PHP and Node all emit for these fixtures.
const std::map<std::string, std::string> kGolden = {
    {"order-created",
     R"({"job":"urn:babel:orders:created","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b","data":{"order_id":1042},"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567","queue":"orders","lang":"php","schema_version":1,"created_at":1749132727000},"attempts":0})"},
    {"dead-lettered",
     R"({"job":"urn:babel:orders:created","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b","data":{"order_id":1042},"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567","queue":"orders","lang":"php","schema_version":1,"created_at":1749132727000},"attempts":3,"dead_letter":{"reason":"failed","error":"Payment gateway timeout","exception":"App\\Exceptions\\GatewayTimeout","failed_at":1749132730000,"original_queue":"orders","attempts":3,"lang":"php"}})"},
    {"unicode-and-numbers",
     R"({"job":"urn:babel:catalog:item.indexed","trace_id":"3f7a1d2e-9b4c-4a8d-bc1e-0f5a6b7c8d90","data":{"title":"Café — naïve ☕","qty":7,"price_cents":1299,"ratio":0.5,"active":true,"note":null},"meta":{"id":"b2c3d4e5-f607-4890-a1b2-c3d4e5f60718","queue":"catalog","lang":"python","schema_version":1,"created_at":1749132727000},"attempts":2})"},
};

// Values compared as JSON (key order ignored), as the suite's README asks.
nlohmann::json plain(const babelqueue::json& v) { return nlohmann::json::parse(v.dump()); }

void run_case(const nlohmann::json& c) {
  const std::string name = c.at("name");
  SCOPED_TRACE("case " + name);
  const std::string body =
      conformance::read_file(conformance::suite_dir() / c.at("file").get<std::string>());
  auto env = babelqueue::decode(body);
  if (!c.at("valid").get<bool>()) {
    ASSERT_FALSE(env) << "an invalid fixture was accepted";
    EXPECT_FALSE(babelqueue::accepts(body));
    auto want = kInvalidReason.find(name);
    ASSERT_NE(want, kInvalidReason.end()) << "no D3 reason mapped for invalid case " << name;
    EXPECT_EQ(env.error().reason(), babelqueue::reason(want->second));
    return;
  }
  ASSERT_TRUE(env) << env.error().reason() << ": " << env.error().message;
  const auto& expect = c.at("expect");
  EXPECT_EQ(env->urn(), expect.at("urn").get<std::string>());
  EXPECT_EQ(plain(env->data().value()), expect.at("data"));
  EXPECT_EQ(env->attempts(), expect.at("attempts").get<std::int64_t>());
  EXPECT_EQ(env->lang(), expect.at("lang").get<std::string>());
  EXPECT_EQ(env->schema_version(), expect.at("schema_version").get<std::int64_t>());
  if (expect.contains("dead_letter")) {
    auto block = env->dead_letter();
    ASSERT_TRUE(block.has_value());
    for (const auto& [key, value] : expect.at("dead_letter").items()) {
      auto actual = plain(env->member("dead_letter").has_value()
                              ? babelqueue::parse_json(*env->member("dead_letter")).value()
                              : babelqueue::json());
      EXPECT_EQ(actual.at(key), value) << "dead_letter." << key;
    }
  } else {
    EXPECT_FALSE(env->has_dead_letter());
  }
  if (auto golden = kGolden.find(name); golden != kGolden.end()) {
    EXPECT_EQ(babelqueue::encode(*env).value(), golden->second) << "golden bytes";
  }
  // Decode → encode → decode is stable.
  auto again = babelqueue::decode(babelqueue::encode(*env).value());
  ASSERT_TRUE(again);
  EXPECT_EQ(babelqueue::encode(*again).value(), babelqueue::encode(*env).value());
}

conformance::register_block cases_block{"cases", [](const nlohmann::json& cases) {
                                          ASSERT_TRUE(cases.is_array());
                                          ASSERT_FALSE(cases.empty());
                                          for (const auto& c : cases) run_case(c);
                                          for (const auto& [name, bytes] : kGolden) {
                                            bool present = false;
                                            for (const auto& c : cases)
                                              present = present || c.at("name") == name;
                                            EXPECT_TRUE(present) << "golden fixture " << name
                                                                 << " missing from the manifest";
                                          }
                                        }};

}  // namespace
