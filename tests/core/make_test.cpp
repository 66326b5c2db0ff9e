// make() / continue_trace(): producer rules and the exact frame layout.
#include <babelqueue/codec.hpp>
#include <babelqueue/uuid.hpp>

#include <gtest/gtest.h>

#include <regex>
#include <type_traits>

using namespace babelqueue;

TEST(Make, WritesTheCanonicalFrame) {
  auto env =
      make("urn:babel:orders:created", {{"order_id", 1042}, {"amount", 99.9}}, {"orders", ""});
  ASSERT_TRUE(env);
  std::string text = encode(*env).value();
  std::regex shape(
      R"(\{"job":"urn:babel:orders:created","trace_id":"[0-9a-f-]{36}","data":\{"order_id":1042,"amount":99\.9\},)"
      R"("meta":\{"id":"[0-9a-f-]{36}","queue":"orders","lang":"cpp","schema_version":1,"created_at":\d{13}\},"attempts":0\})");
  EXPECT_TRUE(std::regex_match(text, shape)) << text;
  EXPECT_TRUE(is_uuid(env->id()));
  EXPECT_TRUE(is_uuid(env->trace_id()));
  EXPECT_NE(env->id(), env->trace_id());
  EXPECT_EQ(env->lang(), "cpp");
  EXPECT_EQ(env->attempts(), 0);
  EXPECT_TRUE(accepts(text));
  EXPECT_EQ(decode(text).value(), decode(text).value());
}

TEST(Make, TrimsUrnAndTraceAndDefaultsQueue) {
  auto env = make(" \t\v urn:babel:orders:created\r\n\f", json::object(), {"", "  trace-123 \t"});
  ASSERT_TRUE(env);
  EXPECT_EQ(env->urn(), "urn:babel:orders:created");
  EXPECT_EQ(env->trace_id(), "trace-123");
  EXPECT_EQ(env->queue(), "default");
}

// D3a: the producer trims ASCII white space only; Unicode spaces are part of the value.
TEST(Make, TrimsOnlyAsciiWhiteSpace) {
  auto env = make("\u00a0urn:babel:orders:created\u3000 ", json::object(), {"", " \u2003t\u2003 "});
  ASSERT_TRUE(env);
  EXPECT_EQ(env->urn(), "\u00a0urn:babel:orders:created\u3000");
  EXPECT_EQ(env->trace_id(), "\u2003t\u2003");
  // What make() wrote is what a consumer routes (the decoder does not trim either).
  auto back = decode(encode(*env).value()).value();
  EXPECT_EQ(back.urn(), env->urn());
  EXPECT_EQ(back.trace_id(), env->trace_id());
  // A URN of only U+00A0 is not blank: made, and accepted by the decoder.
  auto nbsp = make("\xC2\xA0", json::object());
  ASSERT_TRUE(nbsp) << nbsp.error().message;
  EXPECT_EQ(nbsp->urn(), "\xC2\xA0");
  EXPECT_TRUE(accepts(encode(*nbsp).value()));
  // A trace of only U+2003 is not blank: kept, not replaced by a fresh UUID.
  auto em = make("urn:x", json::object(), {"", "\xE2\x80\x83"});
  ASSERT_TRUE(em);
  EXPECT_EQ(em->trace_id(), "\xE2\x80\x83");
}

TEST(Make, BlankTraceMintsAFreshOne) {
  for (const char* t : {"", " \n ", "\t\v\f\r"}) {
    auto env = make("urn:x", json::object(), {"", t});
    ASSERT_TRUE(env);
    EXPECT_TRUE(is_uuid(env->trace_id())) << env->trace_id();
  }
}

TEST(Make, BlankUrnIsATypedError) {
  for (const char* u : {"", "   ", "\t\n", "\v\f\r "}) {
    auto env = make(u, json::object());
    ASSERT_FALSE(env);
    EXPECT_EQ(env.error().code, errc::empty_urn) << u;
  }
  EXPECT_THROW(make("", json::object()).value(), babelqueue::error);
}

