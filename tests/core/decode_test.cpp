// D3: the accept gate, its reasons and their order, URN resolution, forbidden keys.
#include <babelqueue/codec.hpp>

#include <gtest/gtest.h>

#include <string>

using namespace babelqueue;

namespace {

const std::string kValid =
    R"({"job":"urn:babel:orders:created","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b","data":{"order_id":1042},"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567","queue":"orders","lang":"php","schema_version":1,"created_at":1749132727000},"attempts":0})";

// kValid with one textual replacement.
std::string with(const std::string& from, const std::string& to) {
  std::string s = kValid;
  auto at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  s.replace(at, from.size(), to);
  return s;
}

}  // namespace

TEST(Decode, AcceptsCanonicalEnvelopeAndExposesFields) {
  auto env = decode(kValid);
  ASSERT_TRUE(env) << env.error().message;
  EXPECT_EQ(env->urn(), "urn:babel:orders:created");
  EXPECT_EQ(env->trace_id(), "7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b");
  EXPECT_EQ(env->id(), "f1e2d3c4-b5a6-4789-90ab-cdef01234567");
  EXPECT_EQ(env->queue(), "orders");
  EXPECT_EQ(env->lang(), "php");
  EXPECT_EQ(env->created_at(), 1749132727000);
  EXPECT_EQ(env->attempts(), 0);
  EXPECT_EQ(env->data_text(), R"({"order_id":1042})");
  EXPECT_EQ(env->data().value()["order_id"], 1042);
  EXPECT_FALSE(env->has_dead_letter());
  EXPECT_EQ(encode(*env).value(), kValid);
}

TEST(Decode, RvalueOverloadKeepsBytes) {
  std::string body = kValid;
  auto env = decode(std::move(body));
  ASSERT_TRUE(env);
  EXPECT_EQ(encode(*env).value(), kValid);
}

TEST(Decode, ReasonsFollowPhpOrder) {
  // Everything wrong at once: the first reason in PHP's order wins.
  EXPECT_EQ(check(R"({"data":1,"meta":2,"attempts":"x"})"), errc::missing_urn);
  EXPECT_EQ(check(R"({"job":"u","data":1,"meta":2})"), errc::missing_meta);
  EXPECT_EQ(check(R"({"job":"u","data":1,"meta":{"schema_version":2}})"),
            errc::unsupported_schema_version);
  EXPECT_EQ(check(R"({"job":"u","data":1,"meta":{"schema_version":1}})"), errc::invalid_data);
  EXPECT_EQ(check(R"({"job":"u","data":{},"meta":{"schema_version":1}})"), errc::missing_trace_id);
  EXPECT_EQ(check(R"({"job":"u","trace_id":"t","data":{},"meta":{"schema_version":1}})"),
            errc::invalid_attempts);
  EXPECT_EQ(
      check(R"({"job":"u","trace_id":"t","data":{},"meta":{"schema_version":1},"attempts":0})"),
      errc::ok);
}

TEST(Decode, UrnResolution) {
  // blank job (empty or ASCII white space) falls back to urn; non-string job counts as
  // absent; the routed value is never trimmed (D3a).
  auto a = decode(with(R"("job":"urn:babel:orders:created")", R"("job":"  ","urn":" urn:x ")"));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->urn(), " urn:x ");
  auto b = decode(with(R"("job":"urn:babel:orders:created")", R"("job":123,"urn":"urn:y")"));
  ASSERT_TRUE(b);
  EXPECT_EQ(b->urn(), "urn:y");
  auto c = decode(with(R"("job":"urn:babel:orders:created")", R"("job":"\u00a0urn:z\u3000")"));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->urn(), "\u00a0urn:z\u3000");  // NBSP, ideographic space: kept, not trimmed
  EXPECT_EQ(check(with(R"("job":"urn:babel:orders:created")", R"("job":"")")), errc::missing_urn);
  EXPECT_EQ(check(with(R"("job":"urn:babel:orders:created")", R"("job":null,"urn":7)")),
            errc::missing_urn);
}

