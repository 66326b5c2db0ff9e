// D2: the canonical writer — golden bytes, escaping, number layout, refusals.
#include <babelqueue/codec.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace babelqueue;

// The golden bytes of wire-core §1.2 are asserted by the conformance runner (blocks/cases.cpp).

TEST(Encode, StringEscaping) {
  json v = {{"s", std::string("\"\\/<>&'\b\f\n\r\t\x01\x1f\x7f") + "é😀\u2028\u2029"}};
  EXPECT_EQ(to_canonical_json(v).value(),
            "{\"s\":\"\\\"\\\\/<>&'\\b\\f\\n\\r\\t\\u0001\\u001f\x7f"
            "é😀\\u2028\\u2029\"}");
  EXPECT_EQ(to_canonical_json(json(std::string("\0", 1))).value(), "\"\\u0000\"");
}

TEST(Encode, NumbersUseTheEcmaScriptLayout) {
  struct c {
    double v;
    const char* want;
  } cases[] = {
      {1.0, "1"},
      {99.9, "99.9"},
      {0.1 + 0.2, "0.30000000000000004"},
      {1e16, "10000000000000000"},
      {1e20, "100000000000000000000"},
      {1e21, "1e+21"},
      {1e-5, "0.00001"},
      {1e-6, "0.000001"},
      {1e-7, "1e-7"},
      {-0.0, "-0"},
      {12345678.9, "12345678.9"},
      {-1.5, "-1.5"},
      {123e-20, "1.23e-18"},
      {1.7976931348623157e308, "1.7976931348623157e+308"},
      {5e-324, "5e-324"},
      {0.5, "0.5"},
      {2.5e21, "2.5e+21"},
  };
  for (const auto& k : cases) {
    EXPECT_EQ(format_double(k.v), k.want) << k.want;
    EXPECT_EQ(to_canonical_json(json(k.v)).value(), k.want);
  }
}

TEST(Encode, IntegersAreExact) {
  EXPECT_EQ(to_canonical_json(json(std::numeric_limits<std::int64_t>::min())).value(),
            "-9223372036854775808");
  EXPECT_EQ(to_canonical_json(json(std::numeric_limits<std::uint64_t>::max())).value(),
            "18446744073709551615");
}

TEST(Encode, RefusesNanInfinityAndInvalidUtf8) {
  EXPECT_EQ(to_canonical_json(json(std::nan(""))).code(), errc::non_finite_number);
  EXPECT_EQ(to_canonical_json(json(INFINITY)).code(), errc::non_finite_number);
  EXPECT_EQ(to_canonical_json(json(-INFINITY)).code(), errc::non_finite_number);
  EXPECT_EQ(to_canonical_json(json(std::string("\xC3"))).code(), errc::invalid_utf8);
  EXPECT_EQ(to_canonical_json(json::object({{std::string("\xED\xA0\x80"), 1}})).code(),
            errc::invalid_utf8);
  EXPECT_EQ(make("urn:babel:t:x", {{"x", std::nan("")}}).code(), errc::non_finite_number);
  EXPECT_EQ(make("urn:babel:t:x", {{"x", std::string("\xFF")}}).code(), errc::invalid_utf8);
}

TEST(Encode, KeyOrderIsInsertionOrder) {
  json v = json::object();
  v["zeta"] = 1;
  v["alpha"] = {{"y", 2}, {"b", 3}};
  v["mid"] = json::array({json::object(), json::array()});
  EXPECT_EQ(to_canonical_json(v).value(), R"({"zeta":1,"alpha":{"y":2,"b":3},"mid":[{},[]]})");
}

TEST(Encode, EmptyDataIsAnObject) {
  auto env = make("urn:babel:t:x", json());
  ASSERT_TRUE(env);
  EXPECT_EQ(env->data_text(), "{}");
  auto env2 = make("urn:babel:t:x", json::object());
  ASSERT_TRUE(env2);
  EXPECT_NE(encode(*env2).value().find(R"("data":{})"), std::string::npos);
  EXPECT_EQ(make("urn:babel:t:x", json::array()).code(), errc::invalid_data);
}

TEST(Encode, ForbiddenExtensionsAreRefused) {
  auto env = make("urn:babel:t:x", json::object()).value();
  ASSERT_TRUE(env.set_extension("x-team", "billing"));
  EXPECT_TRUE(encode(env));
  for (const char* k : {"timestamp", "urn"}) {
    auto e = env;
    ASSERT_TRUE(e.set_extension(k, 1));
    EXPECT_EQ(encode(e).code(), errc::forbidden_key) << k;
  }
  for (const char* k : {"max_retries", "attempts", "source", "ts"}) {
    auto e = env;
    ASSERT_TRUE(e.set_extension(k, 1, true));
    EXPECT_EQ(encode(e).code(), errc::forbidden_key) << k;
  }
  EXPECT_EQ(env.set_extension("data", 1).code(), errc::invalid_argument);
  EXPECT_EQ(env.set_extension("lang", 1, true).code(), errc::invalid_argument);
}

TEST(Encode, MetaExtensionIsWrittenInsideMeta) {
  auto env = make("urn:babel:t:x", json::object(), {"q", "trace-1"}).value();
  ASSERT_TRUE(env.set_extension("tenant", "acme", true));
  auto text = encode(env).value();
  auto back = decode(text).value();
  EXPECT_EQ(back.meta().value()["tenant"], "acme");
  EXPECT_EQ(back.queue(), "q");
  EXPECT_EQ(env.queue(), "q");
  EXPECT_EQ(env.lang(), "cpp");
}
