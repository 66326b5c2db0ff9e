// D4: re-emitting a received message changes only attempts and dead_letter.
#include <babelqueue/codec.hpp>
#include <babelqueue/dead_letter.hpp>

#include <gtest/gtest.h>

using namespace babelqueue;

namespace {

// Canonical, with numbers no double holds exactly, unknown keys and an unsorted order.
const std::string kOdd =
    R"({"zz_first":{"b":1,"a":[1.10,1E2,-0]},"attempts":1,"job":"urn:babel:orders:created",)"
    R"("data":{"z":12345678901234567890,"n":-98765432109876543210,"f":1.10,"e":1E2,"m":-0,)"
    R"("huge":1e400,"tiny":1e-400,"s":"\u2028\u001f","y":{"b":true,"a":null}},)"
    R"("meta":{"x-tenant":"acme","schema_version":1,"id":"i-1","queue":"orders","lang":"go","created_at":1},)"
    R"("trace_id":"t-1","ext":[{"k":"v"}]})";

}  // namespace

TEST(Lossless, CanonicalInputRoundTripsByteForByte) {
  auto env = decode(kOdd);
  ASSERT_TRUE(env) << env.error().message;
  EXPECT_EQ(encode(*env).value(), kOdd);
}

TEST(Lossless, RetryChangesOnlyAttempts) {
  auto env = decode(kOdd).value();
  env.set_attempts(2);
  std::string want = kOdd;
  want.replace(want.find(R"("attempts":1)"), 12, R"("attempts":2)");
  EXPECT_EQ(encode(env).value(), want);
}

TEST(Lossless, DeadLetterAppendsOneBlock) {
  auto env = decode(kOdd).value();
  env.set_attempts(3);
  auto dl = annotate(env, dead_letter_reason::failed, "orders", 3, "boom", "std::runtime_error");
  std::string out = encode(dl).value();
  std::string prefix = kOdd.substr(0, kOdd.size() - 1);
  prefix.replace(prefix.find(R"("attempts":1)"), 12, R"("attempts":3)");
  ASSERT_EQ(out.substr(0, prefix.size()), prefix);
  EXPECT_EQ(out.substr(prefix.size(), 38), R"(,"dead_letter":{"reason":"failed","err)");
  // And it decodes again, block readable, everything else identical.
  auto back = decode(out).value();
  auto block = back.dead_letter().value();
  EXPECT_EQ(block.reason, "failed");
  EXPECT_EQ(block.error, "boom");
  EXPECT_EQ(block.exception, "std::runtime_error");
  EXPECT_EQ(block.attempts, 3);
  EXPECT_EQ(block.lang, "cpp");
  EXPECT_EQ(back.data_text(), env.data_text());
}

TEST(Lossless, NonCanonicalInputIsMadeCanonicalWithTheSameValues) {
  std::string pretty = R"({
    "job" : "urn:babel:orders:created",
    "trace_id": "t\/1",
    "data": { "n" : 12345678901234567890 , "f" : 1.10, "s": "\u00e9\u000A\u001F\u2028 ", "list": [ 1 , 2 ] },
    "meta": { "schema_version": 1 },
    "attempts": 0
  })";
  auto env = decode(pretty);
  ASSERT_TRUE(env) << env.error().message;
  EXPECT_EQ(encode(*env).value(),
            "{\"job\":\"urn:babel:orders:created\",\"trace_id\":\"t/"
            "1\",\"data\":{\"n\":12345678901234567890,"
            "\"f\":1.10,\"s\":\"é\\n\\u001f\\u2028 "
            "\",\"list\":[1,2]},\"meta\":{\"schema_version\":1},\"attempts\":0}");
}

TEST(Lossless, RawLineSeparatorIsEscaped) {
  std::string body =
      "{\"job\":\"u\",\"trace_id\":\"t\",\"data\":{\"s\":\"a\xE2\x80\xA8"
      "b\"},\"meta\":{\"schema_version\":1},\"attempts\":0}";
  auto env = decode(body).value();
  EXPECT_EQ(env.data_text(), R"({"s":"a\u2028b"})");
  EXPECT_EQ(env.data().value()["s"],
            "a\xE2\x80\xA8"
            "b");
}

TEST(Lossless, MaterialisingDataIsStrictAboutRange) {
  auto env = decode(kOdd).value();
  auto data = env.data();
  ASSERT_FALSE(data);  // 1e400 and -98765432109876543210 fit nothing
  EXPECT_EQ(data.error().code, errc::number_out_of_range);
  auto small =
      decode(
          R"({"job":"u","trace_id":"t","data":{"z":12345678901234567890,"t":1e-400,"f":1.10},"meta":{"schema_version":1},"attempts":0})")
          .value();
  auto d = small.data().value();
  EXPECT_EQ(d["z"].get<std::uint64_t>(), 12345678901234567890ull);
  EXPECT_EQ(d["t"].get<double>(), 0.0);
  EXPECT_EQ(d["f"].get<double>(), 1.1);
}

TEST(Lossless, CanonicalizeKeepsNumberText) {
  EXPECT_EQ(canonicalize(" { \"b\" : 1E2 , \"a\" : [ -0 , 1.10 ] } ").value(),
            R"({"b":1E2,"a":[-0,1.10]})");
  EXPECT_EQ(canonicalize(R"("\ud83d\ude00")").value(), "\"\xF0\x9F\x98\x80\"");
  EXPECT_EQ(canonicalize("[1,]").code(), errc::malformed_json);
}

TEST(Lossless, RedriveClearsTheBlock) {
  auto env = decode(kOdd).value();
  auto dl = annotate(env, dead_letter_reason::poison, "orders", 1);
  dl.clear_dead_letter();
  EXPECT_EQ(encode(dl).value(), kOdd);
}