// D3a: "blank" is empty or ASCII white space only; Unicode spaces are content.
TEST(Decode, BlankIsAsciiWhiteSpaceOnly) {
  const std::string job = R"("job":"urn:babel:orders:created")";
  // A job of U+00A0 alone: escaped in the JSON text, or as raw UTF-8 bytes. Both accepted,
  // and the URN is that one character (Python/PHP/Go accept it too).
  for (const char* v : {R"("job":"\u00a0")", "\"job\":\"\xC2\xA0\""}) {
    auto env = decode(with(job, v));
    ASSERT_TRUE(env) << v << ": " << env.error().message;
    EXPECT_EQ(env->urn(), "\xC2\xA0") << v;
  }
  // With a `urn` alias beside it, the U+00A0 job still wins (peers route to the job); the
  // alias is dropped as usual.
  for (const char* v : {R"("job":"\u00a0","urn":"urn:babel:other:thing")",
                        "\"job\":\"\xC2\xA0\",\"urn\":\"urn:babel:other:thing\""}) {
    auto env = decode(with(job, v));
    ASSERT_TRUE(env) << v;
    EXPECT_EQ(env->urn(), "\xC2\xA0") << v;
    EXPECT_EQ(env->dropped_keys(), std::vector<std::string>{"/urn"}) << v;
  }
  // Other Unicode spaces are not blank either (U+2003, U+3000, U+2028, NEL).
  for (const char* v : {R"("job":"\u2003")", R"("job":"\u3000")", R"("job":"\u2028")",
                        R"("job":"\u0085")", "\"job\":\"\xE2\x80\x83\""}) {
    EXPECT_EQ(check(with(job, v)), errc::ok) << v;
  }
  // Every ASCII white-space character is blank, raw or escaped: the alias is used ...
  for (const char* v : {R"("job":" ","urn":"urn:y")", R"("job":"\t\n\r\f","urn":"urn:y")",
                        R"("job":"\u000b","urn":"urn:y")", R"("job":"\u0020\u0009","urn":"urn:y")",
                        R"("job":"\u000C\u000D","urn":"urn:y")"}) {
    auto env = decode(with(job, v));
    ASSERT_TRUE(env) << v;
    EXPECT_EQ(env->urn(), "urn:y") << v;
  }
  // ... and without one the message has no URN.
  for (const char* v : {R"("job":"   ")", R"("job":"\u000b")", R"("job":"\t \n")",
                        R"("job":"","urn":" \u000c ")"}) {
    EXPECT_EQ(check(with(job, v)), errc::missing_urn) << v;
  }
  // Only an alias, of U+2003: that is the URN.
  auto alias = decode(with(job, R"("urn":"\u2003")"));
  ASSERT_TRUE(alias);
  EXPECT_EQ(alias->urn(), "\u2003");
}

// D3a: the routed URN is the received string exactly, padding included.
TEST(Decode, RoutedUrnIsExactlyAsReceived) {
  const std::string job = R"("job":"urn:babel:orders:created")";
  auto padded = decode(with(job, R"("job":"  urn:babel:t:x  ")"));
  ASSERT_TRUE(padded);
  EXPECT_EQ(padded->urn(), "  urn:babel:t:x  ");
  auto escaped = decode(with(job, R"("job":"\t urn:babel:t:x\u0020")"));
  ASSERT_TRUE(escaped);
  EXPECT_EQ(escaped->urn(), "\t urn:babel:t:x ");
  auto alias = decode(with(job, R"("urn":" urn:babel:t:x\n")"));
  ASSERT_TRUE(alias);
  EXPECT_EQ(alias->urn(), " urn:babel:t:x\n");
  // Re-emitted as received (D4), canonically escaped.
  EXPECT_NE(encode(*padded).value().find(R"("job":"  urn:babel:t:x  ")"), std::string::npos);
  EXPECT_NE(encode(*escaped).value().find(R"("job":"\t urn:babel:t:x ")"), std::string::npos);
}

TEST(Decode, SchemaVersionMustBeIntegerOne) {
  for (const char* v : {"2", "1.0", "\"1\"", "true", "1e0", "-1", "0", "null", "{}"}) {
    EXPECT_EQ(check(with(R"("schema_version":1)", std::string(R"("schema_version":)") + v)),
              errc::unsupported_schema_version)
        << v;
  }
  EXPECT_EQ(check(with(R"("schema_version":1,)", "")), errc::unsupported_schema_version);
}

TEST(Decode, DataMustBeObjectButEmptyArrayReadsAsObject) {
  auto env = decode(with(R"({"order_id":1042})", "[ ]"));
  ASSERT_TRUE(env);
  EXPECT_EQ(env->data_text(), "{}");
  EXPECT_NE(encode(*env).value().find(R"("data":{})"), std::string::npos);
  for (const char* v : {"[1,2]", "null", "\"x\"", "1", "true"}) {
    EXPECT_EQ(check(with(R"({"order_id":1042})", v)), errc::invalid_data) << v;
  }
}