TEST(Make, InvalidUtf8InUrnQueueOrTraceIsATypedErrorNamingTheField) {
  const std::string bad = "a\xC3(b";  // a lead byte followed by ASCII
  const std::string lone_surrogate = "x\xED\xA0\x80";
  for (const std::string& b : {bad, lone_surrogate, std::string("\xFF"), std::string(" \xC3 ")}) {
    auto urn = make("urn:babel:t:" + b, json::object());
    ASSERT_FALSE(urn) << b;
    EXPECT_EQ(urn.error().code, errc::invalid_utf8);
    EXPECT_EQ(urn.error().message, "URN is not valid UTF-8");
    auto queue = make("urn:babel:t:x", json::object(), {b, ""});
    ASSERT_FALSE(queue) << b;
    EXPECT_EQ(queue.error().code, errc::invalid_utf8);
    EXPECT_EQ(queue.error().message, "queue is not valid UTF-8");
    auto trace = make("urn:babel:t:x", json::object(), {"", b});
    ASSERT_FALSE(trace) << b;
    EXPECT_EQ(trace.error().code, errc::invalid_utf8);
    EXPECT_EQ(trace.error().message, "trace_id is not valid UTF-8");
  }
}

// When several inputs are wrong, the first of: URN not UTF-8, blank URN, data not an object,
// queue not UTF-8, trace id not UTF-8, then anything inside data.
TEST(Make, ErrorsComeInAFixedOrderWhenSeveralInputsAreWrong) {
  const std::string bad = "\xC3";
  const json not_object = json::array({1});
  const json bad_inside = {{"x", bad}};
  auto message = [](const result<envelope>& r) { return r ? std::string() : r.error().message; };
  EXPECT_EQ(message(make("urn:" + bad, not_object, {bad, bad})), "URN is not valid UTF-8");
  EXPECT_EQ(make("  ", not_object, {bad, bad}).code(), errc::empty_urn);
  EXPECT_EQ(make("urn:x", not_object, {bad, bad}).code(), errc::invalid_data);
  // Data given as text is read only when it is written, so that it is not an object is
  // found with "anything inside data".
  EXPECT_EQ(message(make("urn:x", json_text("[1]"), {bad, bad})), "queue is not valid UTF-8");
  EXPECT_EQ(make("urn:x", json_text("[1]")).code(), errc::invalid_data);
  EXPECT_EQ(message(make("urn:x", bad_inside, {bad, bad})), "queue is not valid UTF-8");
  EXPECT_EQ(message(make("urn:x", bad_inside, {"", bad})), "trace_id is not valid UTF-8");
  EXPECT_EQ(make("urn:x", bad_inside, {"", ""}).code(), errc::invalid_utf8);
  EXPECT_NE(message(make("urn:x", bad_inside, {"", ""})).find("data: "), std::string::npos);
}

TEST(Make, EscapesUserStringsInTheFrame) {
  auto env = make("urn:\"q\"", json::object(), {"q\\1", "t\n"});
  ASSERT_TRUE(env);
  std::string text = encode(*env).value();
  auto back = decode(text).value();
  EXPECT_EQ(back.urn(), "urn:\"q\"");
  EXPECT_EQ(back.queue(), "q\\1");
  EXPECT_EQ(env->queue(), "q\\1");
  EXPECT_EQ(env->urn(), "urn:\"q\"");
}

TEST(Make, ContinueTraceKeepsTraceAndMintsNewId) {
  auto inbound = make("urn:babel:orders:created", json::object(), {"orders", "trace-abc"}).value();
  auto next =
      continue_trace(inbound, "urn:babel:billing:invoice.requested", {{"order", 1}}, {"billing"});
  ASSERT_TRUE(next);
  EXPECT_EQ(next->trace_id(), "trace-abc");
  EXPECT_NE(next->id(), inbound.id());
  EXPECT_EQ(next->queue(), "billing");
}

