// Bad input never crashes, hangs or passes silently: each case yields its D3 reason.
#include <babelqueue/codec.hpp>

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

using namespace babelqueue;

namespace {

std::string envelope_with_data(const std::string& data) {
  return R"({"job":"urn:babel:t:x","trace_id":"t","data":)" + data +
         R"(,"meta":{"schema_version":1},"attempts":0})";
}

void expect_malformed(const std::string& body, const char* label) {
  auto r = decode(body);
  ASSERT_FALSE(r) << label;
  EXPECT_EQ(r.error().code, errc::malformed_json) << label;
  EXPECT_FALSE(r.error().message.empty()) << label;
  EXPECT_EQ(check(body), errc::malformed_json) << label;
}

}  // namespace

TEST(BadInput, MalformedJson) {
  expect_malformed("", "empty");
  expect_malformed("{", "unterminated object");
  expect_malformed(R"({"job":"x",})", "trailing comma");
  expect_malformed(R"({"job" "x"})", "missing colon");
  expect_malformed(R"({'job':'x'})", "single quotes");
  expect_malformed(R"({"job":"x"} // c)", "comment");
  expect_malformed(R"({"a":01})", "leading zero");
  expect_malformed(R"({"a":1.})", "bare fraction dot");
  expect_malformed(R"({"a":.5})", "leading dot");
  expect_malformed(R"({"a":+1})", "plus sign");
  expect_malformed(R"({"a":1e})", "bare exponent");
  expect_malformed(R"({"a":tru})", "bad literal");
  expect_malformed("{\"a\":\"x\ny\"}", "raw newline in string");
  expect_malformed(R"({"a":"\x"})", "bad escape");
  expect_malformed(R"({"a":"\u12"})", "short unicode escape");
}

TEST(BadInput, TopLevelNotAnObject) {
  for (const char* body : {"[]", "\"x\"", "1", "null", "true", "[{}]"})
    expect_malformed(body, body);
}

TEST(BadInput, TrailingData) {
  expect_malformed(envelope_with_data("{}") + "x", "garbage after");
  expect_malformed(envelope_with_data("{}") + "{}", "second document");
  // Trailing white space is allowed by RFC 8259.
  EXPECT_EQ(check(envelope_with_data("{}") + " \n"), errc::ok);
}

TEST(BadInput, ByteOrderMark) {
  expect_malformed("\xEF\xBB\xBF" + envelope_with_data("{}"), "BOM");
}

TEST(BadInput, InvalidUtf8) {
  expect_malformed(envelope_with_data("{\"s\":\"\xC3\"}"), "truncated sequence");
  expect_malformed(envelope_with_data("{\"s\":\"\xC0\xAF\"}"), "overlong");
  expect_malformed(envelope_with_data("{\"s\":\"\xED\xA0\x80\"}"), "encoded surrogate");
  expect_malformed(envelope_with_data("{\"s\":\"\xF4\x90\x80\x80\"}"), "above U+10FFFF");
  expect_malformed(envelope_with_data("{\"s\":\"\xFF\"}"), "0xFF");
  expect_malformed(envelope_with_data("{\"\x80\":1}"), "invalid key");
}

TEST(BadInput, LoneSurrogates) {
  expect_malformed(envelope_with_data(R"({"s":"\ud800"})"), "lone high");
  expect_malformed(envelope_with_data(R"({"s":"\udc00"})"), "lone low");
  expect_malformed(envelope_with_data(R"({"s":"\ud800\u0041"})"), "high + non-low");
  auto ok = decode(envelope_with_data(R"({"s":"\ud83d\ude00"})"));
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->data_text(), "{\"s\":\"\xF0\x9F\x98\x80\"}");  // a pair becomes the raw character
}

TEST(BadInput, NanAndInfinityTokens) {
  for (const char* v : {"NaN", "Infinity", "-Infinity", "nan", "inf"}) {
    expect_malformed(envelope_with_data(std::string("{\"x\":") + v + "}"), v);
  }
}