TEST(Decode, TraceIdMustBeNonBlankString) {
  const std::string trace = R"("7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b")";
  for (const char* v :
       {R"("")", R"("   ")", "null", "7", R"("\t\n")", R"("\u000b\u0020")", R"("\f\r")"}) {
    EXPECT_EQ(check(with(trace, v)), errc::missing_trace_id) << v;
  }
  // Not a UUID is fine (peers' tests use "trace-123").
  EXPECT_EQ(check(with(trace, R"("trace-123")")), errc::ok);
  // Unicode white space is not blank (D3a): U+2003, U+3000, U+00A0, escaped or raw.
  for (const char* v : {R"("\u2003")", R"("\t\u3000")", R"("\u00a0")", "\"\xE2\x80\x83\""}) {
    EXPECT_EQ(check(with(trace, v)), errc::ok) << v;
  }
  auto em = decode(with(trace, R"("\u2003")"));
  ASSERT_TRUE(em);
  EXPECT_EQ(em->trace_id(), "\xE2\x80\x83");
}

// D3a/D4: trace_id is kept exactly as received, padding included, and re-emitted as such.
TEST(Decode, TraceIdIsKeptExactlyAsReceived) {
  const std::string trace = R"("7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b")";
  auto env = decode(with(trace, R"(" trace-1\t")"));
  ASSERT_TRUE(env);
  EXPECT_EQ(env->trace_id(), " trace-1\t");
  env->set_attempts(env->attempts() + 1);  // a retry re-emit
  std::string out = encode(*env).value();
  EXPECT_NE(out.find(R"("trace_id":" trace-1\t")"), std::string::npos) << out;
  EXPECT_EQ(decode(out).value().trace_id(), " trace-1\t");
}

TEST(Decode, AttemptsMustBeInteger) {
  for (const char* v : {"1.0", "\"1\"", "null", "true", "1e2", "99999999999999999999"}) {
    EXPECT_EQ(check(with(R"("attempts":0)", std::string(R"("attempts":)") + v)),
              errc::invalid_attempts)
        << v;
  }
  auto neg = decode(with(R"("attempts":0)", R"("attempts":-3)"));
  ASSERT_TRUE(neg);
  EXPECT_EQ(neg->attempts(), -3);
}

TEST(Decode, DuplicateKeysLastWins) {
  auto env = decode(with(R"("attempts":0)", R"("attempts":0,"attempts":5)"));
  ASSERT_TRUE(env);
  EXPECT_EQ(env->attempts(), 5);
  std::string out = encode(*env).value();
  EXPECT_EQ(out.find("\"attempts\""), out.rfind("\"attempts\""));  // written once
  auto meta = decode(with(R"("queue":"orders")", R"("queue":"a","queue":"b")"));
  ASSERT_TRUE(meta);
  EXPECT_EQ(meta->queue(), "b");
}

TEST(Decode, ForbiddenKeysAreDroppedWithWarning) {
  std::vector<std::string> warnings;
  decode_options opts;
  opts.on_warning = [&](std::string_view w) { warnings.emplace_back(w); };
  std::string body = with(R"("attempts":0)", R"("attempts":0,"timestamp":123)");
  body = body.replace(body.find(R"("queue":"orders")"), 16,
                      R"("queue":"orders","max_retries":3,"attempts":1,"source":"x","ts":9)");
  auto env = decode(body, opts);
  ASSERT_TRUE(env) << env.error().message;
  std::string out = encode(*env).value();
  EXPECT_EQ(out, kValid);
  EXPECT_EQ(env->dropped_keys(),
            (std::vector<std::string>{"/meta/max_retries", "/meta/attempts", "/meta/source",
                                      "/meta/ts", "/timestamp"}));  // document order
  EXPECT_EQ(warnings.size(), 5u);
}

TEST(Decode, UrnAliasDroppedWhenJobPresentButKeptWhenAlone) {
  auto both = decode(with(R"("job":"urn:babel:orders:created")",
                          R"("job":"urn:babel:orders:created","urn":"urn:other")"));
  ASSERT_TRUE(both);
  EXPECT_EQ(encode(*both).value(), kValid);
  EXPECT_EQ(both->dropped_keys(), std::vector<std::string>{"/urn"});
  std::string alias = with(R"("job":)", R"("urn":)");
  auto only = decode(alias);
  ASSERT_TRUE(only);
  EXPECT_EQ(only->urn(), "urn:babel:orders:created");
  EXPECT_EQ(encode(*only).value(), alias);  // a relay keeps the alias (D4)
}