// make() with `data` as JSON text: every number survives exactly, as decode() keeps it.
TEST(MakeFromText, KeepsEveryNumberExactly) {
  const std::string data =
      R"({"neg20":-12345678901234567890,"below_int64":-9223372036854775809,)"
      R"("u64max":18446744073709551615,"pos20":12345678901234567890,"big":123456789012345678901234567890,)"
      R"("f":1.10,"e":1E2,"huge":1e400,"nz":-0.0,"list":[-9223372036854775809,0.1e-3]})";
  auto env = make("urn:babel:t:numbers", json_text(data), {"q", "trace-1"});
  ASSERT_TRUE(env) << env.error().message;
  EXPECT_EQ(env->data_text(), data);
  const std::string wire = encode(*env).value();
  EXPECT_NE(wire.find(R"("data":)" + data + R"(,"meta")"), std::string::npos) << wire;
  auto back = decode(wire).value();
  EXPECT_EQ(back.data_text(), data);
  EXPECT_EQ(back.urn(), "urn:babel:t:numbers");
  EXPECT_EQ(back.trace_id(), "trace-1");
  // The json overload cannot hold these (parse_json refuses them): the reason for the text one.
  EXPECT_EQ(parse_json(R"({"a":-12345678901234567890})").code(), errc::number_out_of_range);
}

TEST(MakeFromText, WritesTheCanonicalFormAndReEscapesStrings) {
  const std::string data =
      "{ \"s\" : \"caf\\u00e9 \\/ \\u2028 \xE2\x80\xA9\",\n \"n\" : [ 1 , 2.50 ],"
      " \"k\\u0041\" : { } , \"a\" : 1, \"a\" : 2 }";
  auto env = make("urn:x", json_text(data));
  ASSERT_TRUE(env) << env.error().message;
  // As decode() writes a received data block: compact, D2 escapes, duplicates and order kept.
  EXPECT_EQ(env->data_text(),
            "{\"s\":\"caf\xC3\xA9 / \\u2028 \\u2029\",\"n\":[1,2.50],\"kA\":{},\"a\":1,\"a\":2}");
  EXPECT_EQ(env->data_text(), canonicalize(data).value());
  EXPECT_TRUE(accepts(encode(*env).value()));
}

TEST(MakeFromText, EmptyArrayReadsAsEmptyObject) {
  for (const char* v : {"[]", " [ ] ", "{}", "\n{ }\t"}) {
    auto env = make("urn:x", json_text(v));
    ASSERT_TRUE(env) << v;
    EXPECT_EQ(env->data_text(), "{}") << v;
  }
}

TEST(MakeFromText, RejectsWithTypedErrors) {
  for (const char* v : {"[1]", "null", "\"x\"", "1", "true", "[[]]", "-12345678901234567890"}) {
    EXPECT_EQ(make("urn:x", json_text(v)).code(), errc::invalid_data) << v;
  }
  for (const char* v : {"", " ", "{", "{} x", "{}{}", "{\"a\":NaN}", "{\"a\":01}", "{\"a\":1.}",
                        "{\"a\":\"\xFF\"}", "{\"a\":\"\\ud800\"}", "\xEF\xBB\xBF{}", "{'a':1}"}) {
    auto r = make("urn:x", json_text(v));
    EXPECT_EQ(r.code(), errc::malformed_json) << v;
    if (!r) {
      EXPECT_EQ(r.error().message.rfind("data: ", 0), 0u) << r.error().message;
    }
  }
  // The URN is checked first, as with json data.
  EXPECT_EQ(make("  ", json_text("[1]")).code(), errc::empty_urn);
}