TEST(BadInput, WrongTypesInEveryFrameField) {
  const std::string base =
      R"({"job":"u","trace_id":"t","data":{},"meta":{"schema_version":1},"attempts":0})";
  struct c {
    const char* from;
    const char* to;
    errc want;
  } cases[] = {
      {R"("job":"u")", R"("job":[])", errc::missing_urn},
      {R"("job":"u")", R"("job":{})", errc::missing_urn},
      {R"("job":"u")", R"("job":false)", errc::missing_urn},
      {R"("trace_id":"t")", R"("trace_id":[])", errc::missing_trace_id},
      {R"("data":{})", R"("data":"{}")", errc::invalid_data},
      {R"("meta":{"schema_version":1})", R"("meta":[])", errc::missing_meta},
      {R"("meta":{"schema_version":1})", R"("meta":"m")", errc::missing_meta},
      {R"("meta":{"schema_version":1})", R"("meta":null)", errc::missing_meta},
      {R"("attempts":0)", R"("attempts":[0])", errc::invalid_attempts},
      {R"("attempts":0)", R"("attempts":{})", errc::invalid_attempts},
  };
  for (const auto& k : cases) {
    std::string body = base;
    body.replace(body.find(k.from), std::string(k.from).size(), k.to);
    EXPECT_EQ(check(body), k.want) << body;
  }
}

TEST(BadInput, IntegersBeyond64Bits) {
  // In data: valid JSON, relayed verbatim; materialising it is a typed error.
  auto env = decode(envelope_with_data(R"({"n":123456789012345678901234567890})"));
  ASSERT_TRUE(env);
  auto data = env->data();
  ASSERT_FALSE(data);
  EXPECT_EQ(data.error().code, errc::number_out_of_range);
  // In a frame field: rejected.
  EXPECT_EQ(
      check(
          R"({"job":"u","trace_id":"t","data":{},"meta":{"schema_version":1},"attempts":18446744073709551616})"),
      errc::invalid_attempts);
}

TEST(BadInput, OneMebibyteString) {
  std::string big(1 << 20, 'a');
  auto env = decode(envelope_with_data("{\"s\":\"" + big + "\"}"));
  ASSERT_TRUE(env);
  EXPECT_EQ(env->data().value()["s"].get<std::string>().size(), big.size());
}

TEST(BadInput, TenMebibyteBody) {
  std::string items;
  items.reserve(11u << 20);
  items += "[";
  while (items.size() < (10u << 20)) items += R"({"sku":"A-1","qty":2,"p":1.5},)";
  items.back() = ']';
  auto env = decode(envelope_with_data("{\"items\":" + items + "}"));
  ASSERT_TRUE(env) << env.error().message;
  EXPECT_GT(env->data_text().size(), 10u << 20);
  decode_options small;
  small.max_bytes = 1 << 20;
  auto refused = decode(envelope_with_data("{\"items\":" + items + "}"), small);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, errc::malformed_json);
}

TEST(BadInput, DeepNestingIsCappedNotAStackOverflow) {
  const int depth = 100000;
  std::string data(depth, '[');
  data += std::string(depth, ']');
  auto env = decode(envelope_with_data("{\"x\":" + data + "}"));
  ASSERT_FALSE(env);
  EXPECT_EQ(env.error().code, errc::malformed_json);
  EXPECT_NE(env.error().message.find("nesting"), std::string::npos);
  std::string objects;
  for (int i = 0; i < depth; ++i) objects += "{\"a\":";
  EXPECT_EQ(check(envelope_with_data(objects)), errc::malformed_json);  // unterminated too
  EXPECT_FALSE(parse_json(data));
  EXPECT_FALSE(canonicalize(data));
}

TEST(BadInput, NestingWithinLimitIsFine) {
  std::string data = "{\"x\":" + std::string(400, '[') + std::string(400, ']') + "}";
  EXPECT_TRUE(decode(envelope_with_data(data)));
}

