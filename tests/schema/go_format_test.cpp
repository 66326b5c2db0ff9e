// The Go text layouts bqschema output is made of.
#include "schema/go_format.hpp"

#include <babelqueue/codec.hpp>

#include <gtest/gtest.h>

using namespace babelqueue::schema::detail;

TEST(GoFormat, FloatLikeFmtV) {
  EXPECT_EQ(go_float(0), "0");
  EXPECT_EQ(go_float(-0.0), "-0");
  EXPECT_EQ(go_float(1), "1");
  EXPECT_EQ(go_float(0.01), "0.01");
  EXPECT_EQ(go_float(-273.15), "-273.15");
  EXPECT_EQ(go_float(123456), "123456");
  EXPECT_EQ(go_float(1e6), "1e+06");
  EXPECT_EQ(go_float(1234567), "1.234567e+06");
  EXPECT_EQ(go_float(0.0001), "0.0001");
  EXPECT_EQ(go_float(0.00001), "1e-05");
  EXPECT_EQ(go_float(1e21), "1e+21");
  EXPECT_EQ(go_float(1.5e300), "1.5e+300");
}

TEST(GoFormat, JsonNumberLikeEncodingJson) {
  EXPECT_EQ(go_json_number(1), "1");
  EXPECT_EQ(go_json_number(99.9), "99.9");
  EXPECT_EQ(go_json_number(1e20), "100000000000000000000");
  EXPECT_EQ(go_json_number(1e21), "1e+21");
  EXPECT_EQ(go_json_number(0.000001), "0.000001");
  EXPECT_EQ(go_json_number(1e-7), "1e-7");
  EXPECT_EQ(go_json_number(1.5e-10), "1.5e-10");
  EXPECT_EQ(go_json_number(9007199254740993.0), "9007199254740992");
}

TEST(GoFormat, QuoteLikeStrconv) {
  EXPECT_EQ(go_quote("a"), "\"a\"");
  EXPECT_EQ(go_quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(go_quote("\t\n\x01\x7f"), "\"\\t\\n\\x01\\x7f\"");
  EXPECT_EQ(go_quote("çé😀"), "\"çé😀\"");
  EXPECT_EQ(go_quote("\xe2\x80\xa8"), "\"\\u2028\"");
  EXPECT_EQ(go_quote("\xff"), "\"\\xff\"");
}

TEST(GoFormat, ValueLikeFmtV) {
  auto j = [](const char* t) { return babelqueue::parse_json(t).value(); };
  EXPECT_EQ(go_value(j("null")), "<nil>");
  EXPECT_EQ(go_value(j("\"EUR\"")), "EUR");
  EXPECT_EQ(go_value(j("[1,\"a\",true,null]")), "[1 a true <nil>]");
  EXPECT_EQ(go_value(j("{\"z\":1,\"a\":{\"k\":[]}}")), "map[a:map[k:[]] z:1]");
}

TEST(GoFormat, JsonStringHtmlEscaped) {
  std::string out;
  go_json_string("<a&b>\"\\\b\f\n\r\t\x01\x7f\xe2\x80\xa8ç\xff", out);
  EXPECT_EQ(out, "\"\\u003ca\\u0026b\\u003e\\\"\\\\\\b\\f\\n\\r\\t\\u0001\x7f\\u2028ç\\ufffd\"");
}