TEST(Decode, OptionalMetaFieldsMayBeAbsentOrOddlyTyped) {
  auto env = decode(
      R"({"job":"u","trace_id":"t","data":{},"meta":{"schema_version":1,"id":5,"created_at":"x"},"attempts":0})");
  ASSERT_TRUE(env);
  EXPECT_EQ(env->id(), "");
  EXPECT_EQ(env->queue(), "");
  EXPECT_FALSE(env->created_at().has_value());
}

TEST(Decode, EscapedFieldsAreUnescaped) {
  auto env = decode(
      R"({"job":"urn:\u0061","trace_id":"t\"1","data":{},"meta":{"schema_version":1,"queue":"q\/1"},"attempts":0})");
  ASSERT_TRUE(env);
  EXPECT_EQ(env->urn(), "urn:a");
  EXPECT_EQ(env->trace_id(), "t\"1");
  EXPECT_EQ(env->queue(), "q/1");
  EXPECT_EQ(
      encode(*env).value(),
      R"({"job":"urn:a","trace_id":"t\"1","data":{},"meta":{"schema_version":1,"queue":"q/1"},"attempts":0})");
}

// The frame scanner reads plainly written known keys ("job":, "meta":, "id": ...) in place
// and leaves every other spelling to the general scanner: escaped, spaced and look-alike
// keys must decode exactly as before, and no prefix of a body may read past its end.
TEST(Decode, KnownKeysDecodeAlikeHoweverTheyAreWritten) {
  const std::string plain =
      R"({"job":"urn:x","trace_id":"t","data":{"k":1},"meta":{"id":"i","queue":"q","lang":"go","schema_version":1,"created_at":5},"attempts":2})";
  const std::string escaped =
      R"({"j\u006fb":"urn:x","trace\u005fid":"t","d\u0061ta":{"k":1},"m\u0065ta":{"\u0069d":"i","queu\u0065":"q","l\u0061ng":"go","schema_versio\u006e":1,"created\u005fat":5},"attempt\u0073":2})";
  const std::string spaced =
      "{ \"job\" : \"urn:x\" ,\n\"trace_id\"\t:\"t\", \"data\" :{\"k\":1},\"meta\" : { \"id\" "
      ":\"i\","
      "\"queue\": \"q\",\"lang\" :\"go\",\"schema_version\" : 1 ,\"created_at\":5 } ,\"attempts\" "
      ":2 }";
  for (const std::string& body : {plain, escaped, spaced}) {
    auto env = decode(body);
    ASSERT_TRUE(env) << body << ": " << env.error().message;
    EXPECT_EQ(env->urn(), "urn:x") << body;
    EXPECT_EQ(env->trace_id(), "t") << body;
    EXPECT_EQ(env->id(), "i") << body;
    EXPECT_EQ(env->queue(), "q") << body;
    EXPECT_EQ(env->lang(), "go") << body;
    EXPECT_EQ(env->created_at(), 5) << body;
    EXPECT_EQ(env->attempts(), 2) << body;
    EXPECT_EQ(env->data_text(), R"({"k":1})") << body;
    EXPECT_EQ(encode(*env).value(), plain) << body;
  }
  // Keys that start like known ones are extensions, never the field they resemble.
  auto look_alike = decode(
      R"({"jobs":"urn:no","job":"urn:x","trace_idx":"no","trace_id":"t","data":{},"meta_":{},"meta":{"idx":"no","id":"i","schema_version":1,"schema_versions":2},"attempts":0,"attempts_":1})");
  ASSERT_TRUE(look_alike) << look_alike.error().message;
  EXPECT_EQ(look_alike->urn(), "urn:x");
  EXPECT_EQ(look_alike->trace_id(), "t");
  EXPECT_EQ(look_alike->id(), "i");
  EXPECT_EQ(look_alike->attempts(), 0);
  EXPECT_EQ(look_alike->member("jobs").value_or(""), R"("urn:no")");
  EXPECT_EQ(look_alike->member("attempts_").value_or(""), "1");
  // Every proper prefix is malformed (a known key cut anywhere included), never a crash or
  // a read past the end (the sanitizer builds run this on exactly-sized copies).
  for (std::size_t n = 0; n < plain.size(); ++n) {
    const std::string prefix = plain.substr(0, n);
    auto cut = decode(prefix);
    ASSERT_FALSE(cut) << prefix;
    EXPECT_EQ(cut.error().code, errc::malformed_json) << prefix;
  }
}
