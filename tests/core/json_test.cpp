// parse_json(): strict reading into babelqueue::json.
#include <babelqueue/codec.hpp>

#include <gtest/gtest.h>

using namespace babelqueue;

TEST(ParseJson, Types) {
  auto v = parse_json(
      R"({"i":-5,"u":18446744073709551615,"d":1.5,"s":"\u00e9","b":false,"n":null,"a":[1,"x"],"o":{"k":1}})");
  ASSERT_TRUE(v);
  EXPECT_TRUE((*v)["i"].is_number_integer());
  EXPECT_TRUE((*v)["u"].is_number_unsigned());
  EXPECT_TRUE((*v)["d"].is_number_float());
  EXPECT_EQ((*v)["s"], "é");
  EXPECT_EQ(
      v->dump(),
      R"({"i":-5,"u":18446744073709551615,"d":1.5,"s":"é","b":false,"n":null,"a":[1,"x"],"o":{"k":1}})");
}

TEST(ParseJson, DuplicateKeysLastWinsFirstPosition) {
  auto v = parse_json(R"({"a":1,"b":2,"a":3})");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->dump(), R"({"a":3,"b":2})");
}

TEST(ParseJson, RangeErrorsAreTyped) {
  EXPECT_EQ(parse_json("1e400").code(), errc::number_out_of_range);
  EXPECT_EQ(parse_json("-1e400").code(), errc::number_out_of_range);
  EXPECT_EQ(parse_json("18446744073709551616").code(), errc::number_out_of_range);
  EXPECT_EQ(parse_json("-9223372036854775809").code(), errc::number_out_of_range);
  EXPECT_TRUE(parse_json("-9223372036854775808"));
  EXPECT_EQ(parse_json("[1,2").code(), errc::malformed_json);
}

TEST(ParseJson, IgnoresTheGlobalLocale) {
  // A process whose locale writes decimal commas must still read 1.5 as 1.5.
  const char* old = std::setlocale(LC_NUMERIC, nullptr);
  std::string saved = old ? old : "C";
  if (std::setlocale(LC_NUMERIC, "de_DE.UTF-8") == nullptr) GTEST_SKIP() << "no de_DE locale";
  EXPECT_EQ(parse_json("1.5").value().get<double>(), 1.5);
  std::setlocale(LC_NUMERIC, saved.c_str());
}

TEST(ParseJson, WideIntegersThatAreExactDoublesReadAsDoubles) {
  // Go and Node write the double 1e20 as 100000000000000000000: read it back losslessly.
  auto v = parse_json("[100000000000000000000,-100000000000000000000,123456789012345680000]");
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_EQ((*v)[0].get<double>(), 1e20);
  EXPECT_EQ((*v)[1].get<double>(), -1e20);
  EXPECT_EQ((*v)[2].get<double>(), 123456789012345680000.0);
  EXPECT_EQ(to_canonical_json(*v).value(),
            "[100000000000000000000,-100000000000000000000,123456789012345680000]");
  // One digit off would be silently rounded: refused.
  EXPECT_EQ(parse_json("100000000000000000001").code(), errc::number_out_of_range);
}