TEST(BadInput, EmbeddedNulBytes) {
  std::string body = envelope_with_data("{}");
  body.insert(body.size() - 1, std::string("\0", 1));
  expect_malformed(body, "NUL after value");
  expect_malformed(envelope_with_data(std::string("{\"s\":\"a\0b\"}", 12)), "raw NUL in string");
  EXPECT_TRUE(decode(envelope_with_data(R"({"s":"a\u0000b"})")));
}

// The depth cap counts every level, the envelope's own two included (root object, `data`):
// with max_depth N, `data` may hold N - 2 more levels and not one more; after each
// closing bracket the validator is back in the right kind of container (objects and arrays
// alternate here, so a wrong kind after a close would reject `,"k":` or `,1`).
TEST(BadInput, NestingCapIsExactAndContainerKindsAreRestored) {
  for (std::size_t cap : {8u, 64u, 65u, 200u}) {
    decode_options options;
    options.max_depth = cap;
    auto nested = [](std::size_t levels) {  // `levels` containers inside `data`
      std::string open, close;
      for (std::size_t i = 0; i < levels; ++i) {
        open += i % 2 == 0 ? "[1," : "{\"k\":";
        close.insert(0, i % 2 == 0 ? ",2]" : ",\"z\":3}");
      }
      return "{\"x\":" + open + "0" + close + "}";
    };
    // The root object and `data` (nested()'s own object) are two levels.
    auto fits = decode(envelope_with_data(nested(cap - 2)), options);
    EXPECT_TRUE(fits) << cap << ": " << (fits ? "" : fits.error().message);
    auto deeper = decode(envelope_with_data(nested(cap - 1)), options);
    ASSERT_FALSE(deeper) << cap;
    EXPECT_NE(deeper.error().message.find("nesting"), std::string::npos) << cap;
  }
}

namespace {

// Every offset of compact JSON `text` between two tokens (outside strings and numbers).
std::vector<std::size_t> token_boundaries(const std::string& text) {
  std::vector<std::size_t> at;
  bool in_string = false;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    const char before = i > 0 ? text[i - 1] : '\0';
    const char after = i < text.size() ? text[i] : '\0';
    const bool structural_near =
        std::string_view("{}[],:").find(before) != std::string_view::npos ||
        std::string_view("{}[],:").find(after) != std::string_view::npos;
    if (!in_string && (i == 0 || i == text.size() || structural_near)) at.push_back(i);
    if (i < text.size() && text[i] == '"' && (i == 0 || text[i - 1] != '\\'))
      in_string = !in_string;
  }
  return at;
}

}  // namespace

// The validator of `data` tests each token first and skips white space only when that test
// fails: white space at every place RFC 8259 allows it is accepted (and canonicalised away),
// and every other byte below ' ' at those places is rejected.
TEST(BadInput, WhiteSpaceBetweenEveryTwoTokensOfData) {
  const std::string compact =
      R"({"a":[1,-2.5e3,"x\"y",{"b":null,"c":[true,false,[]],"d":{}}],"e":"é","f":[{}]})";
  ASSERT_TRUE(decode(envelope_with_data(compact)));
  for (std::size_t at : token_boundaries(compact)) {
    for (const char* space : {" ", "\t", "\n", "\r", " \n\t "}) {
      const std::string data = compact.substr(0, at) + space + compact.substr(at);
      auto r = decode(envelope_with_data(data));
      ASSERT_TRUE(r) << "white space at " << at << ": " << r.error().message;
      EXPECT_EQ(r->data_text(), compact) << "white space at " << at;
    }
    for (const char control : {'\x01', '\x0b', '\x0c', '\x1f'}) {
      const std::string data = compact.substr(0, at) + control + compact.substr(at);
      expect_malformed(envelope_with_data(data), "a control byte between tokens");
    }
  }
}