TEST(MakeFromText, DepthStaysWithinWhatDecodeAccepts) {
  auto nested = [](std::size_t depth) {
    std::string s;
    for (std::size_t i = 1; i < depth; ++i) s += "{\"a\":";
    s += "{}";
    s.append(depth - 1, '}');
    return s;
  };
  auto deepest = make("urn:x", json_text(nested(max_data_text_depth)));
  ASSERT_TRUE(deepest) << deepest.error().message;
  EXPECT_TRUE(accepts(encode(*deepest).value()));
  EXPECT_EQ(make("urn:x", json_text(nested(max_data_text_depth + 1))).code(), errc::malformed_json);
}

TEST(MakeFromText, ContinueTraceTakesTextToo) {
  auto inbound = make("urn:a", json::object(), {"", "trace-abc"}).value();
  auto next = continue_trace(inbound, " urn:b ", json_text(R"({"id":-9223372036854775809})"));
  ASSERT_TRUE(next) << next.error().message;
  EXPECT_EQ(next->trace_id(), "trace-abc");
  EXPECT_EQ(next->urn(), "urn:b");
  EXPECT_EQ(next->data_text(), R"({"id":-9223372036854775809})");
}

TEST(MakeFromText, BracedDataStillMeansJson) {
  // json_text never takes a braced list: these pick the json overload, as before.
  auto one = make("urn:x", {{"a", 1}});
  ASSERT_TRUE(one);
  EXPECT_EQ(one->data_text(), R"({"a":1})");
  auto two = make("urn:x", {{"a", "b"}, {"c", 2}});
  ASSERT_TRUE(two);
  EXPECT_EQ(two->data_text(), R"({"a":"b","c":2})");
  EXPECT_EQ(make("urn:x", {}).value().data_text(), "{}");
  const std::string owned = R"({"n":1})";
  EXPECT_EQ(make("urn:x", json_text(owned)).value().data_text(), owned);
  static_assert(!std::is_convertible_v<std::string_view, json_text>);  // explicit only
}

// continue_trace() always carries the inbound trace: no options type it takes has a
// trace_id to pass (and make_options, which has one, is not accepted).
template <class Options>
concept continue_trace_takes = requires(const envelope& e, const json& d, const Options& o) {
  continue_trace(e, "urn:x", d, o);
};
template <class T>
concept has_trace_id = requires(T t) {
  t.trace_id;
};

TEST(Make, ContinueTraceOptionsHaveNoTraceId) {
  static_assert(continue_trace_takes<continue_options>);
  static_assert(!continue_trace_takes<make_options>);
  static_assert(!has_trace_id<continue_options>);
  static_assert(has_trace_id<make_options>);
  auto inbound = make("urn:a", json::object(), {"", "trace-1"}).value();
  EXPECT_EQ(continue_trace(inbound, "urn:b", json::object(), {.queue = "q"}).value().queue(), "q");
  EXPECT_EQ(continue_trace(inbound, "urn:b", json::object()).value().queue(), "default");
}

TEST(Make, ProducedEnvelopeRefusesUrnMember) {
  auto env = make("urn:x", json::object()).value();
  ASSERT_TRUE(env.set_extension("urn", "urn:y"));
  EXPECT_EQ(encode(env).code(), errc::forbidden_key);
}

TEST(Errors, WhatIsReasonAndMessage) {
  try {
    (void)make("", json::object()).value();
    FAIL() << "no throw";
  } catch (const babelqueue::error& e) {
    EXPECT_STREQ(e.what(), "empty_urn: a message needs a non-blank URN");
    EXPECT_EQ(e.code(), make_error_code(errc::empty_urn));
    EXPECT_EQ(e.reason(), "empty_urn");
  }
}

TEST(Errors, RvalueValueDoesNotDangle) {
  auto f = [] { return result<std::vector<int>>(std::vector<int>{1, 2, 3}); };
  int sum = 0;
  for (int x : f().value()) sum += x;
  EXPECT_EQ(sum, 6);
}
